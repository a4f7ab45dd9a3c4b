"""Graph stores: one ``GraphStore`` interface, an embedded FalkorDB store and a Neo4j store."""

from __future__ import annotations

from kgp.settings import Settings, StoreKind
from kgp.stores.base import GraphStore
from kgp.stores.falkor import FalkorStore
from kgp.stores.model import (
    DocumentGraph,
    DocumentRecord,
    DocumentSummary,
    EdgeKind,
    GraphCounts,
    Neighbour,
    PassageRecord,
    SearchHit,
    SimilarEdge,
    TableRecord,
)
from kgp.stores.neo4j import Neo4jStore
from kgp.stores.tracer import QueryEvent, TraceLog, Tracer

__all__ = [
    "DocumentGraph",
    "DocumentRecord",
    "DocumentSummary",
    "EdgeKind",
    "FalkorStore",
    "GraphCounts",
    "GraphStore",
    "Neighbour",
    "Neo4jStore",
    "PassageRecord",
    "QueryEvent",
    "SearchHit",
    "SimilarEdge",
    "TableRecord",
    "TraceLog",
    "Tracer",
    "store_from_settings",
]


def store_from_settings(settings: Settings, tracer: Tracer | None = None) -> GraphStore:
    """The configured store, constructed but not opened."""
    if settings.store is StoreKind.NEO4J:
        return Neo4jStore(
            uri=settings.neo4j_uri,
            user=settings.neo4j_user,
            password=settings.neo4j_password.get_secret_value(),
            database=settings.neo4j_database,
            tracer=tracer,
        )
    return FalkorStore(data_dir=settings.data_dir, graph=settings.graph, tracer=tracer)

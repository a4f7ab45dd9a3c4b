"""Graph stores: one ``GraphStore`` interface, an embedded FalkorDB store and a Neo4j store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgp.settings import Settings, StoreKind
from kgp.stores.base import GraphStore
from kgp.stores.falkordb import FalkorStore
from kgp.stores.model import (
    DocumentGraph,
    DocumentRecord,
    DocumentSummary,
    EdgeKind,
    GraphCounts,
    Neighbour,
    PageContent,
    PagePassage,
    PageTable,
    PassageRecord,
    PassageVector,
    SearchHit,
    SimilarEdge,
    StoredPassage,
    StoredTable,
    TableRecord,
)
from kgp.stores.tracer import QueryEvent, TraceLog, Tracer

if TYPE_CHECKING:
    from kgp.stores.neo4j import Neo4jStore

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
    "PageContent",
    "PagePassage",
    "PageTable",
    "PassageRecord",
    "PassageVector",
    "QueryEvent",
    "SearchHit",
    "SimilarEdge",
    "StoredPassage",
    "StoredTable",
    "TableRecord",
    "TraceLog",
    "Tracer",
    "store_from_settings",
]


def store_from_settings(settings: Settings, tracer: Tracer | None = None) -> GraphStore:
    """The configured store, constructed but not opened."""
    if settings.store is StoreKind.NEO4J:
        from kgp.stores.neo4j import Neo4jStore

        return Neo4jStore(
            uri=settings.neo4j_uri,
            user=settings.neo4j_user,
            password=settings.neo4j_password.get_secret_value(),
            database=settings.neo4j_database,
            tracer=tracer,
        )
    return FalkorStore(
        data_dir=settings.data_dir,
        graph=settings.graph,
        tracer=tracer,
        load_timeout=settings.load_timeout,
    )


def __getattr__(name: str) -> Any:
    # the Neo4j driver is imported only by those who use it
    if name == "Neo4jStore":
        from kgp.stores.neo4j import Neo4jStore

        return Neo4jStore
    raise AttributeError(f"module 'kgp.stores' has no attribute {name!r}")

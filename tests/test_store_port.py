"""The store port stays narrow: what retrieval, ingest and the server may call on a store is the
list ``kgp/stores/base.py`` opens with, and a store adds no method of its own beside it (what
only the k-NN linker or the upkeep asks lives on ``store.links`` and ``store.upkeep``)."""

from __future__ import annotations

import inspect

from kgp.stores import FalkorStore, GraphStore
from kgp.stores.linking import LinkQueries
from kgp.stores.maintenance import Upkeep

PORT = {
    # lifecycle and schema
    "open", "close", "describe", "ensure_schema", "vector_dimension", "clear",
    # who reads, and the one way to the database
    "reading_as", "caller_now", "run",
    # documents
    "write_documents", "delete_document", "set_document_groups", "list_documents",
    # reads
    "fetch_nodes", "neighbours", "passage_texts", "passage_vectors", "document_passages",
    "document_pages", "page_contents", "tables",
    # search
    "vector_search", "nearest", "fulltext_search", "readable_passages", "forget_counts",
    # counts and traces
    "counts", "save_trace", "traces", "trace",
    # helpers: call counting (tests, benches) and news of a long wait
    "counting", "waiting",
}  # fmt: skip


def methods(cls: type) -> set[str]:
    return {
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and inspect.isfunction(value)
    }


def test_the_port_is_the_documented_list() -> None:
    assert methods(GraphStore) == PORT
    documented = inspect.getmodule(GraphStore).__doc__ or ""
    listed = PORT - {"run", "counting", "waiting", "forget_counts"}  # (helpers, named elsewhere)
    assert {name for name in listed if f"``{name}``" not in documented} == set()


def test_stores_add_no_method_beside_the_port() -> None:
    from kgp.stores.neo4j import Neo4jStore

    for store in (FalkorStore, Neo4jStore):
        assert methods(store) == PORT, store.__name__


def test_capabilities_are_their_own_small_interfaces() -> None:
    assert not methods(LinkQueries) & PORT and not methods(Upkeep) & PORT
    assert len(methods(LinkQueries)) <= 16 and len(methods(Upkeep)) <= 12

"""Covered reads: a retrieval by a caller who may read every document skips the document checks.

Every read query checks that each passage it returns belongs to a document the caller may read.
When every document holds one of the caller's groups (a single-team graph, or documents all
``public``) those checks change nothing, yet they cost a document lookup per passage (a public
caller's question took about 1.5 times the admin's, who checks none: docs/access-control.md).
The graph records the group sets its documents hold (``Meta.access_sets``, written in
the same query as the documents, with a version that grows with every change of it), and
``access_coverage`` tells a caller whether it holds a group of each set, and the version.

:func:`read_covered` asks that before a retrieval and again after it. A caller who reads all runs
the retrieval's queries with ``$caller_reads_all`` (the admin's short cuts), and its result stands
only if the version did not move meanwhile: a document only the admin could have seen would
have had to bring a new set, which changes the version. Otherwise it is read again, checking
every document. The embedded FalkorDB serves one graph from one server, so one client's queries
see it in one order; Neo4j's read replicas may lag one another, so a Neo4j store checks every
document (:attr:`GraphStore.covered_reads`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

from kgp.access import Caller

T = TypeVar("T")


class CoveredStore(Protocol):
    """What a covered read needs of a store (kgp.stores.base.GraphStore)."""

    covered_reads: bool

    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]: ...

    def caller_now(self) -> Caller: ...

    def forget_counts(self) -> None: ...


# Reads that see every node, whatever the caller: ingest's k-NN upkeep, the dumps tests compare
# and the vector index's size (how many passages exist). Only the admin runs them; every other
# read query filters on $caller_groups (tests/test_access_control.py checks each file of both
# dialects).
ADMIN_QUERIES = frozenset(
    {
        "any_passage_vector",
        "any_passage_without_terms",
        "best_similarities",
        "sample_passages",
        "count_keyword_links",
        "count_knn_flags",
        "count_passages",
        "count_weak_edges",
        "knn_budget",
        "document_passage_texts",
        "dump_nodes",
        "dump_relationships",
        "fulltext_term_all",
        "knn_candidates_all",
        "knn_passages_all",
        "links_within_reach",
        "neighbours_all",
        "passage_embeddings",
        "passages_by_text_hash",
        "passages_needing_knn",
        "passages_without_text_hash",
        "pending_documents",
        "similar_degrees",
        "similar_edges",
        "vector_index_bound",
        "vector_keys",
        "vectors_by_key",
        "vectors_from_key",
        "weak_passages",
        "weakest_links",
    }
)
# Reads of the schema, the indexes' statistics and coverage: no node's content or existence.
INDEX_QUERIES = frozenset(
    {
        "access_coverage",
        "graph_encoder",
        "graph_schema",
        "index_status",
        "list_indexes",
        "vector_index_dimension",
        "vector_mark",
    }
)
CALLER_WRITES = frozenset({"save_trace"})  # the one write a reader makes: its own trace

# admin-only reads (ADMIN_QUERIES) that a covered read's caller may run
COVERED_READ_QUERIES = frozenset(
    {"fulltext_term_all", "knn_candidates_all", "knn_passages_all", "neighbours_all"}
)

# the store and caller of the covered read open in this context
_COVERED: ContextVar[tuple[object, Caller] | None] = ContextVar("kgp_covered_read", default=None)


def reads_all(store: object, caller: Caller) -> bool:
    """Whether ``caller``'s queries on ``store`` may skip the document checks now: the admin,
    or the caller of a covered read open in this context (another caller, even one bound inside
    it, checks)."""
    held = _COVERED.get()
    return caller.admin or (held is not None and held[0] is store and held[1] == caller)


def coverage(store: CoveredStore) -> tuple[object, bool]:
    """The graph's access version and whether the store's caller reads every document."""
    rows = store.run("access_coverage")
    return (rows[0]["version"], bool(rows[0]["reads_all"])) if rows else (None, False)


def read_covered(store: CoveredStore, work: Callable[[], T], *, again: Callable[[], None]) -> T:
    """``work()`` (reads only; what it finds reaches the caller only through its result or
    error, and never None) with the document checks skipped when the store's caller reads every
    document; if the graph's group sets changed while it ran, ``again()`` (forget what it read)
    and ``work()`` once more, checking each document. (The operator's tracer and language model
    see what the first attempt read: they are the operator's.)"""
    caller = store.caller_now()
    if caller.admin or not store.covered_reads:
        return work()
    before = coverage(store)
    if not before[1]:
        return work()
    token = _COVERED.set((store, caller))
    try:
        result = work()
    except Exception:
        if coverage(store) == before:
            raise
        result = None  # what went wrong may tell of what it read: read again
    finally:
        _COVERED.reset(token)
    if result is not None and coverage(store) == before:
        return result
    again()
    store.forget_counts()  # the count of readable passages it read (BM25's n)
    return work()

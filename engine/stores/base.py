"""The ``GraphStore`` port. Both stores run the same named queries, one file per dialect; this
class holds everything that does not depend on the dialect.

The port, what retrieval, ingest and the server use:

- lifecycle and schema: ``open``, ``close``, ``describe``, ``ensure_schema``,
  ``vector_dimension``, ``clear``;
- who reads: ``reading_as``, ``caller_now`` (every query filters on the caller: ``run``);
- documents: ``write_documents``, ``delete_document``, ``set_document_groups``,
  ``list_documents``;
- reads: ``fetch_nodes``, ``neighbours``, ``passage_texts``, ``passage_vectors``,
  ``document_passages``, ``document_pages``, ``page_contents``, ``tables``;
- search (kgp.stores.search): ``vector_search``, ``nearest``, ``fulltext_search``,
  ``readable_passages``;
- counts and traces: ``counts``, ``save_trace``, ``traces``, ``trace``.

Two capabilities beside it, each its own small interface: ``store.links``, what the k-NN linker
asks (kgp.stores.linking), and ``store.upkeep``, schema versions, records, the vector index's
health, checkpoints and the dump (kgp.stores.maintenance; a store may bring its own kind)."""

from __future__ import annotations

import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Self

from kgp import cypher
from kgp.access import ADMIN, ADMIN_CALLER, Caller
from kgp.closing import Closing
from kgp.errors import AccessDeniedError, again_after_restart
from kgp.stores.counting import StoreCounts
from kgp.stores.coverage import (
    ADMIN_QUERIES,
    CALLER_WRITES,
    COVERED_READ_QUERIES,
    reads_all,
)
from kgp.stores.linking import LinkQueries
from kgp.stores.maintenance import Row, Upkeep
from kgp.stores.model import (
    DocumentGraph,
    DocumentSummary,
    EdgeKind,
    Neighbour,
    PageContent,
    StoredPassage,
    StoredTable,
    neighbour_rows,
    page_content,
    stored_groups,
    stored_passage,
    stored_table,
)
from kgp.stores.rows import documents_rows, write_whole
from kgp.stores.search import StoreSearch
from kgp.stores.tracer import QueryEvent, Tracer


class GraphStore(StoreSearch, StoreCounts, Closing):
    """A graph store holding kgp's schema. Construct, then ``open()`` (or use ``with``)."""

    dialect: cypher.Dialect
    covered_reads = False  # whether a retrieval may skip document checks (kgp.stores.coverage)
    short_writes = False  # whether a write may keep short of its keyword links (rows.write_whole)
    upkeep_kind: type[Upkeep] = Upkeep  # the store's upkeep (kgp.stores.maintenance)

    def __init__(self, *, tracer: Tracer | None = None, caller: Caller = ADMIN_CALLER) -> None:
        self.tracer = tracer
        self.dimension: int | None = None
        # who queries read as outside reading_as() blocks: a store made by kgp.open reads as
        # the graph's caller, so a read no block covers is filtered, never the admin view
        self.caller = caller
        self.schema_ready = False  # ensured by a sync of this process (ingest.sync.Syncer)
        self.on_wait: Callable[[str], None] | None = None  # told how far a long wait is
        self.links = LinkQueries(self)  # what the k-NN linker asks (kgp.stores.linking)
        self.upkeep = self.upkeep_kind(self)  # schema, records, checkpoints (.maintenance)
        self._counts: dict[tuple[str, ...], tuple[int, float]] = {}  # caller -> (passages, when)

    def waiting(self, news: str) -> None:
        """Tell ``on_wait``, as it is set now, how far a long load or index build is."""
        if self.on_wait is not None:
            self.on_wait(news)

    # -- lifecycle (subclasses) --------------------------------------------------------------

    @abstractmethod
    def open(self) -> Self: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _execute(self, query: str, parameters: Mapping[str, Any], *, write: bool) -> list[Row]:
        """Run one query in one transaction; translate driver errors into ``KgpError``."""

    @abstractmethod
    def ensure_schema(self, dimension: int) -> None:
        """Create constraints and the id, vector and full-text indexes (idempotent)."""

    @abstractmethod
    def vector_dimension(self) -> int | None:
        """The dimension of the passages' vector index (None before the first sync)."""

    @abstractmethod
    def describe(self) -> str:
        """Where the store is, for messages (never a secret)."""

    def __enter__(self) -> Self:  # a store opens when its block starts
        return self.open()

    # -- running named queries ---------------------------------------------------------------

    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]:
        """Run the named query of this store's dialect and report it to the tracer. Every read
        and write passes here, and this is where access control is enforced: each query gets
        the caller's ``$caller_admin`` and ``$caller_groups`` (see :meth:`reading_as`), which
        every query reading passages, pages, tables or documents filters on in Cypher; a
        caller who is not the admin may run no write but a saved trace, and no query of the
        maintenance that sees every node (:data:`ADMIN_QUERIES`)."""
        caller = self.caller_now()
        every = reads_all(self, caller)  # the admin; a covered read's caller (kgp.stores.coverage)
        admin_only = name in ADMIN_QUERIES and not (every and name in COVERED_READ_QUERIES)
        if not caller.admin and (admin_only or (write and name not in CALLER_WRITES)):
            raise AccessDeniedError(
                f"{self.describe()}: query {name!r} needs the admin view (groups {ADMIN}); "
                f"the caller reads as groups {caller}"
            )
        params = {**dict(parameters or {}), **caller.parameters, "caller_reads_all": every}
        if write:
            self._counts.clear()  # a write may change what any caller may read
        started = time.perf_counter()
        rows = self._execute(cypher.load(self.dialect, name), params, write=write)
        for counter in _COUNTERS.get():
            if counter.store is self:
                counter.count()
        if self.tracer is not None:
            self.tracer(QueryEvent(name, params, len(rows), time.perf_counter() - started))
        return rows

    def caller_now(self) -> Caller:
        """Who the queries run now read as: the caller of the innermost :meth:`reading_as`
        block of this thread (context), else the store's own :attr:`caller`."""
        bound = _CALLER.get()
        return bound if bound is not None else self.caller

    @contextmanager
    def reading_as(self, caller: Caller) -> Iterator[None]:
        """Every query run inside the block (in this thread or context) reads as ``caller``:
        a retrieval binds its caller once, and ingest binds the admin view it needs to link
        new passages to every document. Work handed to another thread keeps it only when run
        in a copy of this context (``contextvars.copy_context().run``)."""
        token = _CALLER.set(caller)
        try:
            yield
        finally:
            _CALLER.reset(token)

    @contextmanager
    def counting(self) -> Iterator[Callable[[], int]]:
        """Count the calls to this store made inside the block by this thread (this context):
        ``with store.counting() as calls: ...; calls()``. Nothing shared is swapped, so threads
        counting on one store each see their own calls, and the tracer sees every call. Work
        handed to another thread is counted only if it runs in a copy of this context
        (``contextvars.copy_context().run``)."""
        counter = _CallCounter(self)
        _COUNTERS.set((*_COUNTERS.get(), counter))
        try:
            yield lambda: counter.calls
        finally:
            _COUNTERS.set(tuple(c for c in _COUNTERS.get() if c is not counter))

    # -- operations --------------------------------------------------------------------------

    def write_documents(self, graphs: Sequence[DocumentGraph]) -> None:
        """Write documents' whole subgraphs in one transaction, each replacing its older one."""
        if graphs:
            rows = documents_rows(graphs, self.dimension, with_terms=self.terms_indexed)
            write_whole(self, rows)

    def delete_document(self, doc_id: str) -> bool:
        """Delete a document, its nodes and relationships and orphaned keywords; False if absent."""
        rows = self.run("delete_document", {"id": doc_id}, write=True)
        return bool(rows and rows[0]["found"])

    def list_documents(self, *, counts: bool = False) -> list[DocumentSummary]:
        """The documents the caller may read, by id; with ``counts``, each with its passages and
        tables counted (one more query, as long as the graph: for a list people read)."""
        documents = [
            DocumentSummary(
                str(r["id"]),
                str(r["path"]),
                str(r["sha256"]),
                str(r["title"] or ""),
                int(r["pages"] or 0),
                stored_groups(r["groups"]),
            )
            for r in self.run("list_documents")
        ]
        if not counts or not documents:
            return documents
        rows = self.run("count_document_nodes", {"doc_ids": [d.id for d in documents]})
        found = {str(r["id"]): (int(r["passages"]), int(r["tables"])) for r in rows}
        counted = []
        for d in documents:
            passages, tables = found.get(d.id, (0, 0))
            counted.append(replace(d, passages=passages, tables=tables))
        return counted

    def set_document_groups(self, groups: Mapping[str, Sequence[str]]) -> None:
        """Who may read each document (id -> groups), changed on the Document nodes alone, in
        one query: their passages inherit it and stay untouched."""
        if groups:
            rows = [{"id": doc_id, "groups": list(g)} for doc_id, g in groups.items()]
            self.run("set_document_groups", {"rows": rows}, write=True)

    def neighbours(
        self,
        ids: Iterable[str],
        kinds: Iterable[EdgeKind] = tuple(EdgeKind),
        *,
        limit: int = 50,
        max_df: int = 50,
    ) -> list[Neighbour]:
        """Neighbours of many passages at once, all edge kinds in one query: at most ``limit``
        per passage and kind; keywords used by more than ``max_df`` passages are not
        expanded."""
        id_list = list(dict.fromkeys(ids))
        wanted = [k.value for k in dict.fromkeys(EdgeKind(k) for k in kinds)]
        if not id_list or not wanted:
            return []
        params = {"ids": id_list, "kinds": wanted, "limit": limit, "max_df": max_df}
        # a caller reading every passage: a query that checks no document (decisions/0012)
        query = "neighbours_all" if reads_all(self, self.caller_now()) else "neighbours"
        return neighbour_rows(self.run(query, params))

    def fetch_nodes(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Nodes by id (passages, pages, tables, documents): ``{id: {label, **properties}}``.
        A node of any label has its own properties, so each comes back as its property map
        (without nulls), not as a typed record."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        out: dict[str, dict[str, Any]] = {}
        for row in self.run("fetch_nodes", {"ids": id_list}):
            props = {k: v for k, v in dict(row["props"]).items() if v is not None}
            out[str(row["id"])] = {"label": row["label"], **props}
        return out

    def page_contents(self, numbers: Iterable[int]) -> list[PageContent]:
        """Pages with these numbers in every document, each with its passages of prose and its
        tables in reading order; by document, then number."""
        wanted = sorted({int(n) for n in numbers})
        if not wanted:
            return []
        return [page_content(r) for r in self.run("page_contents", {"numbers": wanted})]

    def document_pages(self, doc_id: str) -> list[PageContent]:
        """One document's pages in order, each with its passages of prose and its tables (a
        table's rows are its table's) in reading order; none when the caller may not read it."""
        return [page_content(r) for r in self.run("document_pages", {"doc_id": doc_id})]

    def save_trace(
        self,
        trace: Mapping[str, Any],
        items: Sequence[Row],
        tables: Sequence[Row],
        steps: Sequence[Row],
    ) -> str:
        """Keep a retrieval in the graph (one query): a ``Trace`` node, ``RETRIEVED`` to each
        passage (``items``) and table, ``STEP`` along each reasoning path; the trace keeps the
        ids it cited, so it can say which are gone later."""
        caller = list(self.caller_now().key)  # who saw it: only they see the trace again
        cited = [str(row["id"]) for row in [*items, *tables]]
        params = {
            "trace": {**dict(trace), "groups": caller, "cited": cited},
            "items": list(items),
            "tables": list(tables),
        }
        rows = self.run("save_trace", {**params, "steps": list(steps)}, write=True)
        return str(rows[0]["id"]) if rows else str(trace["id"])

    def trace(self, trace_id: str) -> dict[str, Any] | None:
        """One saved trace the caller may see (as :meth:`traces` decides): its question, what
        it retrieved that the caller may read now (``items``, by rank: id, rank, hop, score,
        doc_id, title, page, table, text) and its steps between such passages (``steps``:
        source, target, hop); None when there is none the caller may see."""
        rows = self.run("trace", {"id": trace_id})
        if not rows:
            return None
        row = dict(rows[0])
        return {**row, "items": list(row["items"] or []), "steps": list(row["steps"] or [])}

    def traces(self, limit: int = 25) -> list[dict[str, Any]]:
        """The saved traces the caller may see, newest first: one made with groups G is seen
        by callers holding every group of G (the admin sees all); ``gone``: the ids it cited
        that were removed or replaced since."""
        rows = self.run("list_traces", {"limit": int(limit)})
        return [
            {**dict(r), "groups": list(r["groups"] or []), "gone": list(r["gone"] or [])}
            for r in rows
        ]

    def tables(self) -> list[StoredTable]:
        """Every table in document order (page, then position on the page)."""
        return [stored_table(r) for r in self.run("document_tables")]

    def passage_vectors(self, ids: Iterable[str]) -> dict[str, StoredPassage]:
        """Passages by id (those that exist), in the order the store returns them."""
        return self._passages("passage_vectors", ids)

    def _passages(self, name: str, ids: Iterable[str]) -> dict[str, StoredPassage]:
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        return {p.id: p for p in map(stored_passage, self.run(name, {"ids": id_list}))}

    def document_passages(self, doc_ids: Iterable[str]) -> list[StoredPassage]:
        """The stored passages of some documents, in one query."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return []
        return [stored_passage(r) for r in self.run("document_passages", {"doc_ids": ids})]

    def passage_texts(self, ids: Iterable[str]) -> dict[str, StoredPassage]:
        """Passages by id like :meth:`passage_vectors`, without their embeddings (each an
        empty list)."""
        return self._passages("passage_texts", ids)

    def clear(self) -> None:
        """Delete every node and relationship (for tests and ``kgp reset``), and every entry of
        the vector index."""
        again_after_restart(self._clear)  # (the same made twice)

    def _clear(self) -> None:
        self.run("clear", write=True)
        self.schema_ready = False  # the graph's encoder and schema records went too
        self.upkeep.rebuild_vector_index()


@dataclass(eq=False, slots=True)
class _CallCounter:
    """The calls to one store counted by one ``counting()`` block (work it hands to another
    thread in a copy of its context counts too, so under a lock)."""

    store: GraphStore
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> None:
        with self.lock:
            self.calls += 1


# the caller of the innermost reading_as() block open in this context
_CALLER: ContextVar[Caller | None] = ContextVar("kgp_store_caller", default=None)
# the counting() blocks open in this context (each thread starts with none)
_COUNTERS: ContextVar[tuple[_CallCounter, ...]] = ContextVar("kgp_store_counters", default=())

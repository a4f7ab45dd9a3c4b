"""The Python client: ``kgp.open(**overrides)`` returns a :class:`KnowledgeGraph`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from kgp.access import Caller
from kgp.closing import Closing
from kgp.errors import (
    AccessDeniedError,
    ConfigurationError,
)
from kgp.locks import ReadWriteLock
from kgp.settings import Settings, load_settings
from kgp.stores import GraphStore, store_from_settings
from kgp.stores.model import (
    DocumentSummary,
    DocumentView,
    EdgeKind,
    GraphCounts,
    Neighbourhood,
    NeighbourhoodNode,
    document_view,
)
from kgp.stores.tracer import QueryEvent, Tracer, summarise
from kgp.writing import GraphWriting

if TYPE_CHECKING:  # the modules below load when a method needs them (a light import kgp)
    from kgp.agents.context import RetrievalConfig
    from kgp.agents.reader import Answer
    from kgp.agents.results import Retrieval
    from kgp.agents.retriever import Retriever
    from kgp.ingest.embedding import Encoder

# the tracer's event, its type and its display helper, for callers of ``open(tracer=)``
__all__ = ["KnowledgeGraph", "QueryEvent", "Tracer", "open", "summarise"]


class KnowledgeGraph(GraphWriting, Closing):
    """A knowledge graph in the configured store. Use as a context manager."""

    def __init__(
        self, *, settings: Settings, store: GraphStore, encoder: Encoder | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        # every read of this graph is filtered to the caller's groups (KGP_GROUPS; unset, the
        # default groups; the admin view only when asked for with *)
        store.caller = settings.caller
        self._encoder: Encoder | None = encoder  # shared with other graphs when given
        self._retrievers: dict[RetrievalConfig, Retriever] = {}
        self._lock = threading.RLock()  # guards the lazily built encoder and retrievers
        # questions read together, a write waits for them and runs alone: every question sees
        # each document whole, before or after a write
        self._rw = ReadWriteLock()
        self._init_writing()  # (sync, add and remove: kgp.writing)

    @property
    def encoder(self) -> Encoder:
        """The graph's sentence encoder (the one it was built with; for a new graph the
        configured one, else kgp's shipped model), loaded on first use. A configured encoder
        that is not the graph's is refused here, before anything is read or written."""
        with self._lock:
            if self._encoder is None:
                from kgp.ingest.embedding import Encoder
                from kgp.ingest.encoder import choose_encoder

                model = choose_encoder(
                    self.settings.encoder, self.store.upkeep.graph_encoder(), self.store.describe()
                )
                self._encoder = Encoder(
                    model=model, device=self.settings.device, batch_size=self.settings.embed_batch
                )
            return self._encoder

    @property
    def encoder_loaded(self) -> bool:
        """Whether the encoder is loaded (the first question or sync loads it)."""
        return self._encoder is not None

    @property
    def sees_everything(self) -> bool:
        """The admin view, or the graph's operator: a client opened without groups
        (KGP_GROUPS unset), which owns the data directory anyway."""
        caller = self.store.caller_now()
        return caller.admin or (caller is self.store.caller and self.settings.groups is None)

    def _check_writer(self, what: str) -> None:
        """Sync, add and remove change what everyone reads and report documents by id, so they
        are for those who see everything (sees_everything). A caller given groups reads only."""
        if not self.sees_everything:
            caller = self.store.caller_now()
            raise AccessDeniedError(
                f"{what} changes the graph for every reader, and this caller reads as groups "
                f"{caller}; run it with the admin view (KGP_GROUPS=* or --groups '*') or "
                "without KGP_GROUPS"
            )

    def close(self) -> None:
        with self._syncing:  # no sync of this client starts before the server is stopped
            self.store.close()

    def retriever(
        self,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Retriever:
        """A retriever bound to this graph (default scorer, seeder, order and method from the
        settings; method ``kgp``, ``gnn`` for GNN-Ret or ``rgnn`` for RGNN-Ret). The client keeps
        one per configuration: models load once and passages stay cached between questions until
        the graph changes. Safe to call from many threads."""
        from kgp.agents.context import RetrievalConfig
        from kgp.agents.retriever import Retriever

        config = RetrievalConfig.from_settings(
            self.settings, scorer=scorer, seeder=seeder, order=order, method=method
        )
        with self._lock:
            if config not in self._retrievers:
                self._check_dimension()
                self._retrievers[config] = Retriever(
                    self.store, self.encoder.encode, config, encoder=self.encoder.identity
                )
            return self._retrievers[config]

    def _check_dimension(self) -> None:
        """Refuse an encoder whose vectors cannot be compared with the graph's, before any
        query."""
        indexed = self.store.vector_dimension()
        if indexed is not None and indexed != self.encoder.dimension:
            raise ConfigurationError(
                f"{self.store.describe()} holds {indexed}-dimension vectors but encoder "
                f"{self.encoder.model_name!r} gives {self.encoder.dimension}; use the graph's "
                "encoder (leave KGP_ENCODER unset) or a new data directory"
            )

    def save_trace(self, retrieval: Retrieval, *, scorer: str, seeder: str) -> str:
        """Keep a retrieval in the graph as a ``Trace`` (for Neo4j Browser); its id."""
        from kgp.agents.results import trace_rows

        rows = trace_rows(retrieval, scorer=scorer, seeder=seeder)
        with self._rw.reading():  # a trace links to passages: none may vanish meanwhile
            return self.store.save_trace(rows.trace, rows.passages, rows.tables, rows.steps)

    def _changed(self) -> None:
        with self._lock:
            retrievers = list(self._retrievers.values())
        for retriever in retrievers:
            retriever.forget()

    def retrieve(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Retrieval:
        """Evidence for a question: seeds, then Algorithm 1 (``k`` passages, default the
        settings' budget), or GNN-Ret / RGNN-Ret with ``method="gnn"`` / ``"rgnn"``. Each passage
        has its text, score, document, page and the path that reached it."""
        retriever = self.retriever(scorer=scorer, seeder=seeder, order=order, method=method)
        with self._rw.reading():
            return retriever.retrieve(question, self.settings.budget if k is None else k)

    def ask(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Answer:
        """Retrieve evidence, then answer with the configured chat model, citing the passages
        used. Without a configured model, or when it fails, the answer is ``None``, ``error``
        says why and the evidence is still there."""
        from kgp.agents.reader import answer_from

        retrieval = self.retrieve(
            question, k, scorer=scorer, seeder=seeder, order=order, method=method
        )
        return answer_from(retrieval, self.settings)

    def ask_stream(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Iterator[str | Answer]:
        """``ask`` as the model writes: the reply's pieces as they come, then the Answer, last
        (only the Answer without a reader). Retrieval is done before this returns."""
        from kgp.agents.reader import answer_stream

        found = self.retrieve(question, k, scorer=scorer, seeder=seeder, order=order, method=method)
        return answer_stream(found, self.settings)

    @property
    def caller(self) -> Caller:
        """Who this graph reads as: the groups whose documents it returns, or the admin."""
        return self.store.caller

    def stats(self) -> GraphCounts:
        """Node counts by label, relationship counts by type and documents by group, of what
        the caller may read."""
        with self._rw.reading():
            return self.store.counts()

    def documents(self) -> list[DocumentSummary]:
        """The documents the caller may read, by id (with the caller's groups among theirs),
        with their passages and tables counted."""
        with self._rw.reading():
            return self.store.list_documents(counts=True)

    def document(self, doc_id: str) -> DocumentView | None:
        """One document as kgp holds it: its record (title, groups, size, when it was synced)
        and its pages with their passages and tables in reading order; None when there is no
        such document or the caller may not read it."""
        with self._rw.reading():
            node = self.store.fetch_nodes([doc_id]).get(doc_id)
            if node is None or node["label"] != "Document":
                return None
            return document_view(node, self.store.document_pages(doc_id))

    def neighbourhood(
        self,
        passage_id: str,
        kinds: Iterable[EdgeKind | str] = tuple(EdgeKind),
        *,
        limit: int = 8,
    ) -> Neighbourhood | None:
        """A passage and its neighbours in the graph, at most ``limit`` of each kind (SIMILAR
        best first, NEXT, shared keywords most shared first), as the traversal sees them: only
        passages the caller may read. None when there is no such passage the caller may read."""
        wanted = tuple(EdgeKind(kind) for kind in kinds)
        with self._rw.reading():
            near = self.store.neighbours([passage_id], wanted, limit=limit) if wanted else []
            stored = self.store.passage_texts([passage_id, *(n.target for n in near)])
            if passage_id not in stored:
                return None
            titles = {
                doc_id: str(node.get("title") or "")
                for doc_id, node in self.store.fetch_nodes(
                    {p.doc_id for p in stored.values()}
                ).items()
            }

        def shown(pid: str) -> NeighbourhoodNode:
            p = stored[pid]
            return NeighbourhoodNode(
                pid, p.doc_id, titles.get(p.doc_id, ""), p.page, p.text, p.table_id
            )

        edges = tuple((n.target, n.kind.value, n.weight) for n in near if n.target in stored)
        others = tuple(shown(pid) for pid in dict.fromkeys(edge[0] for edge in edges))
        return Neighbourhood(shown(passage_id), edges, others)

    def traces(self, limit: int = 25) -> list[dict[str, Any]]:
        """The saved traces the caller may see (those saved by callers with no group the
        caller lacks), newest first."""
        return self.store.traces(limit)

    def trace(self, trace_id: str) -> dict[str, Any] | None:
        """One saved trace the caller may see, opened again: its question, what it retrieved
        that the caller may read now, by rank, and the steps of its reasoning paths; None when
        there is none the caller may see."""
        with self._rw.reading():
            return self.store.trace(trace_id)


def open(
    *,
    settings: Settings | None = None,
    tracer: Tracer | None = None,
    loaded_encoder: Encoder | None = None,
    on_wait: Callable[[str], None] | None = None,
    **overrides: Any,
) -> KnowledgeGraph:
    """Open the knowledge graph ``settings`` (or overrides of settings fields) describe, sharing
    an encoder already loaded; ``on_wait`` is told every 15 s how far a long load or build is."""
    if settings is not None and overrides:
        raise TypeError("open() takes settings or settings overrides, not both")
    if settings is None:
        settings = load_settings(**overrides)
    store = store_from_settings(settings, tracer=tracer)
    store.on_wait = on_wait  # (the embedded server's load, before open() returns)
    store.open()
    try:
        # an older kgp's graph gets the current schema before anything reads it (one from before
        # access groups: its documents the default groups, else only the admin would read them)
        store.upkeep.migrate(settings.default_groups)
    except BaseException:
        store.close()
        raise
    return KnowledgeGraph(settings=settings, store=store, encoder=loaded_encoder)

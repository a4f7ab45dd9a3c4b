"""Keep the graph equal to a folder: content hashes decide what is new, changed or gone; each
document is replaced whole; a crash at any point leaves a graph the next sync repairs.

Documents are read and embedded in windows so the encoder sees many texts per call, then linked
in groups and written several per query (one transaction: each document whole or absent); see
:mod:`kgp.ingest.prepare`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from contextvars import copy_context
from dataclasses import replace
from pathlib import Path

import numpy as np
from kgp.access import ADMIN_CALLER
from kgp.errors import DocumentError, StoreRestartedError
from kgp.ids import is_upload
from kgp.ingest.builder import with_embeddings, write_batches
from kgp.ingest.edges import SimilarityLinker
from kgp.ingest.embedding import Encoder
from kgp.ingest.encoder import refuse_another
from kgp.ingest.prepare import Prepared, Reader, Window, reason
from kgp.ingest.removal import check_removal
from kgp.ingest.report import Progress, Skipped, SyncReport
from kgp.ingest.sources import Candidate, corpus_candidates, file_candidates, walk_files
from kgp.settings import Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import (
    DocumentGraph,
    DocumentSummary,
    passage_id,
    stored_groups,
)
from kgp.stores.rows import check_document


class Syncer:
    """Brings a store in line with a folder or a corpus. Construct with the open store."""

    def __init__(
        self,
        *,
        store: GraphStore,
        settings: Settings,
        encoder: Encoder,
        on_progress: Callable[[Progress], None] | None = None,
        guard: Callable[[], AbstractContextManager[object]] = nullcontext,
        linker: SimilarityLinker | None = None,
    ) -> None:
        self.store = store
        # around every write (a document's, a removal, k-NN upkeep): a client keeps questions
        # out meanwhile and forgets its caches after, while reading and embedding run freely
        self.guard = guard
        self.settings = settings
        self.encoder = encoder
        self.linker = linker or SimilarityLinker(store, k=settings.knn_k)
        self.reader = Reader(store=store, settings=settings, encoder=encoder, guard=guard)
        self.on_progress = on_progress
        self._schema_ready = False

    # -- sources -----------------------------------------------------------------------------

    def scan(self, root: Path, report: SyncReport) -> list[Candidate]:
        """Supported files under ``root`` (hidden ones excluded, symlinks leaving it and
        symlinked folders listed under ``skipped``)."""
        linked: list[Path] = []
        files = sorted(walk_files(root.resolve(), linked))
        for folder in linked:
            report.skipped.append(
                Skipped(
                    folder.relative_to(root.resolve()).as_posix() + "/",
                    "symlinked folder: kgp does not follow links to folders; sync its target "
                    "on its own, or copy it in",
                )
            )
        return self.candidates(files, root, report)

    def candidates(
        self,
        paths: Iterable[Path],
        root: Path,
        report: SyncReport,
        *,
        groups: Iterable[str] | None = None,
        id_prefix: str = "",
    ) -> list[Candidate]:
        """The given files as documents with ids ``id_prefix`` + their path relative to
        ``root``, with ``groups`` or else those the access files under ``root`` give them;
        unsupported, outside or unreadable ones go to the report. A bad access file raises
        before anything is written."""
        return file_candidates(paths, root, report, self.settings.default_groups, groups, id_prefix)

    # -- sync --------------------------------------------------------------------------------

    def sync_folder(self, folder: Path, *, allow_removal: bool = False) -> SyncReport:
        """Make the graph equal to ``folder``. A sync that would remove every document, or
        more than ``max_removal_share`` of 10 or more, raises :class:`RemovalRefusedError`
        before anything is written, unless ``allow_removal``."""
        folder = Path(folder)
        if not folder.is_dir():
            raise DocumentError(f"{folder}: not a folder; give the folder to sync")
        report = SyncReport()
        started = time.perf_counter()
        candidates = self.scan(folder, report)
        self._sync(candidates, report, scope=None, allow_removal=allow_removal, source=folder)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def sync_corpus(
        self, path: Path, *, prefix: str | None = None, allow_removal: bool = False
    ) -> SyncReport:
        """A benchmark corpus, a JSON list of ``{title, text}``: one document per entry (each
        entry one passage), deduplicated by title and text, ids ``<prefix>/<n>``."""
        report = SyncReport()
        started = time.perf_counter()
        prefix = prefix or Path(path).stem
        candidates = list(corpus_candidates(Path(path), prefix, self.settings.default_groups))
        self._sync(candidates, report, scope=prefix + "/", allow_removal=allow_removal, source=path)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def sync_candidates(self, candidates: list[Candidate], report: SyncReport) -> None:
        """Add or replace just these documents (nothing is removed)."""
        self._sync(candidates, report, scope=None, remove=False)

    def _sync(
        self,
        candidates: list[Candidate],
        report: SyncReport,
        scope: str | None,
        *,
        remove: bool = True,
        allow_removal: bool = False,
        source: Path | None = None,
    ) -> None:
        # whoever syncs, ingest reads as the admin: new passages are linked to every document
        with self.store.reading_as(ADMIN_CALLER):
            try:
                self._sync_as_admin(candidates, report, scope, remove, allow_removal, source)
            except StoreRestartedError as restarted:
                # the server crashed (or was stuck) and was started again from its log: every
                # document written is whole or absent, as after a killed sync, which the next
                # sync repairs: this one goes again, once, with what it kept of the graph dropped
                self.linker = SimilarityLinker(self.store, k=self.settings.knn_k)
                done = len(report.added) + len(report.changed) + len(report.regrouped)
                report.unchanged, seen = 0, list(report.skipped)
                report.skipped.clear()
                self._sync_as_admin(candidates, report, scope, remove, allow_removal, source)
                report.unchanged = max(0, report.unchanged - done)  # written, then unchanged
                report.skipped[:0] = [s for s in seen if s not in report.skipped]
                report.restarts.append(str(restarted))

    def _sync_as_admin(
        self,
        candidates: list[Candidate],
        report: SyncReport,
        scope: str | None,
        remove: bool,
        allow_removal: bool,
        source: Path | None,
    ) -> None:
        self.linker.memory.begin()
        self.store.upkeep.prepare_writes()
        if not self.store.schema_ready:  # once per process: later syncs need no write here
            with self.guard():
                self._ensure_schema()
        elif not self._schema_ready:
            self._check_encoder()  # another encoder is refused, whoever ensured the schema
        seen = {c.doc_id for c in candidates}
        gone: list[str] = []
        if remove:
            stored = {d.id: d for d in self.store.list_documents()}
            # a folder's or corpus's sync leaves the server's uploads alone (kgp.ids)
            in_scope = [
                d for d in stored if not is_upload(d) and (scope is None or d.startswith(scope))
            ]
            gone = [d for d in in_scope if d not in seen]
            if not allow_removal:
                self._check_removal(gone, len(in_scope), source)
        else:  # only these documents matter: cost follows them, not the graph
            nodes = self.store.fetch_nodes(seen)
            stored = {
                key: DocumentSummary(
                    key, str(n["path"]), str(n["sha256"]), groups=stored_groups(n.get("groups"))
                )
                for key, n in nodes.items()
                if n["label"] == "Document"
            }
        if self.store.links.pending_documents():  # a stopped sync's documents to link: a write
            with self.guard():
                report.recovered = self.linker.recover()
        todo: list[Candidate] = []
        for cand in candidates:
            if cand.size > self.settings.max_file_mb * 1024 * 1024:
                report.skipped.append(
                    Skipped(
                        cand.path,
                        f"{cand.size / 1024 / 1024:.1f} MB is over the "
                        f"{self.settings.max_file_mb:g} MB limit (KGP_MAX_FILE_MB)",
                    )
                )
                continue
            todo.append(cand)
        # Pipelined: while one window is linked and written (in order, on one worker thread, so
        # each group's k-NN query sees every earlier write), the next one is read and embedded.
        done = 0
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgp-write") as writer:
            pending: Future[None] | None = None
            for window in self.reader.windows(todo, stored, report):
                if pending is not None:
                    pending.result()
                # in a copy of this context, so the writer reads as the admin too
                context = copy_context()
                pending = writer.submit(context.run, self._commit, window, report)
                done += window.read
                if self.on_progress is not None:
                    self.on_progress(Progress(done, len(todo), report.passages, window.last))
            if pending is not None:
                pending.result()
        for doc_id in gone:
            with self.guard():
                if self.store.delete_document(doc_id):
                    self.linker.forget(doc_id)
                    report.removed.append(doc_id)
        self._finish(report)

    def _check_removal(self, gone: list[str], stored: int, source: Path | None) -> None:
        check_removal(gone, stored, self.settings.max_removal_share, str(source or "the source"))

    def _finish(self, report: SyncReport) -> None:
        """Recompute the neighbours of passages that lost some, and compact the store's log
        after writes."""
        if self.store.links.knn_flags():  # guarded only when there is something to do
            with self.guard():
                report.refilled = self.linker.refill()
        wrote = report.added or report.changed or report.removed or report.refilled
        if wrote or report.recovered:
            self.store.upkeep.checkpoint()  # compacts the log; the graph is unchanged

    def _commit(self, window: Window, report: SyncReport) -> None:
        """Link a window's documents to the graph and write them, group by group (each group's
        documents several per query; then older passages are linked to them, one query)."""
        for drafts, vectors in window.groups():
            with self.guard():
                self._write_group(drafts, vectors, report)
        # once the log has grown past its snapshot: a start after a crash replays at most about
        # as much as the snapshot holds (all of a long sync's writes, otherwise: 4.7 GB for the
        # 635,000 passages of a stopped 1M sync), and the snapshots cost twice the last at most
        self.store.upkeep.checkpoint()

    def _write_group(
        self, drafts: list[Prepared], vectors: list[np.ndarray], report: SyncReport
    ) -> None:
        ready: list[tuple[DocumentGraph, bool, np.ndarray]] = []
        for (made, replacing), matrix in zip(drafts, vectors, strict=True):
            graph = with_embeddings(made.graph, matrix)
            try:
                check_document(graph, self.store.dimension)
            except DocumentError as exc:
                report.skipped.append(Skipped(made.source.path, reason(exc, made.source.path)))
                continue
            ready.append((graph, replacing, matrix))
        if not ready:
            return
        group = self.linker.plan(
            [(graph.document.id, passage_ids(graph), matrix) for graph, _, matrix in ready]
        )
        linked = [
            (replace(graph, similar=tuple(edges)), replacing, matrix)
            for (graph, replacing, matrix), edges in zip(ready, group.edges, strict=True)
        ]
        for batch in write_batches(linked):
            self.store.write_documents([graph for graph, _, _ in batch])
            for graph, replacing, matrix in batch:
                doc_id = graph.document.id
                self.linker.forget(doc_id)
                self.linker.remember(passage_ids(graph), matrix)
                (report.changed if replacing else report.added).append(doc_id)
                report.passages += len(graph.passages)
        report.linked += self.linker.complete(group)

    def remove(self, doc_id: str) -> bool:
        with self.store.reading_as(ADMIN_CALLER):
            self.linker.memory.begin()
            self.store.upkeep.prepare_writes()
            with self.guard():
                self._ensure_schema()
                report = SyncReport()
                report.recovered = self.linker.recover()
                removed = self.store.delete_document(doc_id)
                if removed:
                    report.removed.append(doc_id)
                self.linker.forget(doc_id)
            self._finish(report)
            return removed

    def regroup(self, doc_id: str, groups: tuple[str, ...]) -> bool:
        """Give one stored document other readers (its passages inherit them); False when
        there is no such document."""
        with self.store.reading_as(ADMIN_CALLER):
            node = self.store.fetch_nodes([doc_id]).get(doc_id, {})
            if node.get("label") != "Document":
                return False
            self.linker.memory.begin()
            self.store.upkeep.prepare_writes()
            with self.guard():
                self.store.set_document_groups({doc_id: groups})
            return True

    def _ensure_schema(self) -> None:
        if not self._schema_ready:
            self.store.upkeep.migrate(self.settings.default_groups)
            self.store.ensure_schema(self.encoder.dimension)
            self._check_encoder()
            self._schema_ready = self.store.schema_ready = True

    def _check_encoder(self) -> None:
        """A graph's vectors come from one encoder: the first sync records it, a later sync
        with another one (of the same dimension, which the store cannot tell apart) is refused
        before anything is written."""
        name = self.encoder.identity
        recorded = self.store.upkeep.graph_encoder()
        refuse_another(name, recorded, self.store.describe())
        if recorded is None:
            self.store.upkeep.set_graph_encoder(name)


def passage_ids(graph: DocumentGraph) -> list[str]:
    return [passage_id(graph.document.id, p.ordinal) for p in graph.passages]

"""The writing side of :class:`~kgp.client.KnowledgeGraph`: sync, watch, add and remove.

Each write runs alone (questions in flight finish first, and caches are forgotten after it). A
client keeps one k-NN linker across its syncs, which run one at a time, so that a long-lived
process (``kgp serve``, ``kgp sync --watch``) links each added document by the whole matrix of
vectors once it holds one, for as long as every write the graph takes is this client's own
(:mod:`kgp.ingest.memory`): the store tells another process's writes (another store object's:
one client per store), and the client its own syncers' (:meth:`GraphWriting.syncer`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from kgp.errors import (
    AccessDeniedError,
    DocumentError,
    KgpError,
    RemovalRefusedError,
    StoreError,
    StoreRestartedError,
    StoreUnavailableError,
)
from kgp.locks import ReadWriteLock
from kgp.settings import Settings
from kgp.stores import GraphStore

if TYPE_CHECKING:
    from kgp.ingest.edges import SimilarityLinker
    from kgp.ingest.embedding import Encoder
    from kgp.ingest.report import Progress, SyncReport
    from kgp.ingest.sources import Candidate
    from kgp.ingest.sync import Syncer


RETRY_FIRST_S, RETRY_MAX_S = 2.0, 300.0  # a watch's pause after a failed sync, doubled to the max
REJECTED_TRIES = 3  # syncs in a row the store may reject (StoreError) before a watch gives up


class GraphWriting:
    """Sync, watch, add and remove, for :class:`~kgp.client.KnowledgeGraph`."""

    settings: Settings
    store: GraphStore
    _rw: ReadWriteLock

    if TYPE_CHECKING:

        @property
        def encoder(self) -> Encoder: ...

        def _changed(self) -> None: ...

        def _check_writer(self, what: str) -> None: ...

    def _init_writing(self) -> None:
        # one sync of this client at a time, with the linker it keeps across its syncs
        self._lending = threading.RLock()
        self._kept: SimilarityLinker | None = None
        self._lent = False  # whether a sync has it now
        self._foreign_writes = 0  # writes of syncers of their own (syncer())
        self._writes = 0  # writes of this client's syncs (each under _writing)
        self._closing = threading.Event()  # set by close()

    def syncer(self, on_progress: Callable[[Progress], None] | None = None) -> Syncer:
        """A syncer of its own (its own k-NN linker), for as long as the caller keeps it: each
        of its writes goes through this client's store, which cannot tell them from the kept
        linker's, so each one also ends what that linker kept."""
        return self._new_syncer(on_progress, self.settings, None, guard=self._foreign_writing)

    def _new_syncer(
        self,
        on_progress: Callable[[Progress], None] | None,
        settings: Settings,
        linker: SimilarityLinker | None,
        guard: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> Syncer:
        from kgp.ingest.sync import Syncer

        self._check_writer("a sync")
        return Syncer(
            store=self.store,
            settings=settings,
            encoder=self.encoder,
            on_progress=on_progress,
            guard=guard or self._writing,
            linker=linker,
        )

    def _kept_era(self) -> Hashable | None:
        """The kept linker's era: the store's (no other process wrote) and this client's
        syncers of their own (none wrote)."""
        era = self.store.writes_era()
        return None if era is None else (era, self._foreign_writes)

    @contextmanager
    def _foreign_writing(self) -> Iterator[None]:
        with self._writing():
            self._foreign_writes += 1  # (before the write: the kept linker may look during it)
            yield

    @contextmanager
    def _lent_syncer(
        self,
        on_progress: Callable[[Progress], None] | None = None,
        settings: Settings | None = None,
    ) -> Iterator[Syncer]:
        """A syncer with the linker this client keeps across its syncs: one sync of the
        client at a time (a second waits for the first); the linker is kept after a sync that
        ended well (a failed one may have written what it did not note)."""
        self._check_writer("a sync")  # (before the lock)
        settings = settings or self.settings
        with self._lending:
            if self._lent:  # a sync within one of this thread's (from a callback): as syncer()'s
                yield self._new_syncer(on_progress, settings, None, guard=self._foreign_writing)
                return
            syncer = self._new_syncer(on_progress, settings, self._kept_linker())
            self._lent = True
            try:
                yield syncer
            except RemovalRefusedError:
                raise  # refused before anything was written
            except BaseException:
                self._kept = None
                raise
            else:
                self._kept = syncer.linker  # (a restart's new one, after a crash)
            finally:
                self._lent = False

    def _kept_linker(self) -> SimilarityLinker:
        from kgp.ingest.edges import SimilarityLinker
        from kgp.ingest.whole_file import saved

        if self._kept is None:
            self._kept = SimilarityLinker(self.store, k=self.settings.knn_k)
            self._kept.memory.era = self._kept_era
            if self.settings.save_vectors:  # (kgp.ingest.whole_file)
                k, alone = self.settings.knn_k, self._rw.reading
                self._kept.memory.saved = partial(saved, self.store, k, alone)
        return self._kept

    def hold_vectors(self, tries: int = 3) -> bool:
        """Read every passage's vector into the k-NN linker this client keeps, so that what it
        adds later is linked by their whole matrix, as by a client that synced the graph from
        empty: for a long-lived process started on a graph it did not write (``kgp serve`` and
        ``kgp sync --watch`` start this in the background; ``KGP_HOLD_VECTORS=false`` turns it
        off). About 1.5 KB a passage, read at about 0.1 ms a passage beside questions and syncs
        (which go by the vector index meanwhile); what was read is kept only if the graph took
        no write since the read began, this client's own included (read again, up to ``tries``
        times). True when the matrix is held; False where the store cannot tell another
        process's writes (Neo4j), a NEEDS_KNN flag waits (a removal's refill), the graph is past
        the matrix's limit, or writes kept coming (a sync that writes nothing, as a watch's every
        few seconds, does not count)."""
        from kgp.access import ADMIN_CALLER
        from kgp.ingest.memory import read_whole

        for _ in range(tries):
            with self._lending:  # (after a sync in flight)
                if self._lent:
                    return False  # (called within one of this thread's syncs)
                kept = self._kept_linker()
                if kept.memory.holds_whole():
                    return True
                kept.memory.release()  # (what it held, if anything, is stale: freed first)
                began = self._writes_now()
                with self.store.reading_as(ADMIN_CALLER):
                    if began[0] is None or self.store.knn_flags():
                        return False
                    if self.store.count_passages() > kept.memory.whole.limit:
                        return False  # (known without reading up to the limit)
                    if kept.memory.restore_saved():
                        return True  # (what the last holder saved: still the graph's)
            with self.store.reading_as(ADMIN_CALLER):
                whole, links = read_whole(self.store, kept.k)
            with self._lending:
                if not whole.known:
                    return False  # past the limit
                if self._kept is kept and self._writes_now() == began:
                    kept.memory.adopt(whole, links, began[0])
                    return True
        return False

    def _writes_now(self) -> tuple[Hashable | None, int]:
        """The kept linker's era and this client's count of writes, read while none is in
        flight (a write of many queries counts at its start, when it is not yet whole)."""
        with self._rw.reading():
            return self._kept_era(), self._writes

    def held_vectors(self) -> int | None:
        """How many passages' vectors this client holds as the graph's whole matrix (None:
        none held, or another process wrote since)."""
        with self._lending:  # (after a sync in flight)
            kept = self._kept
            return kept.memory.whole.count if kept and kept.memory.holds_whole() else None

    def writes_mark(self) -> Hashable | None:
        """A mark that changes with every write the graph takes, this client's or another
        process's; None where the store cannot tell another process's (Neo4j)."""
        era, writes = self._writes_now()
        return None if era is None else (era, writes)

    def holding_vectors(self, say: Callable[[str], None]) -> threading.Thread | None:
        """:meth:`hold_vectors` in a daemon thread for as long as this client is open, unless the
        settings say not to: read again each time it stops holding them, saying in one line what
        it holds when that changes (``kgp serve``, ``kgp sync --watch``; :mod:`kgp.holding`)."""
        if not self.settings.hold_vectors:
            return None
        from kgp.holding import keep_holding

        return keep_holding(self, say, self._closing)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write of a sync: questions in flight finish first, none starts meanwhile, and
        caches are forgotten before they resume, so each sees a document whole, before or after
        (parsing and embedding run outside, while questions go on)."""
        with self._rw.writing():
            self._writes += 1
            try:
                yield
            finally:
                self._changed()

    def sync(
        self,
        folder: str | Path,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        allow_removal: bool = False,
    ) -> SyncReport:
        """Make the graph equal to the folder: add new files, replace changed ones, remove
        deleted ones. Files that cannot be read are listed in the report's ``skipped``. A sync
        that would remove every document, or more than ``max_removal_share`` of 10 or more,
        raises :class:`~kgp.errors.RemovalRefusedError` and changes nothing, unless
        ``allow_removal``."""
        try:
            with self._lent_syncer(on_progress) as syncer:
                report = syncer.sync_folder(Path(folder), allow_removal=allow_removal)
        except RemovalRefusedError:
            raise  # refused before anything was written
        except BaseException:
            self._changed()  # a part may have been written
            raise
        if report.wrote:  # a watched folder syncs every few seconds: keep caches if it did not
            self._changed()
        return report

    def watch(
        self,
        folder: str | Path,
        on_report: Callable[[SyncReport | KgpError], None],
        *,
        changes: Iterable[object] | None = None,
        allow_removal: bool = False,
        stop: threading.Event | None = None,
    ) -> None:
        """Keep the graph equal to ``folder``: sync after each burst of file changes (debounced) and
        every few seconds, for a missed event (an unchanged folder is only hashed). ``on_report``
        gets each sync that moved something, each refusal for removing too much (the folder may
        come back: watching goes on), and each sync that failed for the store's sake (its server
        lost, a full disk: :class:`~kgp.errors.StoreUnavailableError`; a rejected query,
        :class:`~kgp.errors.StoreError`, up to REJECTED_TRIES in a row, the last raised), after
        which watching goes on, the next try waiting RETRY_FIRST_S, then twice as long each
        failure in a row, up to RETRY_MAX_S, and starting a lost server again first (what the
        failed sync wrote is whole or absent; the next one finishes it). Any other error ends
        the watch. Returns when ``stop`` is set or ``changes`` (default: the folder's file
        events) ends; a signal's exception raises ``KeyboardInterrupt``."""
        if changes is None:
            from kgp.ingest.sources import folder_events

            changes = folder_events(Path(folder), stop)
        pause = stop or threading.Event()  # (waited on between failed tries)
        delay, lost, rejected = 0.0, False, 0
        for batch in changes:
            try:
                if lost:  # its server gone: start it again (from its log) before the sync
                    self._reopen_store()
                report = self.sync(folder, allow_removal=allow_removal)
            except RemovalRefusedError as refused:
                on_report(refused)
                continue
            except (StoreUnavailableError, StoreError) as failed:
                unavailable = isinstance(failed, StoreUnavailableError)
                rejected = 0 if unavailable else rejected + 1
                if isinstance(failed, AccessDeniedError) or rejected >= REJECTED_TRIES:
                    raise
                on_report(failed)
                lost = unavailable and not isinstance(failed, StoreRestartedError)
                delay = min(RETRY_MAX_S, 2 * delay) if delay else RETRY_FIRST_S
                if pause.wait(delay):
                    return
                continue
            delay, lost, rejected = 0.0, False, 0
            if batch or report.added or report.changed or report.removed:
                on_report(report)
            if stop is not None and stop.is_set():
                return

    def _reopen_store(self) -> None:
        """Where the store no longer answers, close it and open it again (the embedded one
        starts its server again from its log, which holds every write it acknowledged), while
        no question runs."""
        from kgp.access import ADMIN_CALLER

        with self._rw.writing():
            try:
                with self.store.reading_as(ADMIN_CALLER):
                    self.store.count_passages()
                return  # it answers (a compaction that failed, say): nothing to start again
            except StoreUnavailableError:
                pass
            with suppress(KgpError):  # (a lost server has nothing left to close)
                self.store.close()
            self._changed()
            self.store.open()

    def sync_corpus(
        self, path: str | Path, *, prefix: str | None = None, allow_removal: bool = False
    ) -> SyncReport:
        """Load a ``[{title, text}]`` JSON corpus, one passage per entry (the same removal
        guard as :meth:`sync`)."""
        from kgp.ingest.sources import corpus_settings

        try:
            with self._lent_syncer(settings=corpus_settings(self.settings)) as syncer:
                return syncer.sync_corpus(Path(path), prefix=prefix, allow_removal=allow_removal)
        finally:
            self._changed()

    def add(
        self,
        path: str | Path,
        *,
        root: str | Path | None = None,
        groups: Iterable[str] | None = None,
    ) -> SyncReport:
        """Add or replace one file; its id is its path relative to ``root`` (default: its
        folder, so the id is the file name). ``groups`` says who may read it (default: what
        the access files under ``root`` say, else ``KGP_DEFAULT_GROUPS``); a file whose content
        is unchanged gets the new groups without being embedded again."""
        from kgp.ingest.readers import supported_suffixes
        from kgp.ingest.report import SyncReport

        file = Path(path)
        base = Path(root) if root is not None else file.parent
        if not file.is_file():
            raise DocumentError(f"{file}: no such file")
        report = SyncReport()
        with self._lent_syncer() as syncer:
            found = syncer.candidates([file], base, report, groups=groups)
            if found:
                return self._sync_found(syncer, found, report)
        reason = (
            report.skipped[0].reason
            if report.skipped
            else f"unsupported format; kgp reads {', '.join(supported_suffixes())}"
        )
        raise DocumentError(f"{file}: {reason}")

    def add_files(
        self,
        paths: Iterable[str | Path],
        *,
        root: str | Path,
        groups: Iterable[str] | None = None,
        id_prefix: str = "",
    ) -> SyncReport:
        """Add or replace several files in one sync (ids ``id_prefix`` + their path relative
        to ``root``, groups as in :meth:`add`); files that cannot be read or are not inside
        ``root`` are listed under the report's ``skipped``, unsupported ones under ``ignored``.
        ``kgp serve`` puts its uploads under the prefix of :mod:`kgp.ids`."""
        from kgp.ingest.report import SyncReport

        report = SyncReport()
        with self._lent_syncer() as syncer:
            found = syncer.candidates(
                [Path(p) for p in paths], Path(root), report, groups=groups, id_prefix=id_prefix
            )
            return self._sync_found(syncer, found, report)

    def _sync_found(self, syncer: Syncer, found: list[Candidate], report: SyncReport) -> SyncReport:
        if found:
            try:
                syncer.sync_candidates(found, report)
            finally:
                self._changed()
        return report

    def regroup(self, doc_id: str, groups: Iterable[str]) -> bool:
        """Let ``groups`` read one document instead of those it had (its text is not read or
        embedded again); False when there is no such document. A synced document takes its
        folder's access files' groups again at the next sync of that folder."""
        from kgp.access import check_groups

        chosen = check_groups(list(groups), "groups")
        try:
            with self._lent_syncer() as syncer:
                return syncer.regroup(doc_id, chosen)
        finally:
            self._changed()

    def remove(self, doc_id: str) -> bool:
        """Remove one document (by id, the path relative to the synced root)."""
        try:
            with self._lent_syncer() as syncer:
                return syncer.remove(doc_id)
        finally:
            self._changed()

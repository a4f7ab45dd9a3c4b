"""The writing side of :class:`~kgp.client.KnowledgeGraph`: sync, watch, add and remove.

Each write runs alone (questions in flight finish first, and caches are forgotten after it), and
a client's syncs run one at a time."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
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
        self._syncing = threading.RLock()  # one sync of this client at a time

    def syncer(self, on_progress: Callable[[Progress], None] | None = None) -> Syncer:
        """A syncer of its own, for as long as the caller keeps it; its writes go through this
        client (each alone, as a sync's)."""
        return self._new_syncer(on_progress, self.settings)

    def _new_syncer(
        self, on_progress: Callable[[Progress], None] | None, settings: Settings
    ) -> Syncer:
        from kgp.ingest.sync import Syncer

        self._check_writer("a sync")
        return Syncer(
            store=self.store,
            settings=settings,
            encoder=self.encoder,
            on_progress=on_progress,
            guard=self._writing,
        )

    @contextmanager
    def _one_syncer(
        self,
        on_progress: Callable[[Progress], None] | None = None,
        settings: Settings | None = None,
    ) -> Iterator[Syncer]:
        """A syncer for one sync of this client: a second sync waits for the first (one within
        a sync of the same thread, from a callback, goes on)."""
        self._check_writer("a sync")  # (before the lock)
        with self._syncing:
            yield self._new_syncer(on_progress, settings or self.settings)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write of a sync: questions in flight finish first, none starts meanwhile, and
        caches are forgotten before they resume, so each sees a document whole, before or after
        (parsing and embedding run outside, while questions go on). A backup's snapshot waits
        for it, and it for the snapshot's start (``upkeep.writes``)."""
        with self.store.upkeep.writes(), self._rw.writing():
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
            with self._one_syncer(on_progress) as syncer:
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
                    self.store.links.count_passages()
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
            with self._one_syncer(settings=corpus_settings(self.settings)) as syncer:
                return syncer.sync_corpus(Path(path), prefix=prefix, allow_removal=allow_removal)
        finally:
            self._changed()

    def add(
        self,
        *paths: str | Path,
        root: str | Path | None = None,
        groups: Iterable[str] | None = None,
    ) -> SyncReport:
        """Add or replace files; each id is its path relative to ``root`` (default: the files'
        common folder, so one file's id is its name). ``groups`` says who may read them
        (default: what the access files under ``root`` say, else ``KGP_DEFAULT_GROUPS``); a
        file whose content is unchanged gets the new groups without being embedded again. A
        file that does not exist, or one file alone that cannot be read, raises
        :class:`DocumentError`; of several, those that cannot be read are listed under the
        report's ``skipped``."""
        from kgp.ingest.readers import supported_suffixes
        from kgp.ingest.report import SyncReport

        files = [Path(path) for path in paths]
        if not files:
            raise DocumentError("add: give one file or more")
        for file in files:
            if not file.is_file():
                raise DocumentError(f"{file}: no such file")
        files = [file.absolute() for file in files]
        common = Path(os.path.commonpath([file.parent for file in files]))
        base = Path(root).absolute() if root is not None else common
        if len(files) > 1:
            return self.add_files(files, root=base, groups=groups)
        report = SyncReport()
        with self._one_syncer() as syncer:
            found = syncer.candidates(files, base, report, groups=groups)
            if found:
                return self._sync_found(syncer, found, report)
        reason = (
            report.skipped[0].reason
            if report.skipped
            else f"unsupported format; kgp reads {', '.join(supported_suffixes())}"
        )
        raise DocumentError(f"{files[0]}: {reason}")

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
        with self._one_syncer() as syncer:
            found = syncer.candidates(
                [Path(p) for p in paths], Path(root), report, groups=groups, id_prefix=id_prefix
            )
            return self._sync_found(syncer, found, report)

    def _sync_found(self, syncer: Syncer, found: list[Candidate], report: SyncReport) -> SyncReport:
        started = time.perf_counter()
        if found:
            try:
                syncer.sync_candidates(found, report)
            finally:
                self._changed()
        report.seconds = round(report.seconds + time.perf_counter() - started, 3)
        return report

    def regroup(self, doc_id: str, groups: Iterable[str]) -> bool:
        """Let ``groups`` read one document instead of those it had (its text is not read or
        embedded again); False when there is no such document. A synced document takes its
        folder's access files' groups again at the next sync of that folder."""
        from kgp.access import check_groups

        chosen = check_groups(list(groups), "groups")
        try:
            with self._one_syncer() as syncer:
                return syncer.regroup(doc_id, chosen)
        finally:
            self._changed()

    def remove(self, doc_id: str) -> bool:
        """Remove one document (by id, the path relative to the synced root)."""
        try:
            with self._one_syncer() as syncer:
                return syncer.remove(doc_id)
        finally:
            self._changed()

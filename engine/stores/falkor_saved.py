"""Files kept beside an embedded graph, trusted only while they describe it: each is saved with
the stamp of the server's append-only log (:meth:`AppendOnlyLog.stamp`), which every write
changes, as the last user's stop leaves it, and read back by a store whose server loaded that
same log and took no write since but this store's own index changes (the start's vector index,
a park): the graph is then the one that was saved. Anything else, another process's write, a
write of this store, a crash and its replay, a compaction, says the file is stale."""

from __future__ import annotations

import re
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

from kgp.stores.falkor_server import EmbeddedServer
from kgp.stores.own_writes import Count, OwnWrites


class LoadedLog:
    """What the log held when this store's server loaded it, and the save its stop is to make."""

    def __init__(self, own: OwnWrites) -> None:
        self._own = own
        self.data_writes = 0  # this store's writes of the graph (its index changes not counted)
        self._loaded: tuple[str, int, int] | None = None  # the stamp, the era, data_writes then
        self._save: tuple[int, Callable[[str], None]] | None = None  # from which era, and how

    def opened(self, loaded: tuple[str, Count] | None) -> None:
        """After an open's connect, before the store writes: the stamp holds if the server is
        the one this store started and changed nothing since it loaded (``loaded``: its stamp
        and count then, :attr:`EmbeddedServer.loaded`)."""
        self._loaded = self._save = None
        era = self._own.now()
        if loaded is not None and self._own.seen == loaded[1]:
            self._loaded = (loaded[0], era, self.data_writes)

    def stamp(self) -> str | None:
        """The loaded log's stamp, while every change since was this store's own and none of
        them wrote the graph; None otherwise."""
        if self._loaded is None:
            return None
        stamp, era, writes = self._loaded
        return stamp if writes == self.data_writes and self._own.now() == era else None

    def save_at_stop(self, era: int, save: Callable[[str], None]) -> None:
        """At the stop of the server by this store's close, if every change since ``era`` was
        its own: ``save(stamp)`` with the stamp of the log the stop leaves."""
        self._save = (era, save)

    def stopping(
        self, park: Callable[[], bool] | None
    ) -> tuple[Callable[[], bool] | None, Callable[[str], None] | None]:
        """``before_shutdown`` and ``after_shutdown`` for :meth:`EmbeddedServer.stop`: the park
        (indexes set aside), then the save, if no other process wrote up to the shutdown (the
        lock is held from the check on: no one else writes)."""
        planned, self._save = self._save, None
        if planned is None:
            return park, None
        era, save = planned
        alone: list[bool] = []

        def before() -> bool:
            take_back = park() if park is not None else False
            alone.append(self._own.now() == era)
            return take_back

        def after(stamp: str) -> None:
            if alone == [True]:
                save(stamp)

        return before, after


def saved_path(server: EmbeddedServer, graph: str, name: str) -> Path:
    """Where the file ``name`` of ``graph`` lives (owner-only, as the server's folder)."""
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", graph)[:40]
    return server.home / f"{name}-{readable}-{sha256(graph.encode()).hexdigest()[:8]}"


class SavedBeside:
    """The embedded store's files beside its graph (:class:`~kgp.stores.falkor.FalkorStore`)."""

    server: EmbeddedServer
    graph_name: str
    _log: LoadedLog

    def log_stamp(self) -> str | None:
        return self._log.stamp()

    def saved_file(self, name: str) -> Path | None:
        return saved_path(self.server, self.graph_name, name)

    def on_last_stop(self, era: int, save: Callable[[str], None]) -> None:
        self._log.save_at_stop(era, save)

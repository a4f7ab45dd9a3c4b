"""Whether every write the embedded server made was this store's own.

What a process keeps of the graph between syncs (the k-NN linker's matrix of every vector and
each passage's neighbour-list summary, :mod:`kgp.ingest.memory`) holds only while no one else
writes: another process's sync may replace a document with one of as many passages, which no
count shows. The server counts the changes it made since its last snapshot
(``rdb_changes_since_last_save``: one per write query that changed something, none for a read or
a compaction of its log, and it never falls but at a snapshot). Read after each of this store's
writes, it has moved since the store last read it by exactly what the write itself says it
changed (one if its statistics show a change, else none) when no one else changed anything
meanwhile; any other move, a restart (another ``run_id``) or a snapshot (another
``rdb_last_save_time``) starts a new era, and whoever kept something in the last one drops
it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import redis

Count = tuple[str, int, int]  # run_id, changes since the last snapshot, that snapshot's time
# a write's statistics (FalkorDB's QueryResult): any of them above zero, and it changed the graph
CHANGES = (
    "nodes_created",
    "nodes_deleted",
    "relationships_created",
    "relationships_deleted",
    "properties_set",
    "properties_removed",
    "labels_added",
    "labels_removed",
    "indices_created",
    "indices_deleted",
)


class OwnWrites:
    """Eras of a store's writes: ``era`` stays the same while every change the server made
    was one of this store's writes (``read`` gives the server's count, None when it cannot)."""

    def __init__(self, read: Callable[[], Count | None]) -> None:
        self._read = read
        self._lock = threading.Lock()  # a write and the read after it, one at a time
        self._seen: Count | None = None  # the count after this store's last write or look
        self.era = 0

    @contextmanager
    def around(self) -> Iterator[Callable[[Any], None]]:
        """Around one write query of this store, which is to be given the write's result (a
        write whose result is not given, a failed one, moves the era)."""
        with self._lock:
            said: list[int] = []
            try:
                yield lambda result: said.append(changes_of(result))
            finally:
                after = self._read()
                if not _stepped(self._seen, after, said[0] if said else None):
                    self.era += 1
                self._seen = after

    @property
    def seen(self) -> Count | None:
        """The server's count as this store last read it."""
        return self._seen

    def now(self) -> int:
        """The era now: the same number as before means no one else wrote meanwhile."""
        with self._lock:
            seen = self._read()
            if seen is None or seen != self._seen:
                self.era += 1
            self._seen = seen
            return self.era


def changes_of(result: Any) -> int:
    """The changes a write query makes to the server's count: one if its statistics show any."""
    return int(any(getattr(result, name, 0) for name in CHANGES))


def _stepped(before: Count | None, after: Count | None, step: int | None) -> bool:
    """Whether the server made exactly ``step`` changes between the two counts; pure."""
    return (
        before is not None
        and after is not None
        and step is not None
        and after[0] == before[0]
        and after[2] == before[2]
        and after[1] - before[1] == step
    )


def server_count(client: Any) -> Count | None:
    """The server's count of changes (``client``: a FalkorDB connection, None before one is
    made), None when it cannot be read."""
    try:
        return count_of(client.connection.info("server", "persistence"))
    except (AttributeError, KeyError, ValueError, redis.RedisError, OSError):
        return None


def count_of(info: Mapping[str, Any]) -> Count:
    """The count of changes in the server's INFO (its server and persistence sections)."""
    return (
        str(info["run_id"]),
        int(info["rdb_changes_since_last_save"]),
        int(info["rdb_last_save_time"]),
    )

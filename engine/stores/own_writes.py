"""Whether every write the embedded server made was this store's own.

What a process keeps of the graph between syncs (the k-NN linker's matrix of every vector and
each passage's neighbour-list summary, :mod:`kgp.ingest.memory`) holds only while no one else
writes: another process's sync may replace a document with one of as many passages, which no
count shows. The server counts the changes it made since its last snapshot
(``rdb_changes_since_last_save``: one per write query that changed something, none for a read or
a compaction of its log). Read before and after each of this store's writes, that count moves by
at most one when the write was the only one meanwhile; any other move, a restart (another
``run_id``) or a snapshot (another ``rdb_last_save_time``) starts a new era, and whoever kept
something in the last one drops it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

Count = tuple[str, int, int]  # run_id, changes since the last snapshot, that snapshot's time


class OwnWrites:
    """Eras of a store's writes: ``era`` stays the same while every change the server made
    was one of this store's writes (``read`` gives the server's count, None when it cannot)."""

    def __init__(self, read: Callable[[], Count | None]) -> None:
        self._read = read
        self._lock = threading.Lock()  # a write and its two reads, one at a time
        self._seen: Count | None = None  # the count after this store's last write or look
        self.era = 0

    @contextmanager
    def around(self) -> Iterator[None]:
        """Around one write query of this store."""
        with self._lock:
            before = self._read()
            try:
                yield
            finally:
                after = self._read()
                if not (before is not None and before == self._seen and _one_step(before, after)):
                    self.era += 1
                self._seen = after

    def now(self) -> int:
        """The era now: the same number as before means no one else wrote meanwhile."""
        with self._lock:
            seen = self._read()
            if seen is None or seen != self._seen:
                self.era += 1
            self._seen = seen
            return self.era


def _one_step(before: Count, after: Count | None) -> bool:
    """Whether the server made at most one change between the two counts; pure."""
    return (
        after is not None
        and after[0] == before[0]
        and after[2] == before[2]
        and 0 <= after[1] - before[1] <= 1
    )


def server_count(client: Any) -> Count | None:
    """The server's count of changes (``client``: a FalkorDB connection, None before one is
    made), None when it cannot be read."""
    try:
        info = client.connection.info("server", "persistence")
        return (
            str(info["run_id"]),
            int(info["rdb_changes_since_last_save"]),
            int(info["rdb_last_save_time"]),
        )
    except (AttributeError, KeyError, ValueError, redis.RedisError, OSError):
        return None

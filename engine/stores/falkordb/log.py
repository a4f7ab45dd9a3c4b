"""The embedded server's append-only file: its size, how far a load of it is, and its
compaction into a snapshot at moments kgp chooses."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import redis
from kgp.errors import StoreUnavailableError

COMPACT_MIN_BYTES = 1024 * 1024  # a log of writes smaller than this is not worth a snapshot


class AppendOnlyLog:
    """The append-only file of the server in ``home``; ``client`` connects to that server."""

    def __init__(self, home: Path, client: Callable[..., redis.Redis]) -> None:
        self.home = home
        self.client = client

    def size(self) -> int:
        """The log's size in bytes as the server counts it: it grows with every write."""
        with self.client(timeout=30.0) as conn:
            return int(conn.info("persistence").get("aof_current_size", 0))

    def loading(self) -> str | None:
        """How far the server's load of its snapshot and log is, in words ("62% of 1.9 GB,
        about 40 s left"), when it says; None when it is not loading or does not answer (it
        answers between parts of its work, not during each)."""
        try:
            with self.client(timeout=1.0) as conn:
                info = conn.info("persistence")
        except (redis.RedisError, OSError):
            return None
        if not int(info.get("loading", 0)):
            return None
        total = int(info.get("loading_total_bytes", 0))
        size = f"{total / 1e9:.1f} GB" if total >= 1e9 else f"{total / 1e6:.0f} MB"
        eta = int(info.get("loading_eta_seconds", 0))
        left = f", about {eta} s left" if eta > 0 else ""
        return f"{float(info.get('loading_loaded_perc', 0.0)):.0f}% of {size}{left}"

    # -- compaction --------------------------------------------------------------------------

    def compact(
        self,
        *,
        min_bytes: int | None = None,
        growth: float = 1.0,
        timeout: float = 600.0,
        wait: bool = True,
    ) -> bool:
        """Rewrite the append-only file as a snapshot when its log of writes has grown past
        ``min_bytes`` and ``growth`` times the last snapshot, so the next start loads quickly
        instead of replaying every write (what redis's automatic rewrite would do, run only at
        moments kgp chooses); True if it ran. A rewrite already running (another process's) is
        waited for first, so the snapshot holds everything written before the call. With
        ``wait`` (default) returns once the rewrite is done; writes may go on meanwhile either
        way (they go to a new part of the log, which follows the new snapshot)."""
        try:
            return self._compact(min_bytes, growth, timeout, wait)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailableError(f"lost the FalkorDB server in {self.home}: {exc}") from None

    def _compact(self, min_bytes: int | None, growth: float, timeout: float, wait: bool) -> bool:
        deadline = time.monotonic() + timeout
        least = COMPACT_MIN_BYTES if min_bytes is None else min_bytes
        with self.client(timeout=600.0) as conn:
            while True:  # (again after another rewrite: it moved the snapshot's size)
                info = conn.info("persistence")
                size = int(info.get("aof_current_size", 0))
                base = int(info.get("aof_base_size", 0))
                if size - base < least or size < (1.0 + growth) * base:
                    return False
                try:
                    conn.bgrewriteaof()
                    break
                except redis.ResponseError as exc:
                    if "already in progress" not in str(exc):
                        raise StoreUnavailableError(f"FalkorDB could not compact: {exc}") from None
                self._rewritten(conn, deadline, timeout)
            if wait:
                self._rewritten(conn, deadline, timeout)
            return True

    def _rewritten(self, conn: redis.Redis, deadline: float, timeout: float) -> None:
        """Wait until no rewrite is running or scheduled."""
        while True:
            info = conn.info("persistence")
            if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        raise StoreUnavailableError(
            f"FalkorDB compaction in {self.home} did not finish in {timeout:.0f} s"
        )

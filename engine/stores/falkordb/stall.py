"""A watch on the embedded server while it holds queries unanswered.

FalkorDB 4.16 deadlocks now and then: every thread waits on a lock and the server uses no CPU
time (seen at a start, and once at the first index of a new graph, its main thread waiting for
the graphs' write lock that no thread held, on a loaded 2-core machine). A client would then wait
for its answer until the socket's timeout, ten minutes. A server that holds a query unanswered
for ``seconds`` while its CPU time does not move is stuck, not working: the watch kills it, the
query fails at once, and the store starts the server again from its append-only file, which
holds every write it acknowledged (:class:`~kgp.stores.falkordb.store.FalkorStore`)."""

from __future__ import annotations

import itertools
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kgp.stores.falkordb.processes import cpu_ticks

logger = logging.getLogger(__name__)


class StallWatch:
    """Watches the process ``pid()`` names while queries are in flight (a daemon thread, started
    by the first query, stopped by :meth:`close`)."""

    def __init__(self, pid: Callable[[], int | None], *, seconds: float, poll: float = 0.5) -> None:
        self.pid = pid
        self.seconds = seconds
        self.poll = poll
        self.killed: int | None = None  # the last server it killed, until read by killed_now()
        self._inflight: dict[int, float] = {}  # query token -> when it was sent
        self._tokens = itertools.count()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watching(self) -> Iterator[None]:
        """Around one query."""
        token = next(self._tokens)
        with self._lock:
            self._inflight[token] = time.monotonic()
            if self._thread is None:
                self._stop.clear()
                self._thread = threading.Thread(
                    target=self._run, name="kgp-stall-watch", daemon=True
                )
                self._thread.start()
        try:
            yield
        finally:
            with self._lock:
                del self._inflight[token]

    def killed_now(self) -> bool:
        """Whether the watch killed the server since this was last asked."""
        with self._lock:
            killed, self.killed = self.killed, None
        return killed is not None

    def stopped(self, store: str, *, write: bool) -> str:
        """Why a query failed when the watch killed its server, for a person."""
        what = "a write" if write else "a query"
        return (
            f"{store}: the server held {what} unanswered without working for "
            f"{self.seconds:.0f} s (stuck: FalkorDB 4.16 deadlocks at times) and was stopped"
        )

    def close(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _run(self) -> None:
        ticks: int | None = None
        changed = time.monotonic()  # when the server's CPU time last moved
        while not self._stop.wait(self.poll):
            now = time.monotonic()
            pid = self.pid()
            seen = cpu_ticks(pid) if pid is not None else None
            if seen is None or seen != ticks:
                ticks, changed = seen, now
                continue
            with self._lock:
                oldest = min(self._inflight.values(), default=now)
            if now - oldest >= self.seconds and now - changed >= self.seconds and pid:
                logger.warning(
                    "the FalkorDB server (pid %d) held a query %.0f s without using CPU time: "
                    "stuck (FalkorDB 4.16 deadlocks at times); stopping it",
                    pid,
                    now - oldest,
                )
                # said before the kill: the query's thread asks as soon as its socket closes,
                # which may be before this thread runs again on a loaded machine
                with self._lock:
                    self.killed = pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:  # it ended by itself: the watch stopped nothing
                    with self._lock:
                        self.killed = None
                    continue
                ticks, changed = None, now

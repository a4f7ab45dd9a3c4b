"""Locks on a graph: a read/write lock for one process's graph, and a gate that a backup
closes on the writes of every process.

The read/write lock: many questions at once, or one write, so a question sees each document
whole, as it was before a write or after it, never half of a replaced one (a retrieval reads the
store in several queries). Writers are preferred, so a stream of questions cannot hold a sync
back for ever; both sides are reentrant per thread (``ask`` reads through ``retrieve``;
``watch`` writes through ``sync``), and a thread that writes may read."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class ReadWriteLock:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers: dict[int, int] = {}  # thread id -> how deep it holds the read side
        self._writer: int | None = None  # the thread holding the write side
        self._writes = 0  # how deep the writer holds it
        self._waiting_writers = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._condition:
            if self._writer != me and me not in self._readers:
                while self._writer is not None or self._waiting_writers:
                    self._condition.wait()
            self._readers[me] = self._readers.get(me, 0) + 1
        try:
            yield
        finally:
            with self._condition:
                self._readers[me] -= 1
                if not self._readers[me]:
                    del self._readers[me]
                    self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._condition:
            if self._writer != me:
                if me in self._readers:
                    raise RuntimeError("a thread reading the graph cannot start a write in it")
                self._waiting_writers += 1
                try:
                    while self._writer is not None or self._readers:
                        self._condition.wait()
                finally:
                    self._waiting_writers -= 1
                self._writer = me
            self._writes += 1
        try:
            yield
        finally:
            with self._condition:
                self._writes -= 1
                if not self._writes:
                    self._writer = None
                    self._condition.notify_all()


class WriteGate:
    """The writes of every process on one data directory, which a backup pauses: each
    document's write holds the gate's shared side (many at once, from any process), a backup
    takes the exclusive side for the moment its snapshot starts, so the copy holds each
    document whole or not at all. File locks (``flock``): a killed holder lets go at once.

    Two files: ``turn``, which a writer holds only while it joins and a backup holds while it
    waits, so a stream of writes cannot keep a backup out; and ``held``, the writes themselves.
    Reentrant per thread (a write inside a write joins once)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._depth = threading.local()

    def _open(self, name: str) -> int:
        return os.open(self.folder / f"writes.{name}", os.O_RDWR | os.O_CREAT, 0o600)

    @contextmanager
    def writing(self) -> Iterator[None]:
        depth = getattr(self._depth, "n", 0)
        if depth:
            self._depth.n = depth + 1
            try:
                yield
            finally:
                self._depth.n -= 1
            return
        turn, held = self._open("turn"), self._open("held")
        try:
            fcntl.flock(turn, fcntl.LOCK_SH)
            fcntl.flock(held, fcntl.LOCK_SH)
            os.close(turn)
            turn = -1
            self._depth.n = 1
            try:
                yield
            finally:
                self._depth.n = 0
        finally:
            for descriptor in (turn, held):
                if descriptor >= 0:
                    os.close(descriptor)

    @contextmanager
    def paused(self, timeout: float) -> Iterator[None]:
        """No write in flight in any process while the block runs; writes that start meanwhile
        wait for its end. Raises TimeoutError when the writes in flight do not end in
        ``timeout`` seconds (and lets them go on)."""
        turn, held = self._open("turn"), self._open("held")
        try:
            deadline = time.monotonic() + timeout
            for descriptor in (turn, held):
                while True:
                    try:
                        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() >= deadline:
                            raise TimeoutError(
                                f"writes to {self.folder} did not pause in {timeout:.0f} s"
                            ) from None
                        time.sleep(0.01)
            yield
        finally:
            os.close(held)
            os.close(turn)

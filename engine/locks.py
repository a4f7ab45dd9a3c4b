"""A read/write lock for one process's graph: many questions at once, or one write, so a question
sees each document whole, as it was before a write or after it, never half of a replaced one
(a retrieval reads the store in several queries). Writers are preferred, so a stream of
questions cannot hold a sync back for ever; both sides are reentrant per thread (``ask`` reads
through ``retrieve``; ``watch`` writes through ``sync``), and a thread that writes may read."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


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

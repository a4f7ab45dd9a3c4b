"""The passages a retriever has read from the store, kept between questions.

A :class:`PassageCache` lives as long as its retriever and is cleared when the graph changes
(``KnowledgeGraph`` calls :meth:`PassageCache.clear` after every sync, add and remove). It is
shared by every thread using the retriever: reads and writes happen under a lock, and callers
work on the snapshot :meth:`PassageCache.get` returns, so a clear by another thread never takes
a passage away halfway through a question."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from kgp.stores.base import GraphStore

CAPACITY = 200_000  # passages kept in memory between questions


@dataclass(frozen=True, slots=True)
class CachedPassage:
    id: str
    text: str
    doc_id: str
    page: int
    table_id: str | None  # the table whose rows the passage holds, if any
    embedding: np.ndarray


class PassageCache:
    """``capacity`` passages at most; 0 keeps none (every call reads the store)."""

    def __init__(self, store: GraphStore, *, capacity: int = CAPACITY) -> None:
        self.store = store
        self.capacity = capacity
        self._rows: dict[str, CachedPassage] = {}
        self._lock = threading.Lock()

    def get(self, ids: Sequence[str]) -> dict[str, CachedPassage]:
        """The passages of ``ids`` that exist, read from the store once (one query for all
        that are not held yet)."""
        with self._lock:
            held = {i: self._rows[i] for i in ids if i in self._rows}
        missing = [i for i in dict.fromkeys(ids) if i not in held]
        if not missing:
            return {i: held[i] for i in ids if i in held}
        fetched = {
            pid: CachedPassage(
                id=pid,
                text=stored.text,
                doc_id=stored.doc_id,
                page=stored.page,
                table_id=stored.table_id,
                embedding=np.asarray(stored.embedding, dtype=np.float32),
            )
            for pid, stored in self.store.passage_vectors(missing).items()
        }
        if self.capacity == 0:
            return {i: fetched[i] for i in ids if i in fetched}
        with self._lock:
            if len(self._rows) + len(fetched) > self.capacity:
                self._rows.clear()
            self._rows.update(fetched)
        found = {**held, **fetched}
        return {i: found[i] for i in ids if i in found}

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {i: p.text for i, p in self.get(ids).items()}

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: p.embedding for i, p in self.get(ids).items()}

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()

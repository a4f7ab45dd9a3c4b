"""The passages a retriever has read from the store, kept between questions.

A :class:`PassageCache` lives as long as its retriever and is cleared when the graph changes
(``KnowledgeGraph`` calls :meth:`PassageCache.clear` after every sync, add and remove). It is
shared by every thread using the retriever: reads and writes happen under a lock, and callers
work on the snapshot :meth:`PassageCache.get` returns, so a clear by another thread never takes
a passage away halfway through a question."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from kgp.stores.base import GraphStore

CAPACITY = 200_000  # passages kept in memory between questions
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class CachedPassage:
    id: str
    text: str
    doc_id: str
    page: int
    table_id: str | None  # the table whose rows the passage holds, if any
    embedding: np.ndarray | None  # None when read without it (PassageCache.texts)
    doc_title: str | None = None  # its document's title and path (None: the store read none)
    doc_path: str | None = None


class SharedCache(Generic[K, V]):
    """A dict shared by threads, at most ``capacity`` entries (0 keeps none; past it, it starts
    again empty). Readers take what is held, fetch the rest without the lock and ``keep`` it
    with the generation they read at: what was read before a ``clear()`` is not kept after
    it, so a sync's clear is never undone by a question that was running during it.

    ``scope`` (the store's caller) keys every entry too: what was read for one caller's
    groups is never handed to another caller."""

    def __init__(self, capacity: int, scope: Callable[[], Hashable] = lambda: None) -> None:
        self.capacity = capacity
        self.scope = scope
        self._items: dict[tuple[Hashable, K], V] = {}
        self._generation = 0
        self._lock = threading.Lock()

    def held(self, keys: Iterable[K]) -> tuple[dict[K, V], int]:
        """The entries held for ``keys``, and the generation to ``keep`` fresh ones with."""
        scope = self.scope()
        with self._lock:
            items = self._items
            found = {k: items[(scope, k)] for k in keys if (scope, k) in items}
            return found, self._generation

    def keep(self, fresh: Mapping[K, V], generation: int) -> None:
        scope = self.scope()
        with self._lock:
            if generation != self._generation or len(fresh) > self.capacity:
                return
            if len(self._items) + len(fresh) > self.capacity:
                self._items.clear()
            self._items.update(((scope, k), v) for k, v in fresh.items())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._generation += 1


class PassageCache:
    """The passages read so far, ``capacity`` at most (0 keeps none: every call reads the
    store)."""

    def __init__(self, store: GraphStore, *, capacity: int = CAPACITY) -> None:
        self.store = store
        self._cache: SharedCache[str, CachedPassage] = SharedCache(capacity, scope=self.scope)

    def scope(self) -> Hashable:
        """Whose passages are read now: the key of the store's caller."""
        return self.store.caller_now().key

    def get(self, ids: Sequence[str], *, vectors: bool = True) -> dict[str, CachedPassage]:
        """The passages of ``ids`` that exist, read from the store once (one query for all
        that are not held yet, or held without the embedding ``vectors`` asks for). Without
        ``vectors``, texts and places only: embeddings are most of what the store sends, and
        the default (TF-IDF) scorer reads none but the final order's."""
        found, generation = self._cache.held(ids)
        if vectors:
            found = {i: p for i, p in found.items() if p.embedding is not None}
        missing = [i for i in dict.fromkeys(ids) if i not in found]
        if missing:
            read = self.store.passage_vectors if vectors else self.store.passage_texts
            fetched = {
                pid: CachedPassage(
                    id=pid,
                    text=stored.text,
                    doc_id=stored.doc_id,
                    page=stored.page,
                    table_id=stored.table_id,
                    embedding=np.asarray(stored.embedding, dtype=np.float32) if vectors else None,
                    doc_title=stored.doc_title,
                    doc_path=stored.doc_path,
                )
                for pid, stored in read(missing).items()
            }
            self._cache.keep(fetched, generation)
            found.update(fetched)
        return {i: found[i] for i in ids if i in found}

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {i: p.text for i, p in self.get(ids, vectors=False).items()}

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: p.embedding for i, p in self.get(ids).items() if p.embedding is not None}

    def clear(self) -> None:
        self._cache.clear()

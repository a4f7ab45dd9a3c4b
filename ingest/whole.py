"""Every passage of the graph as one matrix, while this process knows them all: a sync that
started on an empty graph wrote each one itself. The k-NN linker (:mod:`kgp.ingest.edges`) then
links a group of new passages by one float32 product with every stored vector instead of asking
the vector index: the product finds each new passage's nearest stored passages and every older
passage a new one may enter, exactly (the pairs it finds are scored exactly afterwards, as the
index's are), at about 200 GFLOP/s here against the index's few milliseconds a search at 100k
passages, and with no floor to tune.

It holds what the linker's :class:`~kgp.ingest.memory.Memory` notes: vectors as they are written,
documents as they are forgotten, each passage's degree and weakest score as its list changes. It
is trusted only while the graph's passage count equals its own and no NEEDS_KNN flag waits (a
removal lowers a passage's weakest score only through one): another process's write, a
recovered sync or a removal hands linking back to the index."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from kgp.ingest.scores import ROUGH
from kgp.stores.model import passage_document

CHUNK = 8192  # stored rows per product (64 MB of scores against 2,048 new passages)
FIRST = 1024  # rows of the first product, whose k best per new passage (a partition of the
# block, 0.3 s for 8,192 x 2,048) set the first bar; the later blocks pass it only near the top
MARGIN = 2 * ROUGH  # a float32 product is within ROUGH of the exact score, each side
LIMIT = 4_000_000  # passages at most (1.5 KB each at 384 dimensions); past it, the index


class Whole:
    """The stored passages' vectors and bars (the least score that enters each one's
    neighbours), row by row; ``known`` while they are every passage of the graph."""

    def __init__(self, k: int, limit: int = LIMIT) -> None:
        self.k = k
        self.limit = limit
        self.known = False
        self._clear()

    def _clear(self) -> None:
        self._ids: list[str | None] = []
        self._rows: dict[str, int] = {}
        self._docs: dict[str, set[str]] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._bars = np.zeros(0, dtype=np.float32)
        self._live = np.zeros(0, dtype=bool)
        # each row's neighbour list as last noted: its degree (-1: none noted) and weakest
        # score (NaN: none, kept as read), which a saved matrix keeps (kgp.ingest.whole_file)
        self._degrees = np.zeros(0, dtype=np.int32)
        self._weakest = np.zeros(0, dtype=np.float64)

    @property
    def count(self) -> int:
        """How many passages are held."""
        return len(self._rows)

    def start(self) -> None:
        """The graph holds no passage: from now on, every one it gains is added here."""
        self.known = True
        self._clear()

    def stop(self) -> None:
        """Not every passage is known (or the limit is passed): free the matrix."""
        self.known = False
        self._clear()

    # -- what the linker's memory notes -------------------------------------------------------

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Passages written (or read back) with their vectors; one already held is updated."""
        if not self.known or not len(ids):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        fresh = [n for n, pid in enumerate(ids) if pid not in self._rows]
        if self.count + len(fresh) > self.limit:
            self.stop()
            return
        for n, pid in enumerate(ids):
            if pid in self._rows:
                self._matrix[self._rows[pid]] = vectors[n]
        used = len(self._ids)
        self._grow(used + len(fresh), vectors.shape[1])
        for offset, n in enumerate(fresh):
            pid = ids[n]
            self._rows[pid] = used + offset
            self._ids.append(pid)
            self._docs.setdefault(passage_document(pid), set()).add(pid)
        rows = slice(used, used + len(fresh))
        self._matrix[rows] = vectors[fresh]
        self._bars[rows] = -np.inf  # until its list is noted
        self._live[rows] = True
        self._degrees[rows] = -1
        self._weakest[rows] = np.nan

    def drop(self, doc_id: str) -> None:
        """A document was written again or removed: its passages' rows are dead."""
        for pid in self._docs.pop(doc_id, ()):
            row = self._rows.pop(pid)
            self._ids[row] = None
            self._live[row] = False
        if len(self._ids) > 1024 and self.count < len(self._ids) // 2:
            self._compact()

    def note(self, pid: str, degree: int, weakest: float | None) -> None:
        """A passage's neighbour list as written or read: its degree and weakest score."""
        row = self._rows.get(pid)
        if row is not None:
            below = degree < self.k or weakest is None
            self._bars[row] = -np.inf if below else np.float32(weakest) - np.float32(ROUGH)
            self._degrees[row] = degree
            self._weakest[row] = np.nan if weakest is None else weakest

    def vector(self, pid: str) -> np.ndarray | None:
        row = self._rows.get(pid)
        return None if row is None else self._matrix[row]

    # -- linking ------------------------------------------------------------------------------

    def scan(
        self, queries: np.ndarray, skip_docs: Collection[str] = ()
    ) -> tuple[list[dict[str, float]], list[str]]:
        """For each new passage (a row of ``queries``), its nearest held passages by float32
        score: every one within MARGIN of its k-th (at least its k best, with their ties); and
        the held passages a new one can enter (a float32 score within MARGIN of its bar). The
        passages of ``skip_docs`` (documents about to be written again) take no part."""
        queries = np.asarray(queries, dtype=np.float32)
        width = len(queries)
        used = len(self._ids)
        if not width or not self.count:
            return [{} for _ in range(width)], []
        live = self._live[:used].copy()
        for doc_id in skip_docs:
            for pid in self._docs.get(doc_id, ()):
                live[self._rows[pid]] = False
        best = np.full((width, self.k), -np.inf, dtype=np.float32)  # each column's k best
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # rows, columns, scores
        weak: list[np.ndarray] = []
        transposed = np.ascontiguousarray(queries.T)
        scores = np.empty((min(CHUNK, used), width), dtype=np.float32)
        for start in [0, *range(min(FIRST, CHUNK), used, CHUNK)]:
            end = min(used, start + CHUNK if start else min(FIRST, CHUNK))
            block = scores[: end - start]
            np.matmul(self._matrix[start:end], transposed, out=block)
            alive = live[start:end]
            block[~alive] = -np.inf
            gains = (block.max(axis=1) >= self._bars[start:end] - MARGIN) & alive
            weak.append(start + np.flatnonzero(gains))
            seeding = not np.isfinite(best[:, -1]).all()
            if seeding:  # each column's k best of this block, at once (then no merge below)
                height = len(block)
                top = (
                    np.partition(block, height - self.k, axis=0)[height - self.k :]
                    if height > self.k
                    else block
                )
                best = _k_best(best, np.tile(np.arange(width), len(top)), top.ravel())
            # the k-th so far (no later k-th is lower); finite, so that dead rows never pass
            bar = np.maximum(best[:, -1] - MARGIN, -2.0)
            rows, columns = _at_or_above(block, bar)
            if not len(rows):
                continue
            values = block[rows, columns]
            found.append((start + rows, columns, values))
            if not seeding:
                best = _k_best(best, columns, values)
        bar = best[:, -1] - MARGIN
        candidates: list[dict[str, float]] = [{} for _ in range(width)]
        for rows, columns, values in found:
            keep = values >= bar[columns]
            for row, column, value in zip(
                rows[keep].tolist(), columns[keep].tolist(), values[keep].tolist(), strict=True
            ):
                candidates[column][str(self._ids[row])] = value
        gaining = np.concatenate(weak) if weak else np.zeros(0, dtype=np.int64)
        return candidates, [str(self._ids[row]) for row in gaining.tolist()]

    # -- saved and restored (kgp.ingest.whole_file) ------------------------------------------

    def saved_rows(self) -> tuple[list[str], np.ndarray, list[tuple[str, int]]]:
        """The held passages' ids and rows, grouped by document, with each document and its
        number of passages: what a saved matrix holds, in its order."""
        by_doc = sorted(self._docs.items())
        ids = [pid for _, pids in by_doc for pid in sorted(pids)]
        rows = np.fromiter((self._rows[pid] for pid in ids), dtype=np.int64, count=len(ids))
        return ids, rows, [(doc_id, len(pids)) for doc_id, pids in by_doc]

    def lists_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The degrees (-1: none noted) and weakest scores (NaN: none) of the given rows."""
        return self._degrees[rows], self._weakest[rows]

    def vectors_of(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of the given rows (a copy)."""
        vectors: np.ndarray = self._matrix[rows]
        return vectors

    @classmethod
    def restored(
        cls,
        k: int,
        ids: list[str],
        documents: Sequence[tuple[str, int]],
        matrix: np.ndarray,
        degrees: np.ndarray,
        weakest: np.ndarray,
        limit: int = LIMIT,
    ) -> Whole:
        """Every passage of the graph as a saved matrix held them (``matrix``: at least as many
        rows as ids, the rest free for passages added later, e.g. a copy-on-write map of the
        file), ``known``."""
        whole = cls(k, limit)
        whole.known = True
        count, size = len(ids), len(matrix)
        whole._ids = list(ids)
        whole._rows = dict(zip(ids, range(count), strict=True))
        at = 0
        for doc_id, passages in documents:
            whole._docs[doc_id] = set(ids[at : at + passages])
            at += passages
        whole._matrix = matrix
        whole._live = np.zeros(size, dtype=bool)
        whole._live[:count] = True
        whole._degrees = np.full(size, -1, dtype=np.int32)
        whole._degrees[:count] = degrees
        whole._weakest = np.full(size, np.nan, dtype=np.float64)
        whole._weakest[:count] = weakest
        noted = (whole._degrees >= k) & ~np.isnan(whole._weakest)
        bars = whole._weakest.astype(np.float32) - np.float32(ROUGH)  # (as note() makes them)
        whole._bars = np.where(noted, bars, np.float32(-np.inf)).astype(np.float32)
        return whole

    def noted_lists(self) -> dict[str, tuple[int, float | None]]:
        """The degree and weakest score of every held passage whose list was noted."""
        used = len(self._ids)
        rows = np.flatnonzero(self._live[:used] & (self._degrees[:used] >= 0))
        degrees, weakest = self._degrees[rows].tolist(), self._weakest[rows].tolist()
        return {
            str(self._ids[row]): (degree, None if value != value else value)  # (NaN: None)
            for row, degree, value in zip(rows.tolist(), degrees, weakest, strict=True)
        }

    # -- storage ------------------------------------------------------------------------------

    def _grow(self, rows: int, dimension: int) -> None:
        if self._matrix.shape[1] != dimension:
            self._matrix = np.zeros((0, dimension), dtype=np.float32)
        if rows <= len(self._matrix):
            return
        size = max(rows, 2 * len(self._matrix), 1024)
        used = len(self._ids)
        matrix = np.zeros((size, dimension), dtype=np.float32)
        matrix[:used] = self._matrix[:used]
        bars = np.full(size, -np.inf, dtype=np.float32)
        bars[:used] = self._bars[:used]
        live = np.zeros(size, dtype=bool)
        live[:used] = self._live[:used]
        degrees = np.full(size, -1, dtype=np.int32)
        degrees[:used] = self._degrees[:used]
        weakest = np.full(size, np.nan, dtype=np.float64)
        weakest[:used] = self._weakest[:used]
        self._matrix, self._bars, self._live = matrix, bars, live
        self._degrees, self._weakest = degrees, weakest

    def _compact(self) -> None:
        keep = np.flatnonzero(self._live[: len(self._ids)])
        ids = [self._ids[row] for row in keep.tolist()]
        self._matrix = self._matrix[keep].copy()
        self._bars = self._bars[keep].copy()
        self._degrees = self._degrees[keep].copy()
        self._weakest = self._weakest[keep].copy()
        self._live = np.ones(len(keep), dtype=bool)
        self._ids = ids
        self._rows = {str(pid): row for row, pid in enumerate(ids)}


def _at_or_above(block: np.ndarray, bar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns of the entries of ``block`` at or above their column's ``bar``, in
    row-major order: ``np.nonzero(block >= bar)``, with the comparisons read eight at a time as
    one word, since few pass (6.5x faster at 8,192 x 2,048); pure."""
    flat = (block >= bar).reshape(-1)
    cut = len(flat) // 8 * 8
    words = np.flatnonzero(flat[:cut].view(np.uint64))
    spots = (words[:, None] * 8 + np.arange(8)).ravel()
    spots = np.concatenate([spots[flat[spots]], cut + np.flatnonzero(flat[cut:])])
    rows, columns = np.divmod(spots, block.shape[1])
    return rows, columns


def _k_best(best: np.ndarray, columns: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each column's k best scores (descending) after adding ``values`` at ``columns``; pure."""
    width, k = best.shape
    every_column = np.concatenate([np.repeat(np.arange(width), k), columns])
    every_value = np.concatenate([best.ravel(), values])
    order = np.lexsort((-every_value, every_column))  # by column, best first
    every_column, every_value = every_column[order], every_value[order]
    first = np.searchsorted(every_column, np.arange(width))
    chosen: np.ndarray = every_value[first[:, None] + np.arange(k)[None, :]]
    return chosen

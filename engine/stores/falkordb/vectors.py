"""The embedded store's passage vectors in an HNSW index of kgp's own (usearch), beside the graph.

The graph is the one source of truth: every Passage keeps its ``embedding`` and an integer
``vkey``, allocated from ``Meta.next_vkey`` by the write that creates it (keys are never given
twice; a passage written again gets a new one). The index file is derived from it: loaded at an
open and checked against the graph's keys (those missing added from their stored vectors, those
the graph no longer holds removed), so a kill at any point, a restored backup or a file deleted
by hand all end in an index equal to the graph. A process keeps up with writes of others by the
graph's counter (each search's read-back returns it: keys above the index's are added); keys
others removed stay until its next open, and are never returned: every hit is read back through
the graph, with the caller's access filter. Why: docs/decisions/0001-vectors-beside-the-graph.md."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import numpy as np

# onnxruntime (PyMuPDF's layout reader) imported after usearch 2.26 crashes the process, before
# it does not: loaded first where it is installed (docs/decisions/0001-vectors-beside-the-graph.md)
with suppress(ImportError):
    import onnxruntime  # noqa: F401
from kgp.locks import ReadWriteLock
from kgp.stores.falkordb.processes import pid_alive
from usearch.compiled import ScalarKind
from usearch.index import Index

log = logging.getLogger(__name__)

Run = Callable[..., list[dict[str, Any]]]  # the store's ``run`` (named queries)

CONNECTIVITY = 32  # HNSW links per entry
EXPANSION_ADD = 512  # candidates kept while an entry is linked in (measured: decisions/0001)
EXPANSION_SEARCH = 512  # candidates kept per search, at least the depth asked (measured:
# docs/benchmarks.md, "The vector index beside the graph").
# At a fixed count a larger index finds less of the exact nearest, so a search of fewer than MANY
# vectors (a question's) keeps more past SEARCH_GROWS_PAST entries: (entries / it) **
# SEARCH_GROWTH times as many. A sync's many searches keep EXPANSION_SEARCH: they are most of a
# first sync's time, and look deeper where they need to (decisions/0001).
SEARCH_GROWS_PAST = 100_000
SEARCH_GROWTH = 0.4
EXACT_BELOW = 50_000  # up to this many entries a search compares every vector: as fast, exact
EXACT_BELOW_SINGLE = 20_000  # the same for an index at single precision (an older graph's)
FIRST_KEY = 1  # (vector_mark.cypher's too: FalkorDB 4.16's range index, loaded, missed 0)
READ_BATCH = 5_000  # vectors read from the graph per query when the index catches up
THREADS = os.cpu_count() or 1  # threads of one add, or of one search of many vectors (a sync's)
MANY = 16  # vectors in one search worth threads of their own (a question's search is one)
SAVE_SHARE = 256  # a checkpoint or a close writes the file once the entries changed since it
# was last written reach 1/SAVE_SHARE of the index: re-adding an entry at an open costs about as
# much as writing a few hundred to the file, so what the file lacks costs the next open about one
# save at most, and a small add to a large index writes no file (decisions/0001)


class PassageVectors:
    """The index of one graph's passage vectors, searched by many threads, changed by one at a
    time. ``run`` asks the graph; ``path`` is the index file (None: kept in memory only)."""

    def __init__(self, run: Run, path: Path | None) -> None:
        self._run, self.path = run, path
        self._index: Index | None = None
        self._next = FIRST_KEY  # the graph's counter the index has caught up to
        self._unsaved = 0  # entries added or removed since the file was loaded or written
        self._lock = ReadWriteLock()  # usearch crashes a search that runs while an add grows it

    def __len__(self) -> int:
        index = self._index  # (once: a clear may run meanwhile)
        return 0 if index is None else len(index)

    def keys(self) -> set[int]:
        """The keys the index holds."""
        index = self._index
        if index is None or not len(index):
            return set()
        with self._lock.reading():
            return {int(k) for k in np.asarray(index.keys)}

    @property
    def half(self) -> bool:
        """Whether the index holds its vectors at half precision (see :func:`_fitting`)."""
        index = self._index
        return index is not None and _half(index)

    @property
    def dimension(self) -> int | None:
        return None if self._index is None else int(self._index.ndim)

    # -- keeping the index equal to the graph ------------------------------------------------

    def open(self, dimension: int | None) -> None:
        """Load the file and bring it up to date with the graph's keys (or build it from the
        graph's vectors where there is no usable file). ``dimension``: the graph's, None in a
        graph without passages yet (the first write's vectors give it)."""
        with self._lock.writing():
            index = self._loaded(dimension)
            self._unsaved = 0
            if index is None and dimension is not None:
                index = _new(dimension)
            self._index = index
            # (read first: what is written meanwhile, the next catch-up adds)
            mark = self._next = self._graph_next()
            if index is None:
                return
            graph = set(self._graph_keys())
            held = self.keys()
            gone = held - graph
            if gone:
                index.remove(np.fromiter(gone, dtype=np.uint64, count=len(gone)))
                self._unsaved += len(gone)
            self._add_by_keys(sorted(graph - held))
            self._next = mark

    def _loaded(self, dimension: int | None) -> Index | None:
        if self.path is None:
            return None
        for leftover in self.path.parent.glob(f"{self.path.name}.*.tmp"):
            pid = leftover.name[len(self.path.name) + 1 :].split("-")[0]
            if not (pid.isdigit() and pid_alive(int(pid))):
                leftover.unlink(missing_ok=True)  # a save its process did not live to finish
        if not self.path.exists():
            return None
        try:
            index = Index.restore(str(self.path))
        except (RuntimeError, ValueError, OSError):
            index = None  # unreadable: rebuilt from the graph
        if index is None or (dimension is not None and int(index.ndim) != dimension):
            return None
        # the file keeps the graph, not its candidates (restored: usearch's defaults); the
        # setters exist, though their stubs read as read-only
        index.expansion_search = EXPANSION_SEARCH  # type: ignore[misc]
        index.expansion_add = EXPANSION_ADD  # type: ignore[misc]
        return index

    def behind(self, mark: int | None) -> bool:
        """Whether the graph's key counter ``mark`` (read by a search's own query) is past what
        the index has caught up to: another process wrote."""
        return mark is not None and mark > self._next

    def catch_up(self) -> None:
        """Add the passages written since the index last caught up (by this process or
        another: the graph's counter moved)."""
        if self._graph_next() <= self._next:
            return
        with self._lock.writing():
            now = self._graph_next()
            if now <= self._next:
                return
            start = self._next
            while True:
                rows = self._run(
                    "vectors_from_key", {"from": start, "to": now, "limit": READ_BATCH}
                )
                self._add({int(r["key"]): r["embedding"] for r in rows})
                if len(rows) < READ_BATCH:
                    break
                start = max(int(r["key"]) for r in rows) + 1
            self._next = now

    def added(self, vectors: Mapping[int, Sequence[float]], first: int, after: int) -> None:
        """A write of this process created these passages (key -> vector), its keys from
        ``first`` up to ``after``: added without reading them back (what others wrote meanwhile
        is read by the next catch-up)."""
        with self._lock.writing():
            self._add(vectors)
            if self._next == first:
                self._next = after

    def removed(self, keys: Iterable[int]) -> None:
        """Passages that are gone from the graph."""
        keys = list(map(int, keys))
        if not keys or self._index is None:
            return
        with self._lock.writing():
            gone = [k for k in keys if self._index is not None and k in self._index]
            if gone:
                self._index.remove(np.asarray(gone, dtype=np.uint64))
                self._unsaved += len(gone)

    def clear(self) -> None:
        with self._lock.writing():
            self._index, self._next, self._unsaved = None, FIRST_KEY, 0
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def due(self) -> bool:
        """Whether enough has changed since the file was written for a checkpoint or a close to
        write it (SAVE_SHARE): what it lacks, the next open re-adds from the graph."""
        return self._unsaved > 0 and self._unsaved * SAVE_SHARE >= len(self)

    def save(self) -> None:
        """Write the file atomically (a temporary file of this save's own, flushed, renamed over
        the old one) if anything changed since it was loaded or written; changes and searches
        wait for the index's part, not for the flush. One that cannot be written (a full disk)
        is logged and left as it was: the next open brings whatever file it finds up to the
        graph."""
        if self.path is None or not self._unsaved:
            return
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}-{uuid.uuid4().hex}.tmp")
        written = 0
        try:
            with self._lock.writing():
                if self._index is None or not self._unsaved:
                    return
                self._index.save(str(temporary))
                written, self._unsaved = self._unsaved, 0
            os.chmod(temporary, 0o600)  # (owner-only, as the data directory)
            with open(temporary, "rb") as file:
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except (RuntimeError, OSError) as exc:
            temporary.unlink(missing_ok=True)
            with self._lock.writing():
                self._unsaved += written
            log.warning(
                "could not save the vector index %s (%s); the next open rebuilds what it lacks "
                "from the graph",
                self.path,
                exc,
            )

    # -- searching --------------------------------------------------------------------------

    def search(
        self, vectors: Sequence[Sequence[float]], depth: int, *, exact: bool = False
    ) -> list[list[tuple[int, float]]]:
        """For each vector its ``depth`` nearest keys with their cosine similarity, best first
        (``exact``: compared with every vector, as always in a small index or a deep search). A
        search of fewer than MANY vectors (a question's) keeps :func:`search_expansion`'s
        candidates, a sync's many keep the index's own."""
        index = self._index
        if index is None or not len(index) or not vectors:
            return [[] for _ in vectors]
        queries = np.asarray(vectors, dtype=np.float32)
        below = EXACT_BELOW if _half(index) else EXACT_BELOW_SINGLE
        exact = exact or len(index) <= below or depth * 4 >= len(index)
        few = len(queries) < MANY
        # (usearch keeps as many candidates as it is asked for results, if more than its own)
        asked = max(depth, search_expansion(len(index))) if few and not exact else depth
        with self._lock.reading():
            found = index.search(
                queries, min(asked, len(index)), exact=exact, threads=1 if few else THREADS
            )
        keys, distances = np.atleast_2d(found.keys), np.atleast_2d(found.distances)
        counts = getattr(found, "counts", np.asarray([keys.shape[1]]))  # (one vector: Matches)
        return [
            [(int(k), 1.0 - float(d)) for k, d in zip(keys[i][:n], distances[i][:n], strict=True)]
            for i, n in enumerate(np.minimum(counts, depth).tolist())
        ]

    def get(self, keys: Sequence[int]) -> dict[int, np.ndarray]:
        """The vectors the index holds of ``keys``, in float32 (a key is given once, with its
        vector, and the index holds it exactly, so a held key's vector is the graph's); keys it
        does not hold are left out."""
        index = self._index
        if index is None or not keys:
            return {}
        wanted = np.asarray(keys, dtype=np.uint64)
        with self._lock.reading():
            found: Any = index.get(wanted, dtype="f32")  # (a tuple: a vector, or None, a key)
        return {int(k): v for k, v in zip(wanted.tolist(), found, strict=True) if v is not None}

    def recall_at_10(self, vectors: Sequence[Sequence[float]]) -> float | None:
        """The index's recall@10 against exact search, averaged over ``vectors``."""
        if not vectors or not len(self):
            return None
        near, truth = self.search(vectors, 10), self.search(vectors, 10, exact=True)
        shares = [
            len({k for k, _ in a} & {k for k, _ in b}) / max(1, len(b))
            for a, b in zip(near, truth, strict=True)
        ]
        return round(sum(shares) / len(shares), 4)

    # -- the graph's side -------------------------------------------------------------------

    def _graph_next(self) -> int:
        rows = self._run("vector_mark")  # (none before the graph's first write)
        return int(rows[0]["next"]) if rows else FIRST_KEY

    def _graph_keys(self) -> list[int]:
        rows = self._run("vector_keys")
        return [int(k) for k in (rows[0]["keys"] if rows else []) if k is not None]

    def _add_by_keys(self, keys: Sequence[int]) -> None:
        for at in range(0, len(keys), READ_BATCH):
            rows = self._run("vectors_by_key", {"keys": list(keys[at : at + READ_BATCH])})
            self._add({int(r["key"]): r["embedding"] for r in rows})

    def _add(self, vectors: Mapping[int, Sequence[float]]) -> None:
        """Add entries (the caller holds ``_lock`` to change); a key already held is replaced."""
        if not vectors:
            return
        keys = np.fromiter(vectors, dtype=np.uint64, count=len(vectors))
        values = np.asarray(list(vectors.values()), dtype=np.float32)
        before = self._index
        self._index = _fitting(before, values)
        if before is not None and self._index is not before:
            self._unsaved += len(before)  # (widened: the file is written again whole)
        held = [k for k in keys.tolist() if k in self._index]
        if held:
            self._index.remove(np.asarray(held, dtype=np.uint64))
        self._index.add(keys, values, threads=THREADS)
        self._unsaved += len(held) + len(keys)


def search_expansion(entries: int) -> int:
    """The candidates a search keeps in an index of ``entries``."""
    grown: float = EXPANSION_SEARCH * (entries / SEARCH_GROWS_PAST) ** SEARCH_GROWTH
    return max(EXPANSION_SEARCH, round(grown))


def _fitting(index: Index | None, values: np.ndarray) -> Index:
    """``index``, or the one to add ``values`` to instead: an empty index is made anew, at half
    precision if ``values`` are all float16 values (as :func:`kgp.stores.model.stored_vectors`
    makes them: the index then holds each vector exactly in half the memory); a half-precision
    one given other values (a graph written before vectors were stored so, or an import of its
    export) is widened to single precision with the entries it holds."""
    half = bool(np.array_equal(values.astype(np.float16).astype(np.float32), values))
    if index is None or not len(index):
        return _new(values.shape[1], half=half)
    if half or not _half(index):
        return index
    keys = np.asarray(index.keys, dtype=np.uint64)
    wide = _new(int(index.ndim), half=False)
    held: Any = index.get(keys, dtype="f32")  # (a tuple: one vector a key)
    wide.add(keys, np.stack(held), threads=THREADS)
    return wide


def _half(index: Index) -> bool:
    return bool(index.dtype == ScalarKind.F16)


def _new(dimension: int, *, half: bool = False) -> Index:
    return Index(
        ndim=dimension,
        metric="cos",
        dtype="f16" if half else "f32",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )

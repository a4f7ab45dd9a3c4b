"""What the k-NN linker (:mod:`kgp.ingest.edges`) keeps of the graph between the groups of one
sync: passages' vectors and their neighbour lists' degree and weakest score. In a long sync the
older passages checked against new ones are anywhere in the graph and the same weak ones come
back group after group: reading one back costs a query row, and a vector about 0.1-0.2 ms (the
server formats each of its floats as text)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import cast

import numpy as np
from kgp.ingest.scores import ROUGH
from kgp.stores.base import GraphStore
from kgp.stores.model import SimilarEdge, passage_document
from kgp.stores.search import TIE

Link = tuple[int, float | None, bool]  # degree, weakest score, flagged for a refill
REACH_NEW = 128  # new passages, at most, in a group whose reads the store narrows: which weak
# passages' vectors are worth reading (it compares every pair: about 2.5 us each at 10k passages,
# a vector read 0.1-0.2 ms) and which links (a larger group keeps every list it reads for the next)


def reach(
    near: Mapping[str, Mapping[int, float]], weak: Collection[str], new: int
) -> dict[str, float] | None:
    """For a group of at most REACH_NEW new passages, the highest similarity of each stored
    passage found near them (``near``: passage -> new passage -> similarity) to any of them,
    weakly linked ones left out (they are read whole), for :meth:`Memory.links`; None for a
    larger group, whose lists are all read (and kept for its next groups); pure."""
    if new > REACH_NEW:
        return None
    return {pid: max(sims.values()) for pid, sims in near.items() if pid not in weak}


class Memory:
    """Vectors and neighbour-list summaries of passages, as this sync last wrote or read them,
    each kept for up to ``size`` passages (the oldest dropped first: about 1.9 KB a vector, so up
    to 1.9 GB in a sync of a million passages). Dropped at each sync's start (:meth:`begin`):
    another process may have written meanwhile."""

    def __init__(self, store: GraphStore, size: int, *, k: int = 5) -> None:
        self.store = store
        self.size = size
        self.k = k
        self._vectors: dict[str, np.ndarray] = {}
        self._held: dict[str, set[str]] = {}  # document -> its passages with a vector kept
        # (degree, weakest) of passages none flagged: trusted only while the graph holds no
        # NEEDS_KNN flag, since a removal lowers a passage's weakest only through one
        self._links: dict[str, tuple[int, float | None]] = {}
        self.syncs = 0  # syncs begun (the linker looks for its budget once in each)

    def begin(self) -> None:
        """At a sync's start: nothing kept of an earlier one."""
        self.syncs += 1
        self._vectors.clear()
        self._held.clear()
        self._links.clear()

    # -- vectors -----------------------------------------------------------------------------

    def remember(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Keep vectors just written or fetched."""
        for pid, vector in zip(ids, vectors, strict=True):
            self._vectors[pid] = np.asarray(vector, dtype=np.float32)
            self._held.setdefault(passage_document(pid), set()).add(pid)
        while len(self._vectors) > self.size:
            oldest = next(iter(self._vectors))
            del self._vectors[oldest]
            self._held[passage_document(oldest)].discard(oldest)

    def forget(self, doc_id: str) -> None:
        """A document was written again or removed: its vectors are no longer known."""
        for pid in self._held.pop(doc_id, ()):
            self._vectors.pop(pid, None)

    def vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """Vectors of passages (those in the graph): kept ones, the rest fetched and kept."""
        wanted = list(dict.fromkeys(ids))
        out = {pid: self._vectors[pid] for pid in wanted if pid in self._vectors}
        missing = [pid for pid in wanted if pid not in out]
        fetched = {
            pid: np.asarray(embedding, dtype=np.float32)
            for pid, embedding in self.store.links.passage_embeddings(missing).items()
        }
        if fetched:
            self.remember(list(fetched), np.stack(list(fetched.values())))
        return out | fetched

    def kept(self, pid: str) -> bool:
        """Whether a passage's vector is held here (no read needed)."""
        return pid in self._vectors

    def reachable(
        self, ids: Sequence[str], bars: Mapping[str, float], matrix: np.ndarray
    ) -> list[str]:
        """Of stored passages to be compared with every new passage (the rows of ``matrix``),
        those whose list a new one may enter: a passage with a bar (k neighbours, the weakest
        less the tie margin) whose vector is not held here is left out when the store's
        similarity to every new passage lies more than ``2 * ROUGH`` below its bar (the store's
        float32 cosine is within ROUGH of the exact score, so no exact score reaches the bar).
        Most weakly linked passages are far from a small group's passages; reading a vector
        costs more than the store's check of a few of them (for at most REACH_NEW new
        passages; a larger group reads them)."""
        unknown = [pid for pid in ids if bars.get(pid, -np.inf) > -np.inf and not self.kept(pid)]
        if not unknown or len(matrix) > REACH_NEW:
            return list(ids)
        best = self.store.links.best_similarities(unknown, matrix.tolist())
        far = {pid for pid in unknown if best.get(pid, np.inf) < bars[pid] - 2 * ROUGH}
        return [pid for pid in ids if pid not in far]

    # -- neighbour lists ---------------------------------------------------------------------

    def links(
        self, ids: Sequence[str], reach: Mapping[str, float] | None = None
    ) -> dict[str, Link]:
        """``(degree, weakest, flagged)`` of passages (those in the graph). A passage's list
        changes only by the linker's writes, which it notes here, or by a removal, which flags
        the passages that lost a neighbour (NEEDS_KNN) until a refill: so while the graph holds
        a flag, every passage is read afresh. ``reach``: for some of the ids, their highest
        similarity to a new passage; while no flag waits, those are read only where a new
        passage may enter their list (:meth:`LinkQueries.links_within_reach`, with twice the
        tie margin the linker's bar allows), the others left out as if absent."""
        flags = self.store.links.knn_flags() > 0
        if flags:
            self._links.clear()
        known = {pid: (*self._links[pid], False) for pid in ids if pid in self._links}
        unread = [pid for pid in ids if pid not in known]
        narrow = {} if flags or not reach else {pid: reach[pid] for pid in unread if pid in reach}
        read = self.store.links.weakest_links(
            [pid for pid in unread if pid not in narrow], flags=flags
        )
        if narrow:
            found = self.store.links.links_within_reach(narrow, k=self.k, margin=2 * TIE)
            read |= {pid: (degree, weakest, False) for pid, (degree, weakest) in found.items()}
        for pid, (degree, weakest, flagged) in read.items():
            if not flagged:
                self._note(pid, degree, weakest)
        return known | read

    def note_rows(self, rows: Sequence[Mapping[str, object]]) -> None:
        """Neighbour lists just written (``replace_similar``'s rows)."""
        for row in rows:
            targets = cast(Sequence[Mapping[str, float]], row["targets"])
            scores = [float(t["score"]) for t in targets]
            self._note(str(row["source"]), len(scores), min(scores, default=None))

    def note_edges(self, sources: Sequence[str], edges: Sequence[SimilarEdge]) -> None:
        """The out-edges new passages were just written with."""
        scores: dict[str, list[float]] = {pid: [] for pid in sources}
        for edge in edges:
            scores[edge.source].append(edge.score)
        for pid, values in scores.items():
            self._note(pid, len(values), min(values, default=None))

    def _note(self, pid: str, degree: int, weakest: float | None) -> None:
        self._links.pop(pid, None)  # the newest last, so the oldest is dropped first
        self._links[pid] = (degree, weakest)
        while len(self._links) > self.size:
            del self._links[next(iter(self._links))]

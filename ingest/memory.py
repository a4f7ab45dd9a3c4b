"""What the k-NN linker (:mod:`kgp.ingest.edges`) keeps of the graph between groups of a sync:
passages' vectors and their neighbour lists' degree and weakest score. In a long sync the older
passages checked against new ones are anywhere in the graph and the same weak ones come back group
after group: reading one back costs a query row, and a vector about 0.1-0.2 ms (the server
formats each of its floats as text)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import cast

import numpy as np
from kgp.ingest.scores import ROUGH
from kgp.ingest.whole import Whole
from kgp.stores.base import GraphStore
from kgp.stores.model import SimilarEdge, passage_document
from kgp.stores.search import TIE

Link = tuple[int, float | None, bool]  # degree, weakest score, flagged for a refill
LOAD_SECONDS = 2e-4  # to read one passage's vector and list into the whole matrix: 0.13 ms
# measured alone at 10k, 0.29 ms at 100k beside two other runs (0.6 ms when the FalkorDB client
# parsed each float from text, before kgp.stores.falkor_reply)
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


def read_whole(
    store: GraphStore, k: int, batch: int = 10_000
) -> tuple[Whole, dict[str, tuple[int, float | None]]]:
    """Every passage's vector, as a whole matrix (``known`` unless the graph holds more than its
    limit), and the degree and weakest score of its neighbour list; read while no NEEDS_KNN
    flag waits (the lists are read as they stand)."""
    whole, links = Whole(k), {}
    whole.start()
    ids = store.passage_ids()
    for start in range(0, len(ids), batch):
        vectors = store.passage_embeddings(ids[start : start + batch])
        present = list(vectors)
        if present:
            whole.add(present, np.asarray([vectors[pid] for pid in present], dtype=np.float32))
        if not whole.known:
            break  # past the limit: no matrix
        for pid, (degree, weakest, _) in store.weakest_links(present, flags=False).items():
            links[pid] = (degree, weakest)
    return whole, links


class Memory:
    """Vectors and neighbour-list summaries of passages, as this process last wrote or read them,
    each kept for up to ``size`` passages (the oldest dropped first: about 1.9 KB a vector, so up
    to 1.9 GB in a sync of a million passages).

    A client keeps one across its syncs (:class:`~kgp.client.KnowledgeGraph`), so that a
    long-lived process (``kgp serve``, ``kgp sync --watch``) links each added document by the
    whole matrix. What it holds is kept into the next sync only while it is that matrix and
    every write the graph took since was this linker's own (:meth:`GraphStore.writes_era`:
    another process may replace a document by one of as many passages, which no count shows);
    it is dropped at the first sign of another writer, and at each sync's start otherwise (the
    store cannot tell, or the matrix is not held: per-sync caches, as a new process has)."""

    def __init__(self, store: GraphStore, size: int, *, k: int = 5) -> None:
        self.store = store
        self.size = size
        self.k = k
        # every passage's vector and bar, while this process holds them all
        self.whole = Whole(k)
        self._began = False  # whether the graph was looked at for a whole matrix yet
        self._deferred = False  # whether this sync set the vector index aside (index_back)
        self.index_s = 0.0  # seconds the linker spent by the index since the matrix was loaded
        self._vectors: dict[str, np.ndarray] = {}
        self._held: dict[str, set[str]] = {}  # document -> its passages with a vector kept
        # (degree, weakest) of passages none flagged: trusted only while the graph holds no
        # NEEDS_KNN flag, since a removal lowers a passage's weakest only through one
        self._links: dict[str, tuple[int, float | None]] = {}
        # a number that stays the same while every write was this linker's own (None: cannot
        # tell): the store's writes_era, and for a client's kept linker its other syncers' too
        self.era: Callable[[], Hashable | None] = lambda: self.store.writes_era()
        # the matrix a process that held it saved, while it is still the graph's (None: none;
        # a client's kept linker: kgp.ingest.whole_file)
        self.saved: Callable[[], Whole | None] | None = None
        self._era: Hashable | None = None  # as it was when this last looked
        self.syncs = 0  # syncs begun (the linker looks for its budget once in each)

    def begin(self) -> None:
        """At a sync's start: keep what this holds only while it holds every passage (the
        whole matrix) and no one else wrote since it last looked (never where that cannot be
        told); otherwise start afresh, as a new process would, its index time included (so an
        added document never loads the matrix), from the matrix the last holder saved where the
        graph is still the one it saved (``saved``: a process's first write restores it)."""
        self.syncs += 1
        self.index_s = 0.0
        era = self.era()
        if era is None or era != self._era or not self.whole.known:
            self._drop()
            self._began = False  # (an empty graph starts the whole matrix again)
        self._era = era
        if not self.whole.known:  # (before this sync writes: a saved matrix holds till then)
            self.restore_saved()

    def holds_whole(self) -> bool:
        """Whether this holds every passage's vector and no one else wrote since it last
        looked (what the next sync keeps, :meth:`begin`)."""
        era = self.era()
        return self.whole.known and era is not None and era == self._era

    def held_era(self) -> Hashable | None:
        """The era in which this holds every passage's vector (None: it does not)."""
        return self._era if self.holds_whole() else None

    def _check_alone(self) -> None:
        """Within a sync, before a group: drop what this holds if another writer wrote since
        (where that cannot be told, the count and the flags are checked, as before; a write of
        another process between this check and the group's own write is not seen until the
        next group: kgp does not lock a graph against two processes writing it at once)."""
        era = self.era()
        if era is not None and era != self._era:
            self._drop()
            self._era = era

    def release(self) -> None:
        """Free what this holds (before a new read of the whole matrix: not both at once)."""
        self._drop()

    def _drop(self) -> None:
        self.whole.stop()
        self._vectors.clear()
        self._held.clear()
        self._links.clear()

    # -- vectors -----------------------------------------------------------------------------

    def remember(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Keep vectors just written or fetched (in the whole matrix alone while it is kept)."""
        self.whole.add(ids, vectors)
        if self.whole.known:
            return
        for pid, vector in zip(ids, vectors, strict=True):
            self._vectors[pid] = np.asarray(vector, dtype=np.float32)
            self._held.setdefault(passage_document(pid), set()).add(pid)
        while len(self._vectors) > self.size:
            oldest = next(iter(self._vectors))
            del self._vectors[oldest]
            self._held[passage_document(oldest)].discard(oldest)

    def forget(self, doc_id: str) -> None:
        """A document was written again or removed: its vectors are no longer known."""
        self.whole.drop(doc_id)
        for pid in self._held.pop(doc_id, ()):
            self._vectors.pop(pid, None)

    def vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """Vectors of passages (those in the graph): kept ones, the rest fetched and kept."""
        wanted = list(dict.fromkeys(ids))
        out = {pid: self._vectors[pid] for pid in wanted if pid in self._vectors}
        for pid in wanted:
            vector = None if pid in out else self.whole.vector(pid)
            if vector is not None:
                out[pid] = vector
        missing = [pid for pid in wanted if pid not in out]
        fetched = {
            pid: np.asarray(embedding, dtype=np.float32)
            for pid, embedding in self.store.passage_embeddings(missing).items()
        }
        if fetched:
            self.remember(list(fetched), np.stack(list(fetched.values())))
        return out | fetched

    def kept(self, pid: str) -> bool:
        """Whether a passage's vector is held here (no read needed)."""
        return pid in self._vectors or self.whole.vector(pid) is not None

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
        best = self.store.best_similarities(unknown, matrix.tolist())
        far = {pid for pid in unknown if best.get(pid, np.inf) < bars[pid] - 2 * ROUGH}
        return [pid for pid in ids if pid not in far]

    def by_whole(self) -> bool:
        """Whether the linker's next group goes by the whole matrix: kept from the start of a
        sync into an empty graph, or loaded (:meth:`load_whole`) once linking by the index has
        cost as much as the load would, while the graph holds exactly its passages (another
        process's write ends it) and no NEEDS_KNN flag waits (a removal: the index until the
        refill)."""
        self._check_alone()
        if self._whole_now():
            return True
        self.index_back(wait=True)  # linking by the index needs it whole
        return False

    def index_back(self, *, wait: bool = False) -> None:
        """Build the vector index a sync into an empty graph set aside (its passages linked by
        the matrix need none): at the sync's end, or before linking by the index."""
        if self._deferred:
            self.store.restore_vector_index(wait=wait)
            self._deferred = not self.store.count_passages()  # an empty graph builds none

    def _whole_now(self) -> bool:
        whole = self.whole
        passages = self.store.count_passages()
        if not self._began:
            self._began = True
            if whole.limit and passages == 0:
                whole.start()
                self._deferred = self.store.defer_vector_index()
        if self.store.knn_flags():
            return False
        if not whole.known:
            if not self._worth_loading(passages):
                return False
            self.index_s = 0.0
            self.load_whole()
            self._check_alone()  # another process may have written meanwhile
            whole, passages = self.whole, self.store.count_passages()  # (the matrix read)
        if passages != whole.count:
            whole.stop()
            return False
        return True

    def _worth_loading(self, passages: int) -> bool:
        """Whether linking by the index has cost as much as loading every passage would (a
        long sync resumed on a graph this process did not write; at 500k passages a group of
        2,048 took about 25 s by the index, the load about 300 s): at most twice the better
        choice's time, whatever the sync's length, and an added document never loads."""
        limit = self.whole.limit
        return 0 < passages <= limit and 0 < self.index_s >= LOAD_SECONDS * passages

    def load_whole(self, batch: int = 10_000) -> None:
        """Read every passage's vector and neighbour list into the whole matrix (for a long
        sync on a graph this process did not write: about 0.1 ms a passage, each vector's
        doubles formatted by the server). The linker checks the count afterwards, as before
        every group."""
        self.adopt(*read_whole(self.store, self.k, batch))

    def read_during_build(self) -> bool:
        """Read every passage's vector and list rather than wait for the vector index a start is
        building, where the build has more left than the read takes (its rate not known yet: the
        whole build, slower per entry than the read at every size measured; at a million
        passages about 40 minutes against 150 s): linked by the matrix, the sync's writes go in
        between the build's batches. Not while another process writes, a NEEDS_KNN flag waits
        or the graph is past the matrix's limit. True if this now holds the matrix."""
        if self.holds_whole():
            return False
        left, seconds = self.store.vector_index_build()
        era = self.era()
        if not left or era is None or self.store.knn_flags():
            return False
        passages = self.store.count_passages()
        if passages > self.whole.limit or (seconds or np.inf) < LOAD_SECONDS * passages:
            return False
        whole, links = read_whole(self.store, self.k)
        if not whole.known or self.era() != era:
            return False  # (another process wrote meanwhile: its write may be missing)
        self.adopt(whole, links, era)
        return True

    def restore_saved(self) -> bool:
        """Hold the matrix saved beside the graph, if it is the graph's now (``saved``): as if
        this memory had written every passage. True if it does."""
        if self.saved is None:
            return False
        era = self.era()
        whole = self.saved()
        if whole is None or era is None or self.era() != era:
            return False
        self._drop()
        self.whole, self._began, self._era = whole, True, era
        self._links.update(whole.noted_lists())
        while len(self._links) > self.size:
            del self._links[next(iter(self._links))]
        return True

    def adopt(
        self,
        whole: Whole,
        links: Mapping[str, tuple[int, float | None]],
        era: Hashable | None = None,
    ) -> None:
        """Hold what :func:`read_whole` read (``era``: the graph's era while it read, and no one
        wrote; the caller checked): later groups, and with an era later syncs, link by it, as
        if this memory had written every passage."""
        self._drop()
        self.whole, self._began = whole, whole.count > 0  # (an empty graph: as a first sync)
        if era is not None:
            self._era = era
        for pid, (degree, weakest) in links.items():
            self._note(pid, degree, weakest)

    # -- neighbour lists ---------------------------------------------------------------------

    def links(
        self, ids: Sequence[str], reach: Mapping[str, float] | None = None
    ) -> dict[str, Link]:
        """``(degree, weakest, flagged)`` of passages (those in the graph). A passage's list
        changes only by the linker's writes, which it notes here, or by a removal, which flags
        the passages that lost a neighbour (NEEDS_KNN) until a refill: so while the graph holds
        a flag, every passage is read afresh. ``reach``: for some of the ids, their highest
        similarity to a new passage; while no flag waits, those are read only where a new
        passage may enter their list (:meth:`GraphStore.links_within_reach`, with twice the
        tie margin the linker's bar allows), the others left out as if absent."""
        self._check_alone()
        flags = self.store.knn_flags() > 0
        if flags:
            self._links.clear()
        known = {pid: (*self._links[pid], False) for pid in ids if pid in self._links}
        unread = [pid for pid in ids if pid not in known]
        narrow = {} if flags or not reach else {pid: reach[pid] for pid in unread if pid in reach}
        read = self.store.weakest_links([pid for pid in unread if pid not in narrow], flags=flags)
        if narrow:
            found = self.store.links_within_reach(narrow, k=self.k, margin=2 * TIE)
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
        self.whole.note(pid, degree, weakest)
        self._links.pop(pid, None)  # the newest last, so the oldest is dropped first
        self._links[pid] = (degree, weakest)
        while len(self._links) > self.size:
            del self._links[next(iter(self._links))]

"""SIMILAR edges: each passage's k nearest passages by cosine similarity, exactly, in whatever
order documents arrived.

``out(p)`` is the k other passages with the highest ``score(p, q)``, ties broken by id, over the
whole graph; the score is the cosine computed in float64 from the stored vectors, rounded
to six decimals, so the same pair gets the same score however it was found. A graph synced
incrementally therefore equals a clean sync of the same files. Kept exact under changes:

- a new passage x links to its k nearest among the stored graph (the vector index, asked deep
  enough: as exact as its answer, which is exact up to 50,000 passages in the embedded store's)
  and the other new passages (compared directly);
- an older passage p gains x when ``score(p, x)`` beats p's weakest edge. Candidates: the passages
  the index returned for x, which include every passage more similar to x than a floor, and the
  passages whose weakest edge scores at most that floor (a relationship index on
  ``SIMILAR.score``). The floor trades one set for the other: it is set by a budget of weak
  edges, which the linker tunes as a sync goes (the best budget grows with the graph);
- a passage that loses a neighbour to a deleted document is flagged (NEEDS_KNN) by the deleting
  query itself and recomputed at the end of the sync.

A document stays ``pending`` from its write until older passages are linked to it, so a sync
killed in between leaves work the next sync finishes (:meth:`SimilarityLinker.recover`). Beyond
``depth`` candidates per new passage, the search stops early and the result is approximate, as the
vector index itself is for very large graphs; since the floor follows the budget's tuning, which
follows timings, those approximate edges can differ between two runs of the same sync."""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from kgp.access import ADMIN_CALLER
from kgp.ingest.memory import Memory, reach
from kgp.ingest.scores import Ranked, best_of, contenders, exact_scores, merge, offered
from kgp.ranking import top
from kgp.stores.base import GraphStore
from kgp.stores.model import SimilarEdge, passage_document
from kgp.stores.search import TIE

METHOD = "knn"
EPS = TIE  # the index's float32 similarity is within this of the exact score
# the floor's first budget: weak edges per new passage (measured against 4 and 64:
# docs/decisions/0008-the-sync-and-the-k-nn-linker.md); tuned after each large group, since the
# best budget grows with the graph (see SimilarityLinker.tune)
WEAK_PER_PASSAGE = 16
BUDGET_RANGE = (2.0, 4096.0)  # weak edges per new passage, least and most
LEAST_BUDGET = 256  # weak edges, at least (in a small graph: every edge)
TUNE_PASSAGES = 512  # a smaller group's timings are too short to tune the budget by
DEEP_START = 256  # the first depth of a search past the k nearest (an HNSW search looks at as
# many anyway; an added document's only search: at 1M, 50 passages above the floor in the
# median, 11 of 50 past 256)


@dataclass
class Group:
    """New documents about to be written together, and what linking them needs."""

    docs: list[tuple[str, list[str], np.ndarray]]  # doc id, passage ids, vectors
    floor: float = 1.0
    candidates: list[dict[str, float]] = field(default_factory=list)  # per new passage
    weak: list[str] = field(default_factory=list)  # passages weakly linked, below the floor
    deep_s: float = 0.0  # seconds searching past the first depth, for the passages above the floor
    weak_s: float = 0.0  # seconds choosing the floor and listing the weak passages
    edges: list[list[SimilarEdge]] = field(default_factory=list)  # per document, as written

    @property
    def doc_ids(self) -> list[str]:
        return [doc_id for doc_id, _, _ in self.docs]

    @property
    def ids(self) -> list[str]:
        return [pid for _, ids, _ in self.docs for pid in ids]

    def matrix(self, dimension: int = 0) -> np.ndarray:
        parts = [m for _, ids, m in self.docs if len(ids)]
        return np.concatenate(parts) if parts else np.zeros((0, dimension), dtype=np.float32)


class SimilarityLinker:
    """Computes and maintains SIMILAR edges against a store (batched: a few queries per group of
    documents, however many passages it has)."""

    def __init__(
        self,
        store: GraphStore,
        *,
        k: int = 5,
        method: str = METHOD,
        depth: int = 4096,
        cache_size: int = 1_000_000,
    ) -> None:
        self.store = store
        self.k = k
        self.method = method
        self.depth = depth  # most candidates asked of the index per new passage
        self.weak_per_passage = float(WEAK_PER_PASSAGE)  # the floor's budget, tuned as it goes
        self._seeded = -1  # the sync (memory.syncs) that looked for the budget in the graph
        # vectors and neighbour lists kept between groups (up to cache_size passages each)
        self.memory = Memory(store, cache_size, k=k)

    def remember(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Keep vectors just written, so linking later documents need not fetch them."""
        self.memory.remember(ids, vectors)

    def forget(self, doc_id: str) -> None:
        self.memory.forget(doc_id)

    # -- new documents -----------------------------------------------------------------------

    def plan(self, documents: Sequence[tuple[str, Sequence[str], np.ndarray]]) -> Group:
        """Before a group of documents is written (in this order): each passage's exact k
        nearest among the stored graph (the documents' own older versions excluded, since the
        writes replace them), its own document and the earlier documents of the group, as the
        edges each write carries; and the candidates :meth:`complete` checks afterwards."""
        group = Group([(d, list(ids), np.asarray(m, dtype=np.float32)) for d, ids, m in documents])
        if self.k == 0:
            group.edges = [[] for _ in documents]
            return group
        ids = group.ids
        owners = [doc_id for doc_id, pids, _ in group.docs for _ in pids]
        # documents the graph holds an older version of (asked now: another may have written)
        nodes = self.store.fetch_nodes(group.doc_ids) if self.k else {}
        replaced = {key for key, node in nodes.items() if node["label"] == "Document"}
        if ids and self.store.upkeep.vector_index_entries() > 0:
            hits = self._stored_candidates(group, owners, replaced)
            group.candidates = [dict(row) for row in hits]
            group.weak = [pid for pid in group.weak if passage_document(pid) not in replaced]
        else:
            group.candidates = [{} for _ in ids]
        stored = self.memory.vectors(
            pid for row in group.candidates for pid in contenders(row, self.k, EPS)
        )
        everything = group.matrix(0).astype(np.float64)  # once: sliced per document below
        offset = 0
        for _, pids, matrix in group.docs:
            end = offset + len(pids)
            inside = exact_scores(everything[:end], everything[offset:end])  # own x earlier + own
            edges: list[SimilarEdge] = []
            for row, pid in enumerate(pids):
                scores = dict(best_of(inside[row], ids[:end], self.k, skip=offset + row))
                near = contenders(group.candidates[offset + row], self.k, EPS)
                known = [c for c in near if c in stored]
                if known:
                    values = exact_scores(matrix[row], np.stack([stored[c] for c in known]))
                    scores.update(zip(known, (float(v) for v in values), strict=True))
                edges += [
                    SimilarEdge(pid, target, score, self.method)
                    for target, score in top(scores, self.k)
                ]
            group.edges.append(edges)
            offset = end
        return group

    def complete(self, group: Group) -> int:
        """After the group's documents are written: merge the new passages into the neighbour
        lists they enter (older passages, and the group's own passages, which were written
        before the later documents of the group existed), and mark the documents linked, in one
        query. Returns how many passages changed."""
        new_ids = group.ids
        if self.k == 0 or not new_ids:
            self.store.links.replace_similar([], done=group.doc_ids)
            return 0
        started = time.perf_counter()
        matrix = group.matrix(0)
        index = {pid: i for i, pid in enumerate(new_ids)}
        near: dict[str, dict[int, float]] = {}  # stored passage -> new passages it is close to
        # past k passages besides the group's, one not weak has k neighbours above floor + EPS:
        # no more similar than the floor to every new one, it gains none and is not read
        least = -np.inf
        if group.floor < 1.0:
            with self.store.reading_as(ADMIN_CALLER):
                if self.store.links.count_passages() - len(new_ids) > self.k:
                    least = group.floor
        for i, row in enumerate(group.candidates):
            for pid, sim in row.items():
                if pid not in index and sim > least:
                    near.setdefault(pid, {})[i] = sim
        weak = set(group.weak) - index.keys()
        links = self.memory.links([*near, *weak], reach(near, weak, len(new_ids)))
        # the least score that can enter each passage's list (none for a new one, or below k)
        bars = {pid: self._bar(degree, weakest) for pid, (degree, weakest, _) in links.items()}
        whole: list[str] = list(new_ids)  # compared with every new passage
        partial: dict[str, list[int]] = {}  # compared with a few
        for pid, (degree, _, flagged) in links.items():
            if flagged:
                continue  # recomputed whole by refill()
            if pid in weak or degree < self.k:
                whole.append(pid)
                continue
            tried = sorted(i for i, sim in near.get(pid, {}).items() if sim >= bars[pid])
            if tried:
                partial[pid] = tried
        stored = self.memory.reachable([p for p in whole if p not in index], bars, matrix)
        vectors = self.memory.vectors(stored + list(partial))
        offers: dict[str, Ranked] = {}
        present = [p for p in whole if p in index or p in vectors]
        for start in range(0, len(present), 512):
            chunk = present[start : start + 512]
            rows = np.stack([matrix[index[p]] if p in index else vectors[p] for p in chunk])
            chunk_bars = [bars.get(pid, -np.inf) for pid in chunk]
            skips = [index.get(pid) for pid in chunk]
            for n, chosen in enumerate(offered(rows, matrix, chunk_bars, skips, self.k)):
                if len(chosen):
                    values = exact_scores(rows[n], matrix[chosen])
                    offers[chunk[n]] = best_of(values, [new_ids[j] for j in chosen], self.k)
        for pid, tried in partial.items():
            if pid in vectors:
                values = exact_scores(vectors[pid], matrix[tried])
                offers[pid] = [(new_ids[i], float(v)) for i, v in zip(tried, values, strict=True)]
        # only a passage offered a score that can enter its list needs its edges read (in a long
        # sync most are offered none: at 74k passages, 38k looked at per 2,048 new)
        gaining = [
            pid
            for pid, offer in offers.items()
            if any(score >= bars.get(pid, -np.inf) for _, score in offer)
        ]
        current = self.store.links.similar_edges(gaining)
        rows_out = []
        for pid in gaining:
            offer = offers[pid]
            before = top(dict(current.get(pid, [])))
            after = merge(before, dict(offer), self.k)
            if after != before:
                rows_out.append(self._row(pid, after))
        self.store.links.replace_similar(rows_out, done=group.doc_ids)
        for (_, pids, _), edges in zip(group.docs, group.edges, strict=False):
            self.memory.note_edges(pids, edges)  # (a recovered group's: by another run)
        self.memory.note_rows(rows_out)
        complete_s = time.perf_counter() - started
        self.tune(group, complete_s, len(near))
        return len(rows_out)

    def tune(self, group: Group, complete_s: float, near: int) -> None:
        """Set the floor's budget for the next group from this one's timings. A lower floor
        means fewer weak passages and deeper searches; with the budget fixed, the floor sinks
        as the graph grows and the searches go ever deeper. So the budget follows the time on
        each side: the searches past the first depth against the weak passages (choosing the
        floor, listing them, and their share of completing the group), and moves by the square
        root of their ratio, at most twofold, towards where they are equal (as fast as the best
        fixed budget tried: docs/decisions/0008-the-sync-and-the-k-nn-linker.md)."""
        if len(group.ids) < TUNE_PASSAGES:
            return
        looked = len(group.weak) + near
        weak_s = group.weak_s + complete_s * len(group.weak) / max(looked, 1)
        ratio = (group.deep_s + 1e-3) / (weak_s + 1e-3)
        step = min(2.0, max(0.5, math.sqrt(ratio)))
        low, high = BUDGET_RANGE
        self.weak_per_passage = min(high, max(low, self.weak_per_passage * step))
        self.store.links.set_knn_budget(self.weak_per_passage)  # for the next long sync

    def _seed(self, group: Group) -> None:
        """A long sync starts from the budget the last one tuned (resumed at 373k passages
        from the default, its first 8,200 passages spent 88 s past the first depth while the
        budget doubled up to 116). A small group (an added document) keeps the default: in a
        new process each weak passage's vector is fetched, which the tuned budget ignores."""
        if self._seeded == self.memory.syncs:
            return
        self._seeded = self.memory.syncs
        stored = self.store.links.knn_budget() if len(group.ids) >= TUNE_PASSAGES else None
        if stored is not None:
            low, high = BUDGET_RANGE
            self.weak_per_passage = min(high, max(low, stored))

    def recover(self) -> int:
        """Finish linking documents a stopped sync wrote but did not link; how many."""
        pending = self.store.links.pending_documents()
        if not pending:
            return 0
        by_doc: dict[str, list[tuple[str, Sequence[float] | np.ndarray]]]
        by_doc = {doc: [] for doc in pending}
        for passage in self.store.document_passages(pending):
            by_doc[passage_document(passage.id)].append((passage.id, passage.embedding))
        docs = []
        for doc_id, rows in by_doc.items():
            rows.sort()
            matrix = np.asarray([v for _, v in rows], dtype=np.float32).reshape(len(rows), -1)
            docs.append((doc_id, [pid for pid, _ in rows], matrix))
        group = Group(docs)
        if self.k and group.ids:
            owners = [d for d, pids, _ in docs for _ in pids]
            hits = self._stored_candidates(group, owners, ())
            group.candidates = [dict(row) for row in hits]
        self.complete(group)
        return len(pending)

    # -- refilling ---------------------------------------------------------------------------

    def refill(self, batch: int = 500) -> int:
        """Recompute the neighbours of flagged passages (each once); returns how many."""
        done, after = 0, ""
        while True:
            rows = self.store.links.passages_needing_knn(batch, after)
            if not rows:
                return done
            ids = [r.id for r in rows]
            after = ids[-1]
            matrix = np.asarray([r.embedding for r in rows], dtype=np.float32)
            self.remember(ids, matrix)
            hits = self.store.nearest(matrix.tolist(), want=self.k, exclude_ids=[[i] for i in ids])
            wanted = {pid for row in hits for pid in contenders(dict(row), self.k, EPS)}
            vectors = self.memory.vectors(wanted)
            replaced = []
            for n, pid in enumerate(ids):
                near = [c for c in contenders(dict(hits[n]), self.k, EPS) if c in vectors]
                scores: dict[str, float] = {}
                if near:
                    values = exact_scores(matrix[n], np.stack([vectors[c] for c in near]))
                    scores = dict(zip(near, (float(v) for v in values), strict=True))
                replaced.append(self._row(pid, top(scores, self.k)))
            self.store.links.replace_similar(replaced)
            self.memory.note_rows(replaced)
            done += len(ids)

    # -- helpers -----------------------------------------------------------------------------

    def _row(self, source: str, targets: Ranked) -> dict[str, object]:
        return {
            "source": source,
            "targets": [{"id": t, "score": s, "method": self.method} for t, s in targets],
        }

    def _bar(self, degree: int, weakest: float | None) -> float:
        """The least score that can enter a passage's neighbours, given its degree and weakest
        score."""
        if degree < self.k or weakest is None:
            return -np.inf
        return weakest - EPS

    def _stored_candidates(
        self, group: Group, owners: Sequence[str], replaced: Collection[str]
    ) -> list[Ranked]:
        """Choose the group's floor and list its weak passages; then each new passage's nearest
        stored passages (its own document and those the group ``replaced`` excluded): at least k
        with their ties, and every one more similar than the floor, up to ``depth``. Times both
        sides for :meth:`tune`."""
        self._seed(group)
        began = time.perf_counter()
        budget = max(LEAST_BUDGET, round(self.weak_per_passage * len(group.ids)))
        group.floor = self._floor(budget)
        group.weak = self.store.links.weak_passages(group.floor + EPS)
        group.weak_s = time.perf_counter() - began
        vectors = group.matrix(0).tolist()
        # an added document (too small to tune by) is searched once for all above the floor
        # (one whose k nearest lie below it is asked again without it); a larger group first for
        # the k nearest, then deeper
        once = len(vectors) < TUNE_PASSAGES and group.floor < 1.0
        search = partial(self.store.nearest, want=self.k, skip_docs=replaced, depth_cap=self.depth)
        hits: list[Ranked] = [[] for _ in vectors]
        if not once:
            hits = search(vectors, exclude_docs=list(owners))
        deeper = [i for i, row in enumerate(hits) if once or (row and row[-1][1] > group.floor)]
        began = time.perf_counter()
        # every passage above the floor (past the first depth: the cost the budget tunes)
        found = search(
            [vectors[i] for i in deeper],
            floor=group.floor,
            exclude_docs=[owners[i] for i in deeper],
            start=DEEP_START if deeper else None,
            above=[group.floor] * len(deeper),
        )
        group.deep_s = time.perf_counter() - began
        for i, row in zip(deeper, found, strict=True):
            hits[i] = row
        return hits

    def _floor(self, budget: int) -> float:
        """The highest score t (to 1/4096) with at most ``budget`` SIMILAR edges scoring t or
        less: the passages weakly linked enough to be checked against every new passage."""
        if self.store.links.count_weak_edges(1.0, budget + 1) <= budget:
            return 1.0
        low, high = -1.0, 1.0
        for _ in range(12):
            middle = (low + high) / 2
            if self.store.links.count_weak_edges(middle, budget + 1) <= budget:
                low = middle
            else:
                high = middle
        return low

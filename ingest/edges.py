"""SIMILAR edges: each passage's k nearest passages by cosine similarity.

Candidates from other documents come from the store's vector index; candidates inside the
document being written are compared directly. Scores are always recomputed here in float64 from
the stored float32 vectors, so the same pair gets the same score whichever way it was found (a
document added now, or a passage refilled after a removal)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from kgp.stores.base import GraphStore
from kgp.stores.model import SimilarEdge, passage_document

METHOD = "knn"
SCORE_DECIMALS = 6


def top_k(
    sources: Sequence[str],
    source_vectors: np.ndarray,
    candidates: Sequence[Sequence[str]],
    vectors: dict[str, np.ndarray],
    k: int,
    method: str = METHOD,
) -> list[SimilarEdge]:
    """For each source, its ``k`` best candidates by cosine (ties broken by id); pure."""
    edges: list[SimilarEdge] = []
    for i, source in enumerate(sources):
        pool = [c for c in dict.fromkeys(candidates[i]) if c != source and c in vectors]
        if not pool:
            continue
        matrix = np.stack([vectors[c] for c in pool]).astype(np.float64)
        scores = matrix @ source_vectors[i].astype(np.float64)
        ranked = sorted(
            zip(pool, (round(float(s), SCORE_DECIMALS) for s in scores), strict=True),
            key=lambda pair: (-pair[1], pair[0]),
        )
        edges.extend(SimilarEdge(source, target, score, method) for target, score in ranked[:k])
    return edges


class SimilarityLinker:
    """Computes SIMILAR edges against a store's vector index, batched (one query per call)."""

    def __init__(
        self, store: GraphStore, *, k: int = 5, method: str = METHOD, cache_size: int = 50_000
    ) -> None:
        self.store = store
        self.k = k
        self.method = method
        self.cache_size = cache_size
        self._cache: dict[str, np.ndarray] = {}

    def remember(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Keep vectors just written, so linking later documents need not fetch them back."""
        for pid, vector in zip(ids, vectors, strict=True):
            self._cache[pid] = vector
        while len(self._cache) > self.cache_size:
            self._cache.pop(next(iter(self._cache)))

    def forget(self, doc_id: str) -> None:
        for pid in [p for p in self._cache if passage_document(p) == doc_id]:
            del self._cache[pid]

    def _slack(self) -> int:
        return 2 * self.k + 10

    def link_group(
        self, documents: Sequence[tuple[str, Sequence[str], np.ndarray]]
    ) -> list[list[SimilarEdge]]:
        """SIMILAR edges of documents written in this order, from one index query for all:
        each passage's k nearest among the stored graph (the document's own older version
        excluded, since the write replaces it), its own document and the earlier ones here."""
        if self.k == 0:
            return [[] for _ in documents]
        vectors: list[list[float]] = []
        owners: list[int] = []
        excluded: list[str] = []
        for d, (doc_id, ids, matrix) in enumerate(documents):
            for row in range(len(ids)):
                vectors.append(matrix[row].tolist())
                owners.append(d)
                excluded.append(doc_id)
        found = self.store.knn_candidates(vectors, limit=self._slack(), exclude_docs=excluded)
        group_docs = {doc_id for doc_id, _, _ in documents}
        # older versions of this group's documents are about to be replaced: not candidates
        stored = self._vectors(cid for _, cid in found if passage_document(cid) not in group_docs)
        hits: list[list[str]] = [[] for _ in vectors]
        for i, cid in found:
            if cid in stored:
                hits[i].append(cid)
        out: list[list[SimilarEdge]] = []
        seen: dict[str, np.ndarray] = {}
        offset = 0
        for _, ids, matrix in documents:
            own = {pid: matrix[r] for r, pid in enumerate(ids)}
            pool = {**stored, **seen, **own}
            earlier = list(seen)
            candidates = [hits[offset + r] + list(ids) + earlier for r in range(len(ids))]
            out.append(top_k(ids, matrix, candidates, pool, self.k, self.method))
            seen.update(own)
            offset += len(ids)
        return out

    def refill(self, batch: int = 500) -> int:
        """Recompute the neighbours of flagged passages (each once); returns how many."""
        done, after = 0, ""
        while True:
            rows = self.store.passages_needing_knn(batch, after)
            if not rows:
                return done
            ids = [str(r["id"]) for r in rows]
            after = ids[-1]
            matrix = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
            found = self.store.knn_candidates(
                [v.tolist() for v in matrix],
                limit=self._slack() + 1,
                exclude_ids=[[i] for i in ids],
            )
            per_source: list[list[str]] = [[] for _ in ids]
            for i, cid in found:
                per_source[i].append(cid)
            vectors = self._vectors(cid for _, cid in found)
            edges = top_k(ids, matrix, per_source, vectors, self.k, self.method)
            targets: dict[str, list[dict[str, object]]] = {i: [] for i in ids}
            for edge in edges:
                targets[edge.source].append(
                    {"id": edge.target, "score": edge.score, "method": edge.method}
                )
            self.store.replace_similar(
                [{"source": s, "targets": t, "full": len(t) >= self.k} for s, t in targets.items()]
            )
            done += len(ids)

    def _vectors(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(ids))
        out = {pid: self._cache[pid] for pid in wanted if pid in self._cache}
        missing = [pid for pid in wanted if pid not in out]
        rows = self.store.passage_vectors(missing)
        out.update({pid: np.asarray(r["embedding"], dtype=np.float32) for pid, r in rows.items()})
        return out

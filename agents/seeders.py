"""Seeders: the passages Algorithm 1 starts from (its g(V, X, q))."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from kgp.agents.scorers import tfidf_cosines
from kgp.errors import ConfigurationError
from kgp.ingest.keywords import terms
from kgp.names import SEEDERS
from kgp.stores.base import GraphStore

Seeds = list[tuple[str, float]]
RRF_K = 60  # the usual reciprocal-rank-fusion constant
TFIDF_POOL = 5  # the tfidf seeder re-ranks this many full-text hits per seed wanted


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], limit: int) -> Seeds:
    """Fuse rankings: score(d) = Σ 1 / (RRF_K + rank of d); ties broken by id."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking, start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


class Seeder:
    """Seeds from the store: ``vector`` (the vector index), ``fulltext`` (the full-text index:
    BM25 in Neo4j, TF-IDF in FalkorDB), ``tfidf`` (the paper's g: full-text hits re-ranked by
    TF-IDF cosine with the question, IDF over the hits) or ``hybrid`` (vector and full-text,
    fused by reciprocal rank) or ``gnn`` (GNN-Ret). ``texts`` gives passages' texts (the tfidf
    seeder needs them)."""

    KINDS = SEEDERS

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        kind: str = "hybrid",
        texts: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
        gnn: Callable[[str, int], Seeds] | None = None,
    ) -> None:
        if kind not in self.KINDS:
            raise ConfigurationError(
                f"unknown seeder {kind!r}; choose one of {', '.join(self.KINDS)}"
            )
        self.store = store
        self.embed = embed
        self.kind = kind
        self.texts = texts or self._fetch_texts
        self.gnn = gnn  # ``gnn``: GNN-Ret's nearest passages by integrated distance

    def _fetch_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {i: str(row["text"]) for i, row in self.store.passage_vectors(ids).items()}

    def seeds(self, question: str, count: int) -> Seeds:
        if self.kind == "fulltext":
            return [(h.id, h.score) for h in self.store.fulltext_search(question, count)]
        if self.kind == "tfidf":
            return self._tfidf(question, count)
        if self.kind == "gnn":
            if self.gnn is None:
                raise ConfigurationError("the gnn seeder needs GNN-Ret (a Retriever builds one)")
            return self.gnn(question, count)
        vector = self.embed([question])[0].tolist()
        dense = self.store.vector_search(vector, count if self.kind == "vector" else 2 * count)
        if self.kind == "vector":
            return [(h.id, h.score) for h in dense]
        lexical = self.store.fulltext_search(question, 2 * count)
        return reciprocal_rank_fusion([[h.id for h in dense], [h.id for h in lexical]], count)

    def _tfidf(self, question: str, count: int) -> Seeds:
        pool = [h.id for h in self.store.fulltext_search(question, TFIDF_POOL * count)]
        if not pool:
            return []
        text = self.texts(pool)
        bags = [Counter(terms(text.get(pid, ""))) for pid in pool]
        (scores,) = tfidf_cosines([Counter(terms(question))], [bags])
        ranked = sorted(zip(pool, scores, strict=True), key=lambda item: (-item[1], item[0]))
        return ranked[:count]

"""Seeders: the passages Algorithm 1 starts from (its g(V, X, q))."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from kgp.errors import ConfigurationError
from kgp.stores.base import GraphStore

Seeds = list[tuple[str, float]]
RRF_K = 60  # the usual reciprocal-rank-fusion constant


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], limit: int) -> Seeds:
    """Fuse rankings: score(d) = Σ 1 / (RRF_K + rank of d); ties broken by id."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking, start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


class Seeder:
    """Seeds from the store: ``vector``, ``fulltext`` or ``hybrid`` (both, fused by RRF)."""

    KINDS = ("hybrid", "vector", "fulltext")

    def __init__(
        self, store: GraphStore, embed: Callable[[list[str]], np.ndarray], kind: str = "hybrid"
    ) -> None:
        if kind not in self.KINDS:
            raise ConfigurationError(
                f"unknown seeder {kind!r}; choose one of {', '.join(self.KINDS)}"
            )
        self.store = store
        self.embed = embed
        self.kind = kind

    def seeds(self, question: str, count: int) -> Seeds:
        if self.kind == "fulltext":
            return [(h.id, h.score) for h in self.store.fulltext_search(question, count)]
        vector = self.embed([question])[0].tolist()
        dense = self.store.vector_search(vector, count if self.kind == "vector" else 2 * count)
        if self.kind == "vector":
            return [(h.id, h.score) for h in dense]
        lexical = self.store.fulltext_search(question, 2 * count)
        return reciprocal_rank_fusion([[h.id for h in dense], [h.id for h in lexical]], count)

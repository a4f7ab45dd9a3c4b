"""Seeders: the passages Algorithm 1 starts from (its g(V, X, q))."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import wait
from typing import TYPE_CHECKING

from kgp.agents.scorers import Bag, tfidf_cosines
from kgp.names import SEEDERS
from kgp.text import terms

if TYPE_CHECKING:
    from kgp.agents.context import Services

Seeds = list[tuple[str, float]]
SeedFunction = Callable[["Services", str, int], Seeds]
RRF_K = 60  # the usual reciprocal-rank-fusion constant
TFIDF_POOL = 5  # the tfidf seeder re-ranks this many full-text hits per seed wanted


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], limit: int) -> Seeds:
    """Fuse rankings: score(d) = Σ 1 / (RRF_K + rank of d); ties broken by id."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking, start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


# Seeders registered in kgp.names.SEEDERS: (services, question, count) -> seeds, best first.


def fulltext(services: Services, question: str, count: int) -> Seeds:
    """The full-text index (BM25 in Neo4j, TF-IDF in FalkorDB)."""
    return [(h.id, h.score) for h in services.store.fulltext_search(question, count)]


def vector(services: Services, question: str, count: int) -> Seeds:
    """The vector index."""
    query = services.embed([question])[0].tolist()
    return [(h.id, h.score) for h in services.store.vector_search(query, count)]


def hybrid(services: Services, question: str, count: int) -> Seeds:
    """Vector and full-text hits, fused by reciprocal rank. The full-text search runs while
    the question is encoded: the store answers in its own process and the encoder releases
    the interpreter while it computes."""
    lexical = services.meanwhile(services.store.fulltext_search, question, 2 * count)
    try:
        query = services.embed([question])[0].tolist()
        dense = services.store.vector_search(query, 2 * count)
    except BaseException:
        # nothing this question reads outlives it (a covered read retried with the checks must
        # not meet a count its unchecked search stores late)
        lexical.cancel()
        wait([lexical])
        raise
    fulltext_hits = lexical.result()
    return reciprocal_rank_fusion([[h.id for h in dense], [h.id for h in fulltext_hits]], count)


def tfidf(services: Services, question: str, count: int) -> Seeds:
    """The paper's g: full-text hits re-ranked by TF-IDF cosine with the question (IDF over
    the hits)."""
    pool = [h.id for h in services.store.fulltext_search(question, TFIDF_POOL * count)]
    if not pool:
        return []
    text = services.passages.texts(pool)
    bags = [Bag.of(terms(text.get(pid, ""))) for pid in pool]
    (scores,) = tfidf_cosines([Bag.of(terms(question))], [bags])
    ranked = sorted(zip(pool, scores, strict=True), key=lambda item: (-item[1], item[0]))
    return ranked[:count]


def gnn(services: Services, question: str, count: int) -> Seeds:
    """GNN-Ret's nearest passages by integrated distance."""
    return [(pid, round(1.0 - d, 6)) for pid, d in services.gnn.retrieve(question, count)]


class Seeder:
    """The seeder registered as ``kind``, bound to its services."""

    def __init__(self, services: Services, kind: str = "hybrid") -> None:
        self.services = services
        self.kind = kind
        self._seeds: SeedFunction = SEEDERS.load(kind)

    def seeds(self, question: str, count: int) -> Seeds:
        return self._seeds(self.services, question, count)

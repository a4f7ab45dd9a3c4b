"""The final order of the passages a traversal visited: pure functions of the walk and each
passage's cosine with the question, registered in ``kgp.names.ORDERS``. Each returns the ids
with the score the order is by."""

from __future__ import annotations

from collections.abc import Mapping

from kgp.agents.seeders import reciprocal_rank_fusion
from kgp.agents.traversal import Traversal, Visit

Ranked = list[tuple[str, float]]


def by_visit(walk: Traversal, cosine: Mapping[str, float]) -> Ranked:
    """As the traversal visited them, with the traversal's scores."""
    return [(pid, walk.visits[pid].score) for pid in walk.ids()]


def _by_similarity(walk: Traversal, cosine: Mapping[str, float]) -> list[str]:
    # passages without a vector go last
    return sorted(walk.ids(), key=lambda i: -cosine[i] if i in cosine else float("inf"))


def by_question(walk: Traversal, cosine: Mapping[str, float]) -> Ranked:
    """By cosine with the question."""
    return [(pid, cosine.get(pid, 0.0)) for pid in _by_similarity(walk, cosine)]


def by_paths(walk: Traversal, cosine: Mapping[str, float]) -> Ranked:
    """Each seed by similarity, followed by its best-scored child, then the rest by similarity."""
    similar = _by_similarity(walk, cosine)
    children: dict[str, list[Visit]] = {}
    for visit in walk.visits.values():
        if visit.parent is not None:
            children.setdefault(visit.parent, []).append(visit)
    out: dict[str, None] = {}
    for pid in similar:
        if walk.visits[pid].hop == 0:
            out[pid] = None
            best = max(children.get(pid, []), key=lambda v: v.score, default=None)
            if best is not None:
                out[best.id] = None
    return [(pid, cosine.get(pid, 0.0)) for pid in dict.fromkeys([*out, *similar])]


def fused(walk: Traversal, cosine: Mapping[str, float]) -> Ranked:
    """Visiting order and similarity, fused by reciprocal rank."""
    ids = walk.ids()
    return reciprocal_rank_fusion([ids, _by_similarity(walk, cosine)], len(ids))

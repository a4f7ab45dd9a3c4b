"""The final order of the passages a traversal visited: pure functions of what was found (an
:class:`Evidence`), registered in ``kgp.names.ORDERS``. Each returns the ids with the score the
order is by.

The default, ``linked``, reads the retrieved passages as candidate reasoning pairs, the way a
two-hop retriever ranks its paths: two passages score the sum of their similarities to the
question, plus a bonus when one of them names the other's document title (an entity link of
the paper's TAGME graph, with the knowledge base's titles as the entities). A passage ranks by
the best pair it belongs to. Without links this is exactly the order by similarity to the
question; with them, the passage a bridge names comes up beside the passage that names it
("the director of *Film*" → the director's page), which similarity to the question alone
misses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kgp.agents.seeders import reciprocal_rank_fusion
from kgp.agents.traversal import Traversal, Visit
from kgp.ingest.keywords import Link

Ranked = list[tuple[str, float]]

# chosen on train/ (docs/decisions/0006-the-shipped-encoder-and-the-linked-order.md)
LINK_BONUS = 0.2


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a final order may use: the walk, each passage's cosine with the question (by the
    graph's encoder; a passage without a vector has none), the links among the passages, and
    for the orders that read them (``kgp.agents.learned``) the question, each passage's text
    and its document's title."""

    walk: Traversal
    cosine: Mapping[str, float]
    links: frozenset[Link] = field(default_factory=frozenset)
    question: str = ""
    texts: Mapping[str, str] = field(default_factory=dict)
    titles: Mapping[str, str] = field(default_factory=dict)


def linked(found: Evidence, bonus: float = LINK_BONUS, own: float = 0.0) -> Ranked:
    """By the best pair each passage belongs to (see the module's docstring): a passage's score
    is half of max over the others of (its cosine × (1 + ``own``) + theirs × (1 − ``own``) +
    ``bonus`` when linked either way), its cosine when it is alone. With ``own`` 0 both
    passages of a pair share its score; ``tests/bench/order_bench.py`` measures other weights
    (docs/benchmarks.md, "The linked order's own weight"). Ties go to the passage more similar
    to the question; passages without a vector go last."""
    cosine = found.cosine
    keys = pair_scores(found, bonus, own)
    order = sorted(keys, key=lambda pid: (-keys[pid], -cosine[pid], pid))
    rest = [pid for pid in found.walk.ids() if pid not in cosine]
    return [(pid, keys[pid]) for pid in order] + [(pid, 0.0) for pid in rest]


def partners(found: Evidence) -> dict[str, list[str]]:
    """Each passage with a cosine and the others with one that it links to either way."""
    cosine = found.cosine
    out: dict[str, set[str]] = {}
    for a, b in found.links:
        if a in cosine and b in cosine:
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return {pid: sorted(others) for pid, others in out.items()}


def pair_scores(
    found: Evidence,
    bonus: float = LINK_BONUS,
    own: float = 0.0,
    linked_to: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, float]:
    """:func:`linked`'s score of every passage with a cosine, in visiting order (``linked_to``:
    :func:`partners`, when the caller has them)."""
    cosine = found.cosine
    scored = [pid for pid in found.walk.ids() if pid in cosine]
    linked_to = partners(found) if linked_to is None else linked_to
    best = sorted(scored, key=lambda pid: -cosine[pid])[:2]

    def pair(pid: str) -> float:
        mine = (1 + own) * cosine[pid]
        alone = [mine + (1 - own) * cosine[o] for o in best if o != pid][:1]
        joined = [mine + (1 - own) * cosine[o] + bonus for o in linked_to.get(pid, ())]
        return max([*alone, *joined], default=2 * cosine[pid]) / 2

    return {pid: pair(pid) for pid in scored}


def by_visit(found: Evidence) -> Ranked:
    """As the traversal visited them, with the traversal's scores."""
    walk = found.walk
    return [(pid, walk.visits[pid].score) for pid in walk.ids()]


def _by_similarity(walk: Traversal, cosine: Mapping[str, float]) -> list[str]:
    # passages without a vector go last
    return sorted(walk.ids(), key=lambda i: -cosine[i] if i in cosine else float("inf"))


def by_question(found: Evidence) -> Ranked:
    """By cosine with the question."""
    return [(pid, found.cosine.get(pid, 0.0)) for pid in _by_similarity(found.walk, found.cosine)]


def by_paths(found: Evidence) -> Ranked:
    """Each seed by similarity, followed by its best-scored child, then the rest by similarity."""
    walk, cosine = found.walk, found.cosine
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


def fused(found: Evidence) -> Ranked:
    """Visiting order and similarity, fused by reciprocal rank."""
    ids = found.walk.ids()
    return reciprocal_rank_fusion([ids, _by_similarity(found.walk, found.cosine)], len(ids))

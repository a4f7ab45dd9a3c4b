"""Algorithm 1 of the KGP paper (the LLM-guided graph traversal), as a pure function over two
injected calls: one neighbourhood expansion per level (a Cypher query in production) and one
scoring call per level (Eq. 1's f, g and φ).

Reading of Algorithm 1 used here (../shared/DESIGN.md): the S seeds start S one-node reasoning
paths and the retrieved set; each dequeued path ranks its candidates N(last node) minus what is
already retrieved by Eq. (1), with f fed the question and the path's passages; its top b (the
branching factor) become new retrieved passages, new paths and new candidate sets; the traversal
stops when the queue is empty or K passages are retrieved. All paths of one hop are expanded and
scored together; within a hop, paths are served in queue order, so a passage chosen by an earlier
path is not counted again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kgp.settings import DEFAULT_K

Path = tuple[str, ...]
# ids -> {id: neighbour ids}: one store call for every node of a hop
Expand = Callable[[Sequence[str]], Mapping[str, Sequence[str]]]
# (question, paths, candidates per path) -> scores per path and candidate: one model call per hop
Score = Callable[[str, Sequence[Path], Sequence[Sequence[str]]], Sequence[Sequence[float]]]


@dataclass(frozen=True, slots=True)
class Visit:
    """Why a passage was retrieved: the path that reached it, its hop and its Eq. (1) score."""

    id: str
    hop: int
    score: float
    path: Path
    order: int

    @property
    def parent(self) -> str | None:
        return self.path[-2] if len(self.path) > 1 else None


@dataclass
class Traversal:
    visits: dict[str, Visit] = field(default_factory=dict)
    hops: int = 0
    expansions: int = 0
    scorings: int = 0

    def ids(self) -> list[str]:
        return list(self.visits)


def traverse(
    question: str,
    seeds: Sequence[tuple[str, float]],
    expand: Expand,
    score: Score,
    *,
    budget: int = DEFAULT_K,
    branching: int = 3,
) -> Traversal:
    """Run Algorithm 1 from scored seeds; returns the retrieved passages in visiting order."""
    result = Traversal()
    if budget < 1:
        return result
    frontier: list[Path] = []
    for seed, seed_score in seeds:
        if seed in result.visits:
            continue
        result.visits[seed] = Visit(seed, 0, float(seed_score), (seed,), len(result.visits))
        frontier.append((seed,))
        if len(result.visits) >= budget:
            return result
    while frontier and len(result.visits) < budget:
        neighbourhood = expand([path[-1] for path in frontier])
        result.expansions += 1
        candidates = [
            [c for c in dict.fromkeys(neighbourhood.get(path[-1], ())) if c not in result.visits]
            for path in frontier
        ]
        live = [(p, c) for p, c in zip(frontier, candidates, strict=True) if c]
        if not live:
            break
        scores = score(question, [p for p, _ in live], [c for _, c in live])
        result.scorings += 1
        result.hops += 1
        next_frontier: list[Path] = []
        for (path, pool), row in zip(live, scores, strict=True):
            ranked = sorted(zip(pool, row, strict=True), key=lambda pair: (-pair[1], pair[0]))
            taken = 0
            for candidate, value in ranked:
                if taken == branching or len(result.visits) >= budget:
                    break
                if candidate in result.visits:
                    continue  # an earlier path of this hop took it
                new_path = (*path, candidate)
                result.visits[candidate] = Visit(
                    candidate, result.hops, float(value), new_path, len(result.visits)
                )
                next_frontier.append(new_path)
                taken += 1
            if len(result.visits) >= budget:
                break
        frontier = next_frontier
    return result

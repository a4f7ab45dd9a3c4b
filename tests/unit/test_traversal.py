"""Algorithm 1 on small in-memory graphs, checked against a direct, unbatched implementation."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from kgp.agents.traversal import Path, traverse


def line_graph(n: int) -> dict[str, list[str]]:
    return {f"p{i}": [f"p{j}" for j in (i - 1, i + 1) if 0 <= j < n] for i in range(n)}


class Calls:
    def __init__(self, graph: Mapping[str, Sequence[str]], weights: Mapping[str, float]) -> None:
        self.graph = graph
        self.weights = weights
        self.expands = 0
        self.scores = 0

    def expand(self, ids: Sequence[str]) -> dict[str, list[str]]:
        self.expands += 1
        return {i: list(self.graph.get(i, ())) for i in ids}

    def score(
        self, q: str, paths: Sequence[Path], cands: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        self.scores += 1
        return [[self.weights.get(c, 0.0) for c in row] for row in cands]


def reference(seeds, graph, weights, budget, branching):  # type: ignore[no-untyped-def]
    """Algorithm 1 path by path (no batching), with the same tie-breaking."""
    retrieved: dict[str, int] = {}
    queue: deque[tuple[tuple[str, ...], int]] = deque()
    for s, _ in seeds:
        if s not in retrieved:
            retrieved[s] = 0
            queue.append(((s,), 0))
            if len(retrieved) >= budget:
                return list(retrieved)
    while queue and len(retrieved) < budget:
        path, hop = queue.popleft()
        pool = [c for c in dict.fromkeys(graph.get(path[-1], ())) if c not in retrieved]
        ranked = sorted(pool, key=lambda c: (-weights.get(c, 0.0), c))
        for c in ranked[:branching]:
            retrieved[c] = hop + 1
            queue.append(((*path, c), hop + 1))
            if len(retrieved) >= budget:
                return list(retrieved)
    return list(retrieved)


def test_budget_branching_and_paths() -> None:
    graph = line_graph(20)
    calls = Calls(graph, {f"p{i}": 1.0 / (1 + i) for i in range(20)})
    result = traverse("q", [("p10", 1.0)], calls.expand, calls.score, budget=5, branching=3)
    assert result.ids() == ["p10", "p9", "p11", "p8", "p12"]
    assert result.visits["p8"].path == ("p10", "p9", "p8")
    assert result.visits["p8"].parent == "p9" and result.visits["p8"].hop == 2
    assert calls.expands == calls.scores == result.hops == 2  # one call each per hop


def test_no_passage_counted_twice_and_queue_exhaustion() -> None:
    graph = {"a": ["b", "c"], "b": ["a", "c"], "c": ["a", "b"]}
    calls = Calls(graph, {})
    result = traverse(
        "q", [("a", 1.0), ("b", 0.5), ("a", 0.1)], calls.expand, calls.score, budget=30
    )
    assert sorted(result.ids()) == ["a", "b", "c"]
    assert len(result.visits) == 3


def test_isolated_seeds_and_empty_budget() -> None:
    calls = Calls({}, {})
    assert traverse("q", [("x", 1.0)], calls.expand, calls.score).ids() == ["x"]
    assert traverse("q", [("x", 1.0)], calls.expand, calls.score, budget=0).ids() == []
    assert traverse("q", [], calls.expand, calls.score).ids() == []


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 40),
    st.integers(0, 2**32 - 1),
    st.integers(1, 30),
    st.integers(1, 4),
    st.integers(1, 5),
)
def test_matches_the_unbatched_algorithm(
    n: int, seed: int, budget: int, branching: int, seeds: int
) -> None:
    rng = random.Random(seed)
    nodes = [f"p{i}" for i in range(n)]
    graph = {v: rng.sample(nodes, rng.randint(0, min(5, n))) for v in nodes}
    weights = {v: rng.random() for v in nodes}
    seed_list = [(rng.choice(nodes), 1.0) for _ in range(seeds)]
    calls = Calls(graph, weights)
    got = traverse("q", seed_list, calls.expand, calls.score, budget=budget, branching=branching)
    want = reference(seed_list, graph, weights, budget, branching)
    assert got.ids() == want  # same passages, same visiting order
    assert len(got.ids()) <= budget

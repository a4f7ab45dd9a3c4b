"""How passages are found, registered in ``kgp.names.METHODS``: Algorithm 1 (seeds, then the
traversal scored per hop), GNN-Ret and RGNN-Ret (one ranking by integrated distance, every
passage a seed). Each is a function ``(parts, question, k) -> Found``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgp.agents.seeders import Seeder, Seeds
from kgp.agents.traversal import Expand, Score, Traversal, Visit, traverse

if TYPE_CHECKING:
    from kgp.agents.context import Services
    from kgp.agents.rgnn import RecurrentGnnRetriever


@dataclass(frozen=True, slots=True)
class Parts:
    """A retriever's parts, as its method uses them."""

    services: Services
    seeder: Seeder
    scorer: Score
    expand: Expand  # ids -> their neighbours (one store call per hop)
    recurrent: Callable[[], RecurrentGnnRetriever]  # RGNN-Ret, built on first use


@dataclass(frozen=True, slots=True)
class Found:
    seeds: Seeds
    walk: Traversal
    seed_seconds: float  # of the method's time, how much went to finding the seeds
    steps: dict[str, Any] | None = None  # RGNN-Ret: sub-questions, answers, why it stopped


Method = Callable[[Parts, str, int], Found]


def algorithm_one(parts: Parts, question: str, k: int) -> Found:
    """KGP's Algorithm 1: seeds, then the traversal, ``k`` passages in all."""
    config = parts.services.config
    started = time.perf_counter()
    # at most a third of the budget goes to seeds, so a small k still leaves room to hop
    seeds = parts.seeder.seeds(question, min(config.seeds, max(1, -(-k // 3))))
    seeded = time.perf_counter()
    walk = traverse(
        question, seeds, parts.expand, parts.scorer, budget=k, branching=config.branching
    )
    return Found(seeds, walk, seeded - started)


def _ranking(ranked: list[tuple[str, float]]) -> tuple[Seeds, Traversal]:
    seeds = [(pid, round(1.0 - d, 6)) for pid, d in ranked]
    walk = Traversal({pid: Visit(pid, 0, score, (pid,), n) for n, (pid, score) in enumerate(seeds)})
    return seeds, walk


def gnn_ret(parts: Parts, question: str, k: int) -> Found:
    """GNN-Ret: passages by integrated distance."""
    started = time.perf_counter()
    ranked = parts.services.gnn.retrieve(question, k)
    seeds, walk = _ranking(ranked)
    return Found(seeds, walk, time.perf_counter() - started)


def rgnn_ret(parts: Parts, question: str, k: int) -> Found:
    """RGNN-Ret: sub-questions with the chat model, GNN-Ret per step."""
    from kgp.agents.rgnn import describe

    started = time.perf_counter()
    outcome = parts.recurrent().retrieve(question, k)
    seeds, walk = _ranking(outcome.passages)
    return Found(seeds, walk, time.perf_counter() - started, describe(outcome))

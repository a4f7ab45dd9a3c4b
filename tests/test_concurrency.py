"""A KnowledgeGraph and its retrievers shared between threads, as a server shares them:
concurrent questions get exactly the answers they get one at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from kgp.client import KnowledgeGraph

QUESTIONS = [
    "Which station recorded the most rain, and what does it serve?",
    "Who manages the station whose two pumps were replaced?",
    "What does Table 1 list?",
    "pump bearings replaced",
    "Which stations keep sandbags on site?",
    "When is the flood preparation reviewed?",
]
CONFIGS = [
    {"scorer": "tfidf", "seeder": "hybrid"},
    {"scorer": "embedding", "seeder": "tfidf"},
    {"scorer": "hybrid", "seeder": "vector"},
    {"method": "gnn"},
]


def answer(kg: KnowledgeGraph, question: str, choice: dict[str, str]) -> list[Any]:
    result = kg.retrieve(question, 8, **choice)
    return [(p.id, p.score, p.step_score, tuple(p.path)) for p in result.passages]


@pytest.mark.parametrize("fresh", [False, True], ids=["warm", "cold"])
def test_concurrent_retrieves_equal_sequential_ones(kg: KnowledgeGraph, fresh: bool) -> None:
    jobs = [(q, c) for q in QUESTIONS for c in CONFIGS] * 3
    expected = {(q, str(c)): answer(kg, q, c) for q, c in jobs}
    if fresh:  # retrievers and caches built while other threads use them
        kg._changed()
        kg._retrievers.clear()
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda job: answer(kg, *job), jobs))
    for (question, choice), passages in zip(jobs, got, strict=True):
        assert passages == expected[(question, str(choice))], (question, choice)


def test_store_calls_are_counted_per_retrieval_under_threads(kg: KnowledgeGraph) -> None:
    question = QUESTIONS[0]
    alone = kg.retrieve(question, 8).store_calls
    with ThreadPoolExecutor(max_workers=6) as pool:
        counts = list(pool.map(lambda _: kg.retrieve(question, 8).store_calls, range(12)))
    assert counts == [alone] * 12


def test_concurrent_vector_searches_get_their_own_answers(kg: KnowledgeGraph) -> None:
    """FalkorDB 4.16 runs concurrent vector-index queries into each other's answers (rows of
    another query, or none); kgp's embedded server runs one query thread, so they cannot."""
    rng = np.random.default_rng(0)
    vectors = [
        (v / np.linalg.norm(v)).tolist() for v in rng.normal(size=(24, kg.encoder.dimension))
    ]

    def search(vector: list[float]) -> list[tuple[str, float]]:
        return [(h.id, h.score) for h in kg.store.vector_search(vector, 20)]

    alone = [search(v) for v in vectors]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(search, vectors * 10))
    assert together == alone * 10

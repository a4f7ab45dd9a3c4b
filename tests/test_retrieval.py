"""Retrieval over the shipped example documents: seeds, Algorithm 1 hops, paths, bad questions."""

from __future__ import annotations

from pathlib import Path

import kgp
import pytest
from kgp.access import ADMIN_CALLER
from kgp.agents.seeders import reciprocal_rank_fusion
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError
from kgp.ingest.embedding import Encoder


def test_retrieve_follows_the_graph_beyond_the_seeds(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("Which station recorded the most rain, and what does it serve?", k=14)
    assert len(result.passages) == 14
    assert len({p.id for p in result.passages}) == 14
    assert len(result.seeds) == 5, "a third of the budget (rounded up) goes to seeds"
    hops = [p for p in result.passages if p.hop > 0]
    assert hops, "the budget beyond the seeds is spent on neighbours"
    for passage in hops:
        assert passage.path[0] in {s["id"] for s in result.seeds}
        assert passage.path[-1] == passage.id
    texts = " ".join(p.text for p in result.passages)
    assert "Cedar Hollow recorded the most rain" in texts
    assert "Cedar Hollow station serves the northern farms." in texts
    first = result.passages[0]
    assert first.document["path"] and first.document["title"] and first.page >= 1
    assert result.store_calls > 0 and result.timings["total_ms"] > 0


def test_seeders_and_their_errors(kg: KnowledgeGraph) -> None:
    for seeder in ("vector", "fulltext", "hybrid"):
        assert kg.retrieve("pump bearings replaced", k=3, seeder=seeder).passages
    with pytest.raises(ConfigurationError, match="unknown seeder 'bm99'"):
        kg.retrieve("x", seeder="bm99")
    with pytest.raises(ConfigurationError, match="unknown scorer 'oracle'"):
        kg.retrieve("x", scorer="oracle")


@pytest.mark.parametrize("question", ["", "   \n\t"])
def test_empty_question(kg: KnowledgeGraph, question: str) -> None:
    with pytest.raises(ConfigurationError, match="question is empty"):
        kg.retrieve(question)


def test_hostile_and_huge_questions_leave_the_graph_alone(kg: KnowledgeGraph) -> None:
    before = kg.stats()
    for question in ["') DETACH DELETE n //", 'MATCH (n) DETACH DELETE n "\\', "pump " * 20_000]:
        kg.retrieve(question, k=5)
    assert kg.stats() == before


def test_empty_graph(tmp_path: Path, encoder: Encoder) -> None:
    with kgp.open(data_dir=tmp_path / "empty") as graph:
        graph._encoder = encoder
        with graph.store.reading_as(ADMIN_CALLER):
            graph.store.ensure_schema(encoder.dimension)
        assert graph.retrieve("anything at all?").passages == []


def test_reciprocal_rank_fusion() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], 3)
    assert [pid for pid, _ in fused] == ["a", "c", "b"]


def test_tfidf_scorer_prefers_shared_rare_terms() -> None:
    from kgp.agents.scorers import TfidfScorer

    texts = {
        "a": "Cedar Hollow recorded the most rain",
        "b": "Cedar Hollow station serves the northern farms.",
        "c": "Birchfield ran its pumps",
        "e": "other words entirely",
    }
    scorer = TfidfScorer(lambda ids: {i: texts[i] for i in ids})
    scores = scorer("Which station recorded the most rain?", [("a",), ("e",)], [["b", "c"], ["c"]])
    assert scores[0][0] > 0.1 and scores[0][1] == 0.0 and scores[1] == [0.0]


def test_retrieve_with_the_tfidf_scorer(kg: KnowledgeGraph) -> None:
    result = kg.retrieve(
        "Who is the maintenance lead and where are spare pumps kept?", k=15, scorer="tfidf"
    )
    assert len(result.passages) == 15
    assert any(p.hop > 0 for p in result.passages)
    assert any("Jonas Weber" in p.text for p in result.passages)

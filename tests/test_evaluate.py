"""`kgp eval`: metrics, the graph built once per dataset, baselines and KGP in one run, bad
input, and a results file that stays valid when a run is interrupted."""

from __future__ import annotations

import json
from pathlib import Path

import kgp
import pytest
from kgp.errors import ConfigurationError, DocumentError
from kgp.evaluate import QuestionResult, RetrieverReport, evaluate, recall, reciprocal_rank
from kgp.ingest.embedding import Encoder

from tests.test_cli import kgp as run_kgp

PEOPLE = [
    ("Ada Park", "Ada Park founded the Acme Pump Company in 1921 in Lowell."),
    ("Acme Pump Company", "The Acme Pump Company makes the Foo river pump."),
    ("Foo river pump", "The Foo river pump lifts water for the Cedar farms."),
    ("Lowell", "Lowell is a mill town on the Merrimack river."),
    ("Bea Stone", "Bea Stone painted harbours and lighthouses in Maine."),
    ("Maine", "Maine is the northeasternmost state of the United States."),
]


def hotpot(qid: str, question: str, gold: list[str], answer: str = "x") -> dict[str, object]:
    return {
        "_id": qid,
        "question": question,
        "answer": answer,
        "supporting_facts": [[title, 0] for title in gold],
        "context": [[title, [text]] for title, text in PEOPLE],
    }


def dataset(tmp_path: Path) -> Path:
    rows = [
        hotpot(
            "q1",
            "Who founded the company that makes the Foo river pump?",
            ["Foo river pump", "Acme Pump Company"],
        ),
        hotpot("q2", "In which state did Bea Stone paint lighthouses?", ["Bea Stone", "Maine"]),
        hotpot("q3", "Where was the founder of Acme born?", []),  # no gold: skipped, counted
    ]
    path = tmp_path / "tiny_hotpot.json"
    path.write_text(json.dumps(rows))
    return path


def test_metrics() -> None:
    row = QuestionResult("q", "?", ["a", "b", "c", "d"], ["c", "z"], 1.0, 2)
    assert recall(row, 2) == 0.0 and recall(row, 3) == 0.5
    assert reciprocal_rank(row) == pytest.approx(1 / 3)
    summary = RetrieverReport("r", [row]).summary(3)
    assert summary["recall@3"] == 50.0 and summary["all@3"] == 0.0
    assert summary["precision@3"] == pytest.approx(33.3) and summary["mrr"] == pytest.approx(33.3)


def test_evaluate_builds_the_graph_once_and_runs_every_retriever(
    tmp_path: Path, encoder: Encoder
) -> None:
    def factory(data_dir: Path) -> kgp.KnowledgeGraph:
        graph = kgp.open(data_dir=data_dir)
        graph._encoder = encoder
        return graph

    path = dataset(tmp_path)
    out = tmp_path / "results.json"
    names = ["dense", "bm25", "tfidf", "kgp-tfidf", "kgp-embedding"]
    result = evaluate(path, factory, tmp_path / "data", retrievers=names, k=4, out=out)
    assert result.complete and result.passages == len(PEOPLE)
    assert result.skipped == ["q3"]
    summary = result.summaries()
    assert list(summary) == names
    for row in summary.values():
        assert row["questions"] == 2 and row["failed"] == 0
        assert 0 <= row["recall@4"] <= 100 and row["store_calls"] >= 1
    assert summary["dense"]["recall@4"] >= 50.0
    saved = json.loads(out.read_text())
    assert saved["complete"] and len(saved["questions"]["kgp-tfidf"]) == 2
    built = list((tmp_path / "data" / "eval").iterdir())
    again = evaluate(path, factory, tmp_path / "data", retrievers=["dense"], k=4)
    assert list((tmp_path / "data" / "eval").iterdir()) == built, "the graph is reused"
    assert again.summaries()["dense"] == {
        **summary["dense"],
        **{key: again.summaries()["dense"][key] for key in ("p50_ms", "p95_ms")},
    }


def test_interrupted_run_leaves_a_valid_partial_file(tmp_path: Path, encoder: Encoder) -> None:
    calls = 0

    def factory(data_dir: Path) -> kgp.KnowledgeGraph:
        graph = kgp.open(data_dir=data_dir)
        graph._encoder = encoder
        return graph

    def stop(name: str, done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        if name == "bm25":
            raise KeyboardInterrupt

    out = tmp_path / "partial.json"
    with pytest.raises(KeyboardInterrupt):
        evaluate(
            dataset(tmp_path),
            factory,
            tmp_path / "d",
            retrievers=["dense", "bm25"],
            k=3,
            out=out,
            on_progress=stop,
        )
    saved = json.loads(out.read_text())
    assert saved["complete"] is False
    assert len(saved["questions"]["dense"]) == 2 and len(saved["questions"]["bm25"]) == 1


def test_bad_input(tmp_path: Path) -> None:
    unknown = tmp_path / "odd.json"
    unknown.write_text(json.dumps([{"question": "q", "facts": []}]))
    with pytest.raises(DocumentError, match="not a MuSiQue, HotpotQA or 2Wiki question"):
        evaluate(unknown, kgp.open, tmp_path, retrievers=["dense"])
    with pytest.raises(ConfigurationError, match="unknown retriever 'oracle'; choose from dense"):
        evaluate(dataset(tmp_path), kgp.open, tmp_path, retrievers=["oracle"])


def test_cli_eval(tmp_path: Path) -> None:
    path = dataset(tmp_path)
    data_dir = tmp_path / "kb"
    done = run_kgp(
        "--data-dir",
        str(data_dir),
        "eval",
        str(path),
        "--retrievers",
        "dense,kgp-tfidf",
        "--k",
        "4",
        "--json",
        "--out",
        str(tmp_path / "r.json"),
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary["summary"]) == {"dense", "kgp-tfidf"}
    assert summary["skipped_without_gold"] == ["q3"] and summary["complete"]
    table = run_kgp("--data-dir", str(data_dir), "eval", str(path), "--retrievers", "dense")
    assert table.returncode == 0 and "recall@30" in table.stdout and "dense" in table.stdout
    bad = run_kgp("--data-dir", str(data_dir), "eval", str(tmp_path / "missing.json"))
    assert bad.returncode == 1 and bad.stderr.startswith("kgp: error: ")
    assert "cannot read the QA file" in bad.stderr

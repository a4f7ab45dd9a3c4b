"""`kgp eval`: metrics, the graph built once per dataset, baselines and KGP in one run, bad
input, and a results file that stays valid when a run is interrupted."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp import metrics
from kgp.agents.judge import grading_prompt
from kgp.errors import ConfigurationError, DocumentError
from kgp.evaluate import QuestionResult, RetrieverReport, choose_items, evaluate
from kgp.ingest.embedding import Encoder
from kgp.qa import load_qa
from kgp.settings import load_settings

from tests.llm_server import chat_server
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


def test_retrieval_metrics() -> None:
    gold = [["c"], ["z"]]
    retrieved = ["a", "b", "c", "d"]
    assert metrics.recall(gold, retrieved, 2) == 0.0 and metrics.recall(gold, retrieved, 3) == 0.5
    assert metrics.reciprocal_rank(gold, retrieved) == pytest.approx(1 / 3)
    assert metrics.recall([["x", "c"]], retrieved, 3) == 1.0, "a unit is found by any of its ids"
    assert metrics.struct_exact([["a", "b"]], retrieved, 2) == 1.0
    assert metrics.struct_exact([["a", "c"]], retrieved, 2) == 0.0, "a structure is found whole"
    assert (metrics.hit(gold, retrieved, 2), metrics.hit(gold, retrieved, 3)) == (0.0, 1.0)
    row = QuestionResult("q", "?", retrieved, gold, 1.0, 2)
    summary = RetrieverReport("r", [row]).summary(3)
    assert summary["recall@3"] == 50.0 and summary["all@3"] == 0.0
    assert (summary["recall@1"], summary["recall@2"], summary["recall@5"]) == (0.0, 0.0, 50.0)
    first = RetrieverReport("r", [QuestionResult("q", "?", ["c", "z"], gold, 1.0, 2)])
    assert (first.summary(3)["recall@1"], first.summary(3)["recall@2"]) == (50.0, 100.0)
    assert (summary["hit@1"], summary["hit@5"], first.summary(3)["hit@1"]) == (0.0, 100.0, 100.0)
    table = QuestionResult(
        "t", "?", ["p#page=1&table=0"], [], 1.0, 1, structures=[["p#page=1&table=0"]]
    )
    assert RetrieverReport("r", [table]).summary(3)["hit@1"] == 100.0, "a table asked for, first"
    assert summary["precision@3"] == pytest.approx(33.3) and summary["mrr"] == pytest.approx(33.3)
    assert "struct_em" not in summary and "em" not in summary
    assert RetrieverReport("r", [row]).curve(4) == [0.0, 0.0, 50.0, 50.0]


def test_answer_metrics_use_squad_normalisation() -> None:
    assert metrics.normalise_answer("The  Walt Disney Company!") == "walt disney company"
    assert metrics.exact_match("the Walt Disney company.", ["Walt Disney Company"]) == 1.0
    assert metrics.exact_match("Disney", ["Walt Disney Company"]) == 0.0
    assert metrics.token_f1("Disney", ["Walt Disney Company"]) == pytest.approx(0.5)
    assert metrics.token_f1("Kovac", ["Mira Kovac", "Kovac"]) == 1.0, "the best accepted answer"
    assert metrics.token_f1("nothing", ["Kovac"]) == 0.0


def test_grading_prompt_is_the_papers_listing() -> None:
    prompt = grading_prompt("Who?", ["Ada", "Ada Park"], "Ada P.")
    assert prompt.startswith("You are an expert professor specialized in grading whether")
    assert (
        "Question: Which year was Marvel started?\nAnswer: 1939\nPrediction: 1200\nReturn: 0"
        in (prompt)
    )
    assert prompt.endswith(
        "Question: Who?\nAnswer: Ada / Ada Park\nPrediction: Ada P.\n"
        "If the prediction is correct according to the answer, return 1. Otherwise, return 0.\n"
        "Return: your reply can only be one number '0' or '1'"
    )


def test_evaluate_builds_the_graph_once_and_runs_every_retriever(
    tmp_path: Path, encoder: Encoder
) -> None:
    factory = partial(kgp.open, loaded_encoder=encoder)
    path = dataset(tmp_path)
    out = tmp_path / "results.json"
    result = evaluate(path, factory, tmp_path / "data", k=4, out=out)
    assert result.complete and result.passages == len(PEOPLE)
    assert result.skipped == ["q3"]
    summary = result.summaries()
    ran = ["bm25", "tfidf", "knn", "dense", "mdr", "kgp-tfidf", "kgp-embedding", "kgp-hybrid"]
    shipped = ["kgp-mdr"]  # the mdr scorer runs the shipped model when KGP_MDR_MODEL is unset
    assert list(summary) == [*ran, "kgp-embedding-text", *shipped, "gnn-ret"]
    assert set(result.unavailable) == {"none", "golden", "kgp-t5", "kgp-llm", "rgnn-ret"}
    assert "KGP_T5_MODEL" in result.unavailable["kgp-t5"]
    for row in summary.values():
        assert row["questions"] == 2 and row["failed"] == 0
        assert 0 <= row["recall@4"] <= 100 and row["store_calls"] >= 1
    assert summary["dense"]["recall@4"] >= 50.0
    assert summary["mdr"]["store_calls"] == 4 and summary["mdr"]["recall@4"] >= 50.0
    saved = json.loads(out.read_text())
    assert saved["complete"] and len(saved["questions"]["kgp-tfidf"]) == 2
    assert len(saved["recall_curves"]["knn"]) == 4
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    built = list((tmp_path / "data" / "eval").iterdir())
    again = evaluate(path, factory, tmp_path / "data", retrievers=["dense"], k=4)
    assert list((tmp_path / "data" / "eval").iterdir()) == built, "the graph is reused"
    evaluate(
        path,
        partial(kgp.open, loaded_encoder=encoder, knn_k=2),
        tmp_path / "data",
        retrievers=["dense"],
        k=4,
        settings=load_settings(knn_k=2),
    )
    assert len(list((tmp_path / "data" / "eval").iterdir())) == len(built) + 1, (
        "other graph settings build another graph"
    )
    assert again.summaries()["dense"] == {
        **summary["dense"],
        **{key: again.summaries()["dense"][key] for key in ("p50_ms", "p95_ms")},
    }


def test_named_retriever_that_cannot_run_is_an_error(tmp_path: Path, encoder: Encoder) -> None:
    factory = partial(kgp.open, loaded_encoder=encoder)
    with pytest.raises(ConfigurationError, match="set KGP_T5_MODEL"):
        evaluate(dataset(tmp_path), factory, tmp_path / "d", retrievers=["dense,kgp-t5"], k=3)
    with pytest.raises(ConfigurationError, match="golden is a bound for answering"):
        evaluate(dataset(tmp_path), factory, tmp_path / "d", retrievers=["golden"], k=3)


def test_knn_mixes_dense_and_fuzzy_matches(tmp_path: Path, encoder: Encoder) -> None:
    result = evaluate(
        dataset(tmp_path),
        partial(kgp.open, loaded_encoder=encoder),
        tmp_path / "d",
        retrievers=["dense", "knn"],
        k=4,
    )
    dense, knn = (result.reports[n].questions[0].retrieved for n in ("dense", "knn"))
    assert knn[:2] == dense[:2], "the first half of the budget is dense"
    assert len(knn) == 4 and len(set(knn)) == 4


def test_per_question_setting(tmp_path: Path, encoder: Encoder) -> None:
    factory = partial(kgp.open, loaded_encoder=encoder)
    names = ["dense", "kgp-tfidf"]
    result = evaluate(
        dataset(tmp_path), factory, tmp_path / "d", retrievers=names, k=3, setting="per-question"
    )
    assert result.setting == "per-question" and result.complete
    assert result.passages == 2 * len(PEOPLE), "one graph of the question's paragraphs each"
    assert [len(result.reports[n].questions) for n in names] == [2, 2]
    folder = next((tmp_path / "d" / "eval").glob("*-per-question"))
    assert sorted(p.name for p in folder.glob("built-*")) == ["built-q0", "built-q1"]
    again = evaluate(
        dataset(tmp_path),
        factory,
        tmp_path / "d",
        retrievers=["dense"],
        k=3,
        setting="per-question",
    )
    assert again.summaries()["dense"]["recall@3"] == result.summaries()["dense"]["recall@3"]
    with pytest.raises(ConfigurationError, match="unknown setting 'each'"):
        evaluate(dataset(tmp_path), factory, tmp_path / "d", setting="each")


def test_limit_with_a_seed_samples(tmp_path: Path) -> None:
    items = load_qa(dataset(tmp_path))
    assert choose_items(items, 2, None) == items[:2]
    sample = choose_items(items, 2, 7)
    assert sample == choose_items(items, 2, 7) and len(sample) == 2
    assert {tuple(i.id for i in choose_items(items, 1, s)) for s in range(20)} == {
        ("q1",),
        ("q2",),
        ("q3",),
    }


def dense_and_bm25(tmp_path: Path, encoder: Encoder, **options: Any) -> None:
    """``dense`` and ``bm25`` on the two questions of :func:`dataset`, k = 3."""
    evaluate(
        dataset(tmp_path),
        partial(kgp.open, loaded_encoder=encoder),
        tmp_path / "d",
        retrievers=["dense", "bm25"],
        k=3,
        **options,
    )


def test_interrupted_run_leaves_a_valid_partial_file(tmp_path: Path, encoder: Encoder) -> None:
    def stop(name: str, done: int, total: int) -> None:
        if name == "bm25":
            raise KeyboardInterrupt

    out = tmp_path / "partial.json"
    with pytest.raises(KeyboardInterrupt):
        dense_and_bm25(tmp_path, encoder, out=out, on_progress=stop)
    saved = json.loads(out.read_text())
    assert saved["complete"] is False  # (each question asked of both in turn: one each)
    assert len(saved["questions"]["dense"]) == 1 and len(saved["questions"]["bm25"]) == 1


def test_each_question_is_asked_of_every_retriever_in_turn(
    tmp_path: Path, encoder: Encoder
) -> None:
    """Which retriever goes first alternates, so a drifting machine slows them alike."""
    asked: list[tuple[str, int]] = []
    dense_and_bm25(
        tmp_path, encoder, on_progress=lambda name, done, total: asked.append((name, done))
    )
    assert asked == [("dense", 1), ("bm25", 1), ("bm25", 2), ("dense", 2)]


def test_bad_input(tmp_path: Path) -> None:
    unknown = tmp_path / "odd.json"
    unknown.write_text(json.dumps([{"question": "q", "facts": []}]))
    with pytest.raises(DocumentError, match="not a MuSiQue, HotpotQA, 2Wiki or kgp's JSONL"):
        evaluate(unknown, kgp.open, tmp_path, retrievers=["dense"])
    with pytest.raises(
        ConfigurationError, match="unknown retriever 'oracle'; choose from all, none, golden, bm25"
    ):
        evaluate(dataset(tmp_path), kgp.open, tmp_path, retrievers=["oracle"])


@pytest.mark.slow
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
    table = run_kgp("--data-dir", str(data_dir), "eval", str(path), "--retrievers", "all")
    assert table.returncode == 0, table.stderr
    assert "recall@30" in table.stdout and "knn" in table.stdout and "kgp-hybrid" in table.stdout
    assert "not run: kgp-t5: the t5 scorer needs a seq2seq model" in table.stderr
    assert "not run: golden: golden is a bound for answering" in table.stderr
    written = list((data_dir / "eval" / "results").glob("tiny_hotpot-*"))
    assert sorted(p.suffix for p in written) == [".json", ".png"], "results by default"
    bad = run_kgp("--data-dir", str(data_dir), "eval", str(tmp_path / "missing.json"))
    assert bad.returncode == 1 and bad.stderr.startswith("kgp: error: ")
    assert "cannot read the QA file" in bad.stderr


def user_questions(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


USER_ROWS: list[dict[str, object]] = [
    {
        "id": "u1",
        "question": "Who manages Alder Creek station?",
        "answer": ["Mira Kovac", "Kovac"],
        "supporting": ["The station manager is  Mira Kovac."],
    },
    {
        "id": "u2",
        "question": "In Table 1, which station had the most pump hours?",
        "supporting": [{"document": "rainfall-2024.pdf", "table": 1}],
    },
    {
        "id": "u3",
        "question": "Summarise page 1 of the maintenance log",
        "supporting": [{"document": "maintenance.md", "page": 1}],
    },
    {
        "id": "u4",
        "question": "What is the capital of Mars?",
        "supporting": ["Olympus is the capital of Mars.", {"document": "atlas.pdf", "page": 2}],
    },
]


def test_user_questions_against_an_existing_graph(
    kg: kgp.KnowledgeGraph, encoder: Encoder, tmp_path: Path
) -> None:
    factory = partial(kgp.open, data_dir=kg.settings.data_dir, loaded_encoder=encoder)
    path = user_questions(tmp_path, USER_ROWS)
    result = evaluate(path, factory, tmp_path / "d", retrievers=["dense", "kgp-tfidf"], k=30)
    assert result.setting == "graph" and not (tmp_path / "d" / "eval").exists()
    assert result.unresolved == {
        "u4": ["text 'Olympus is the capital of Mars.'", "atlas.pdf page 2"]
    }
    dense, traversal = result.summaries()["dense"], result.summaries()["kgp-tfidf"]
    structural = [q.id for q in result.reports["dense"].questions if q.structures]
    assert structural == ["u2", "u3", "u4"]
    assert traversal["struct_em"] == 66.7, "the table and the whole page; not the missing page"
    # the vector index holds no Table nodes, and its top 30 of the examples' 42 passages leave
    # part of the maintenance log's page out
    assert dense["struct_em"] == 0.0
    u1 = result.reports["kgp-tfidf"].questions[0]
    assert len(u1.gold) == 1 and u1.gold[0] and u1.gold[0][0] in u1.retrieved
    assert [len(q.gold) for q in result.reports["dense"].questions] == [1, 1, 1, 2]
    assert kg.retrieve("Who manages Alder Creek?", k=3).passages, "the fixture's client still works"
    missing = user_questions(tmp_path, USER_ROWS[3:])
    with pytest.raises(DocumentError, match=r"none of the supporting references of .*kgp sync"):
        evaluate(missing, factory, tmp_path / "d", retrievers=["dense"])
    with pytest.raises(ConfigurationError, match="the per-question setting is for native sets"):
        evaluate(path, factory, tmp_path / "d", retrievers=["dense"], setting="per-question")


def grade_or_answer(messages: list[dict[str, str]]) -> str:
    prompt = messages[-1]["content"]
    if prompt.startswith("You are an expert professor"):
        return "1" if "Prediction: Mira Kovac" in prompt else "0"
    context = prompt.split("CONTEXT:", 1)[1].rsplit("QUESTION:", 1)[0]
    return "Mira Kovac [1]" if "Mira Kovac" in context else "I do not know"


def test_reader_metrics_with_bounds(
    kg: kgp.KnowledgeGraph, encoder: Encoder, tmp_path: Path
) -> None:
    with chat_server(grade_or_answer) as server:
        factory = partial(
            kgp.open,
            data_dir=kg.settings.data_dir,
            loaded_encoder=encoder,
            llm_base_url=server.url,
            llm_model="m",
        )
        path = user_questions(tmp_path, USER_ROWS[:3])
        result = evaluate(
            path, factory, tmp_path / "d", retrievers=["none,golden,kgp-tfidf"], k=10, reader=True
        )
        summary = result.summaries()
        assert summary["none"]["answered"] == 1, "only u1 has an answer to grade"
        assert (summary["none"]["em"], summary["none"]["acc"]) == (0.0, 0.0)
        assert summary["golden"]["em"] == summary["golden"]["f1"] == summary["golden"]["acc"] == 100
        assert summary["kgp-tfidf"]["acc"] == 100.0
        row = result.reports["golden"].questions[0]
        assert row.prediction == "Mira Kovac" and row.em == 1.0
        server.script = [("status", 401)] * 50
        failed = evaluate(
            path, factory, tmp_path / "d", retrievers=["golden"], k=5, reader=True
        ).reports["golden"]
        assert failed.summary(5)["acc"] == 0.0, "a failed answer is a miss"
        assert failed.questions[0].error and failed.questions[0].error.startswith("reader: ")
    unconfigured = partial(kgp.open, data_dir=kg.settings.data_dir, loaded_encoder=encoder)
    with pytest.raises(ConfigurationError, match="answering needs a chat model"):
        evaluate(path, unconfigured, tmp_path / "d", retrievers=["dense"], reader=True)


def test_gold_the_graph_lacks_is_reported_and_missed(tmp_path: Path, encoder: Encoder) -> None:
    factory = partial(kgp.open, loaded_encoder=encoder)
    path = dataset(tmp_path)
    first = evaluate(path, factory, tmp_path / "d", retrievers=["dense"], k=4)
    assert first.unresolved == {}
    gold = first.reports["dense"].questions[1].gold  # q2: Bea Stone, Maine
    (folder,) = (tmp_path / "d" / "eval").iterdir()
    with kgp.open(
        data_dir=folder / "kb", loaded_encoder=encoder, groups="*"
    ) as graph:  # the cached graph, damaged by its admin
        assert graph.store.delete_document(gold[1][0].split("#")[0])
    again = evaluate(path, factory, tmp_path / "d", retrievers=["dense"], k=4)
    assert again.unresolved == {"q2": [gold[1][0]]}
    assert again.reports["dense"].questions[1].gold == gold, "still gold: a miss"


EXAMPLE_QUESTIONS = Path(__file__).resolve().parents[1] / "examples" / "questions.jsonl"


def test_shipped_example_questions(
    kg: kgp.KnowledgeGraph, encoder: Encoder, tmp_path: Path
) -> None:
    factory = partial(kgp.open, data_dir=kg.settings.data_dir, loaded_encoder=encoder)
    result = evaluate(EXAMPLE_QUESTIONS, factory, tmp_path, retrievers=["dense,kgp-tfidf"], k=10)
    assert result.unresolved == {}, "every supporting reference is in the examples graph"
    summary = result.summaries()
    assert summary["kgp-tfidf"]["questions"] == 9 and summary["kgp-tfidf"]["struct_em"] == 100.0
    assert summary["kgp-tfidf"]["recall@10"] >= summary["dense"]["recall@10"]


def test_eval_builds_its_graph_for_any_caller_and_reads_as_the_caller(
    tmp_path: Path, encoder: Encoder
) -> None:
    """kgp eval's graph is its own (built from the QA file whoever asks); its questions are
    asked as the caller: one in the documents' group gets the figures of the default caller,
    one outside it sees none of the gold (every question unresolved) and retrieves nothing."""
    path = dataset(tmp_path)
    default = evaluate(
        path, partial(kgp.open, loaded_encoder=encoder), tmp_path / "a", retrievers=["dense"]
    )
    inside = partial(kgp.open, loaded_encoder=encoder, groups="public")
    same = evaluate(path, inside, tmp_path / "b", retrievers=["dense"])
    timeless = [
        {k: v for k, v in r.reports["dense"].summary(4).items() if not k.endswith("_ms")}
        for r in (same, default)
    ]
    assert timeless[0] == timeless[1]
    outside = partial(kgp.open, loaded_encoder=encoder, groups="hr")
    unseen = evaluate(path, outside, tmp_path / "c", retrievers=["dense"])
    assert len(unseen.unresolved) == len(default.reports["dense"].questions)
    assert unseen.reports["dense"].summary(4)["recall@4"] == 0.0


def test_the_real_pdf_question_set_reads_in_kgps_format() -> None:
    items = load_qa(Path(__file__).parent / "fixtures" / "real_pdfs_qa.jsonl")
    assert len(items) == 64 and len({i.id for i in items}) == 64
    assert all(i.supports and i.answer for i in items)
    kinds = {i.id.split("-")[0] for i in items}
    assert kinds == {"fact", "cell", "page", "table", "multi"}
    assert all(len({s.text is None for s in i.supports}) == 1 for i in items)
    pairs = [i for i in items if i.id.startswith("multi")]
    assert all(len(i.supports) == 2 for i in pairs), "each needs two documents"


def test_the_table_questions_the_order_is_fitted_on_read_in_kgps_format() -> None:
    items = load_qa(Path(__file__).parent / "fixtures" / "icdar2013_table_questions.jsonl")
    assert len(items) == 199 and len({i.id for i in items}) == len(items)
    for item in items:
        (support,) = item.supports
        row = support.text or ""
        assert row.startswith("| ") and row.endswith(" |"), "a stored table row"
        assert str(item.answer).lower() in row.lower(), "the row holds the value asked for"

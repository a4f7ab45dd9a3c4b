"""The default final order (``learned``): every passage scored on its own (two passages share a
score only when all their signals are equal), the shipped weights checked against their card,
the linked order with one notice when they are missing or damaged, and ``kgp train order``
reproducing its files byte for byte."""

from __future__ import annotations

import itertools
import json
import logging
import shutil
from pathlib import Path

import kgp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kgp.agents.context import RetrievalConfig
from kgp.agents.learned import FEATURES, LearnedOrder, features, shipped_order
from kgp.agents.orderings import Evidence, linked
from kgp.agents.retriever import Retriever
from kgp.agents.traversal import Traversal, Visit
from kgp.errors import ModelMissingError
from kgp.ingest.embedding import Encoder
from kgp.model import ORDER_FOLDER, ORDER_MODEL, shipped_model
from kgp.training.order import Example, fit

from tests.test_cli import kgp as run_kgp
from tests.test_gnn import HOTPOT_ROWS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QUESTION = "Which station recorded the most rain, and what does it serve?"


def walk_of(ids: list[str], hops: list[int]) -> Traversal:
    pairs = enumerate(zip(ids, hops, strict=True))
    return Traversal({pid: Visit(pid, hop, 0.0, (pid,), n) for n, (pid, hop) in pairs})


@st.composite
def evidence(draw: st.DrawFn) -> Evidence:
    n = draw(st.integers(min_value=2, max_value=12))
    ids = [f"d{i % 4}#p{i}" for i in range(n)]
    # cosines as an encoder gives them: float32, four decimals apart at least
    cosines = draw(st.lists(st.integers(-10_000, 10_000), min_size=n, max_size=n))
    cosines = [c / 10_000 for c in cosines]
    hops = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n))
    vocabulary = ["station", "rain", "river", "farms", "serves", "most", "Cedar", "Hollow"]
    text = st.lists(st.sampled_from(vocabulary), max_size=6).map(" ".join)
    return Evidence(
        walk_of(ids, hops),
        dict(zip(ids, cosines, strict=True)),
        frozenset((ids[a], ids[b]) for a, b in pairs if a != b),
        question=" ".join(draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=5))),
        texts={pid: draw(text) for pid in ids},
        titles={pid: draw(text) for pid in ids},
    )


@settings(max_examples=200, deadline=None)
@given(evidence())
def test_two_passages_share_a_score_only_when_all_their_signals_are_equal(
    found: Evidence,
) -> None:
    ranked = shipped_order()(found)
    ids, matrix = features(found)
    row = {pid: tuple(matrix[i]) for i, pid in enumerate(ids)}
    assert sorted(pid for pid, _ in ranked) == sorted(found.walk.ids())
    scores = [score for _, score in ranked]
    assert scores == sorted(scores, reverse=True) and all(0.0 < s < 1.0 for s in scores)
    for (a, first), (b, second) in itertools.pairwise(ranked):
        if first == second:
            assert row[a] == row[b], f"{a} and {b} tie with different signals"


def test_the_best_pair_no_longer_ties_by_construction() -> None:
    """Under ``linked`` both passages of the best pair share its score; under ``learned`` the
    one more similar to the question, and holding more of its terms, comes first."""
    ids = ["a#1", "b#1", "c#1"]
    found = Evidence(
        walk_of(ids, [0, 0, 1]),
        {"a#1": 0.62, "b#1": 0.48, "c#1": 0.30},
        frozenset({("a#1", "b#1")}),
        question="Which station recorded the most rain?",
        texts={"a#1": "Cedar Hollow recorded the most rain.", "b#1": "Cedar Hollow serves farms."},
        titles={"a#1": "Rainfall", "b#1": "Stations", "c#1": "Maintenance"},
    )
    paired = linked(found)
    assert paired[0][1] == paired[1][1], "the linked order's tie this order removes"
    ranked = shipped_order()(found)
    assert ranked[0][0] == "a#1" and ranked[0][1] > ranked[1][1] > ranked[2][1]


def test_the_readme_question_puts_its_answer_first(kg: kgp.KnowledgeGraph) -> None:
    passages = kg.retrieve(QUESTION, k=10).passages
    assert passages[0].text.startswith("Cedar Hollow recorded the most rain")
    assert "Cedar Hollow station serves the northern farms." in [p.text for p in passages]
    assert len({p.score for p in passages}) == len(passages)


def test_the_shipped_weights_are_the_card_s() -> None:
    model = shipped_model(verify=True, name=ORDER_MODEL)
    card = json.loads((model.path / "training.json").read_text())
    order = LearnedOrder.from_json((model.path / "order.json").read_text())
    assert order == shipped_order() and card["kind"] == "order"
    assert "train/" in " ".join(card["data"]) and "dev/" not in " ".join(card["data"])
    assert card["command"].startswith("kgp ") and " train order " in card["command"]
    assert LearnedOrder.from_json(order.to_json()) == order


def fresh_retriever(kg: kgp.KnowledgeGraph) -> Retriever:
    """A retriever made now (the graph's own are kept per configuration, made earlier)."""
    return Retriever(kg.store, kg.encoder.encode, RetrievalConfig.from_settings(kg.settings))


def damaged_order(tmp_path: Path) -> Path:
    copy = tmp_path / ORDER_MODEL
    shutil.copytree(ORDER_FOLDER, copy)
    weights = copy / "order.json"
    weights.write_text(weights.read_text().replace('"bias": ', '"bias": 1'))
    return copy


def test_missing_or_damaged_weights_fall_back_to_the_linked_order_with_one_line(
    tmp_path: Path,
    kg: kgp.KnowledgeGraph,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    damaged = damaged_order(tmp_path)
    with pytest.raises(ModelMissingError, match=r"has a damaged order\.json") as caught:
        shipped_order(damaged)
    message = str(caught.value)
    assert "\n" not in message and str(damaged) in message and "KGP_ORDER=linked" in message
    with pytest.raises(ModelMissingError, match="is missing"):
        shipped_order(tmp_path / "nowhere")

    monkeypatch.setattr("kgp.model.ORDER_FOLDER", damaged)
    shipped_order.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="kgp"):
            first, second = (fresh_retriever(kg).retrieve(QUESTION, k=5) for _ in range(2))
        said = [r.getMessage() for r in caplog.records if "kgp-order" in r.getMessage()]
        assert len(said) == 1, "logged once per process"
        for result in (first, second):
            assert any("kgp-order" in n and "linked order" in n for n in result.notices)
        expected = kg.retriever(order="linked").retrieve(QUESTION, k=5)
        assert [p.id for p in first.passages] == [p.id for p in expected.passages]
        assert [p.score for p in first.passages] == [p.score for p in expected.passages]
        from kgp.cli import app
        from typer.testing import CliRunner

        doctor = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kb"), "doctor"])
        assert doctor.exit_code == 1 and "order model" in doctor.output
        assert "damaged order.json" in doctor.output
    finally:
        monkeypatch.undo()
        shipped_order.cache_clear()
    assert not fresh_retriever(kg).order_notice, "the installed weights are used again"


def test_fit_is_deterministic_and_learns_the_signal() -> None:
    rng = np.random.default_rng(7)
    examples = []
    for _ in range(40):
        matrix = rng.normal(size=(10, len(FEATURES)))
        gold = matrix[:, 0] + 0.3 * rng.normal(size=10) > 1.0
        ids = [f"p{i}" for i in range(10)]
        units = [[pid] for pid, g in zip(ids, gold, strict=True) if g]
        examples.append(Example("set", ids, matrix, units))
    order = fit(examples)
    assert order.to_json() == fit(examples).to_json()
    assert order.weights[0] == max(order.weights), "the signal that decides gold weighs most"


@pytest.mark.slow
def test_train_order_writes_the_same_files_twice(tmp_path: Path, encoder: Encoder) -> None:
    data = tmp_path / "tiny_train.json"
    data.write_text(json.dumps(HOTPOT_ROWS))
    out = tmp_path / "order"
    command = ["--data-dir", str(tmp_path / "kb"), "train", "order", str(data), "-o", str(out)]
    written = []
    for flags in ([], ["--overwrite"]):
        done = run_kgp(*command, "--k", "6", *flags)
        assert done.returncode == 0, done.stderr
        assert f"saved {out} (2 questions" in done.stdout
        written.append({f.name: f.read_bytes() for f in sorted(out.iterdir())})
    assert sorted(written[0]) == ["README.md", "order.json", "training.json"]
    first, second = (
        {name: data.replace(b" --overwrite", b"") for name, data in files.items()}
        for files in written
    )
    assert first == second, "the same data give the same files"
    model = shipped_model(verify=True, folder=out, name=ORDER_MODEL)
    assert list(model.files) == ["order.json"]
    LearnedOrder.from_json((out / "order.json").read_text())
    again = run_kgp(*command)
    assert again.returncode == 1 and "exists; choose another --output" in again.stderr


@pytest.mark.slow
def test_train_order_asks_questions_of_its_own_format_of_a_folder(tmp_path: Path) -> None:
    hotpot = tmp_path / "tiny_train.json"
    hotpot.write_text(json.dumps(HOTPOT_ROWS))
    own = EXAMPLES / "questions.jsonl"
    out = tmp_path / "order"
    command = ["--data-dir", str(tmp_path / "kb"), "train", "order", str(hotpot), str(own)]
    refused = run_kgp(*command, "-o", str(out))
    assert refused.returncode == 1 and "need --documents FOLDER" in refused.stderr
    assert not out.exists()
    done = run_kgp(*command, "-o", str(out), "--k", "6", "--documents", str(EXAMPLES / "documents"))
    assert done.returncode == 0, done.stderr
    own_count = len(own.read_text().splitlines())
    assert f"saved {out} ({2 + own_count} questions" in done.stdout
    card = json.loads((out / "training.json").read_text())
    assert card["data"][-1] == str(EXAMPLES / "documents")
    assert set(card["train_figures"]) == {"tiny_train", "questions"}
    LearnedOrder.from_json((out / "order.json").read_text())

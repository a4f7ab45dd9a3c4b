"""`kgp train`: hop order, training pairs with hard negatives, the MDR bi-encoder and the T5
generator fine-tuned end to end (the real MiniLM; a tiny T5 built from a config), model cards,
determinism, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import kgp
import pytest
from kgp.agents.generators import T5Generator
from kgp.errors import ConfigurationError, DocumentError, TrainingError
from kgp.ingest.embedding import Encoder
from kgp.qa import load_qa, parse_item
from kgp.ranking import Bm25
from kgp.training import (
    TrainConfig,
    build_pairs,
    load_training_data,
    train_mdr,
    train_t5,
)
from kgp.training.loop import _out_of_memory

from tests.test_cli import kgp as run_kgp
from tests.tiny_models import build_tiny_t5

FACTS = [
    ("Ada Park", "Ada Park founded the Acme Pump Company in 1921 in Lowell."),
    ("Acme Pump Company", "The Acme Pump Company makes the Foo river pump."),
    ("Lowell", "Lowell is a mill town on the Merrimack river."),
    ("Bea Stone", "Bea Stone painted harbours and lighthouses in Maine."),
    ("Maine", "Maine is the northeasternmost state of the United States."),
    ("Cal Reed", "Cal Reed was born in 1950 in Maine."),
    ("Dee Fox", "Dee Fox was born in 1948 in Lowell."),
]


def hotpot(qid: str, question: str, gold: list[str], kind: str = "bridge") -> dict[str, object]:
    return {
        "_id": qid,
        "type": kind,
        "question": question,
        "answer": "x",
        "supporting_facts": [[title, 0] for title in gold],
        "context": [[title, [text]] for title, text in FACTS],
    }


ROWS = [
    # supporting facts given second-hop first: the bridge order puts the passage naming the
    # other's title first
    hotpot(
        "b1",
        "Who founded the company that makes the Foo river pump?",
        ["Ada Park", "Acme Pump Company"],
    ),
    hotpot("c1", "Who was born first, Cal Reed or Dee Fox?", ["Cal Reed", "Dee Fox"], "comparison"),
    hotpot("b2", "In which state did Bea Stone paint lighthouses?", ["Bea Stone", "Maine"]),
    hotpot(
        "b3",
        "Which river flows through the town where Ada Park founded Acme?",
        ["Ada Park", "Lowell"],
    ),
    hotpot("n1", "A question without gold", []),
]


def data_file(tmp_path: Path, rows: list[dict[str, object]] = ROWS) -> Path:
    path = tmp_path / "train.json"
    path.write_text(json.dumps(rows))
    return path


def test_hop_order_of_each_format() -> None:
    reversed_facts = {**ROWS[0], "supporting_facts": [["Acme Pump Company", 0], ["Ada Park", 0]]}
    bridge = parse_item(reversed_facts, "b1")
    # Ada Park's passage names "Acme Pump Company", not the other way round: it comes first
    assert [p[0] for p in bridge.gold] == ["Ada Park", "Acme Pump Company"]
    wiki = {
        "_id": "w1",
        "type": "compositional",
        "question": "Where did the director of The Egg (film) die?",
        "answer": "Faro",
        "supporting_facts": [["Ingmar Bergman", 0], ["The Egg (film)", 0]],
        "evidences": [
            ["The Egg", "director", "Ingmar Bergman"],
            ["Ingmar Bergman", "died", "Faro"],
        ],
        "context": [
            ["Ingmar Bergman", ["Bergman died in Faro."]],
            ["The Egg (film)", ["By Bergman."]],
        ],
    }
    assert [p[0] for p in parse_item(wiki, "w1").gold] == ["The Egg (film)", "Ingmar Bergman"]


def test_pairs_follow_the_hops_with_hard_negatives(tmp_path: Path) -> None:
    items = load_qa(data_file(tmp_path))
    pairs = build_pairs(items, negatives=2)
    assert pairs.questions == 4 and pairs.skipped == 1
    assert len(pairs.pairs) == 2 + 4 + 2 + 2, "comparison questions are learnt both ways"
    first, second = pairs.pairs[:2]
    assert first.evidence == () and first.positive.startswith("Ada Park\n")
    assert second.evidence == (first.positive,) and second.positive.startswith("Acme Pump")
    assert second.mdr_query().startswith("Who founded the company") and first.positive in (
        second.mdr_query()
    )
    assert second.t5_input().startswith("What evidence do we need to answer the question")
    gold = {first.positive, second.positive}
    for pair in pairs.pairs[:2]:
        assert len(pair.negatives) == 2 and not gold & set(pair.negatives)


def musique_paragraph(idx: int, fact: int, supporting: bool) -> dict[str, object]:
    title, text = FACTS[fact]
    return {"idx": idx, "title": title, "paragraph_text": text, "is_supporting": supporting}


MUSIQUE = {
    "id": "m1",
    "question": "Which river flows through the town where Acme was founded?",
    "answer": "Merrimack",
    "paragraphs": [
        musique_paragraph(0, 0, True),
        musique_paragraph(1, 2, True),
        musique_paragraph(2, 4, False),
    ],
    "question_decomposition": [
        {"question": "Where was Acme founded?", "answer": "Lowell", "paragraph_support_idx": 0},
        {"question": "What river is in #1?", "answer": "Merrimack", "paragraph_support_idx": 1},
    ],
}


def test_question_pairs_ask_the_question_alone_of_every_gold_passage(tmp_path: Path) -> None:
    items = load_qa(data_file(tmp_path, [*ROWS, MUSIQUE]))
    pairs = build_pairs(items, negatives=2, kind="questions")
    assert all(pair.evidence == () for pair in pairs.pairs), "no path: what the encoder is asked"
    founder = [p for p in pairs.pairs if p.question.startswith("Who founded the company")]
    assert [p.positive.split("\n")[0] for p in founder] == ["Ada Park", "Acme Pump Company"]
    subs = [p for p in pairs.pairs if p.source == MUSIQUE["question"]]
    assert [p.question for p in subs] == [
        MUSIQUE["question"],
        MUSIQUE["question"],
        "Where was Acme founded?",
        "What river is in Lowell?",
    ], "the question for each gold passage, then MuSiQue's sub-questions with #1 filled in"
    assert {p.group for p in subs} == {MUSIQUE["question"]}, "held out with their question"
    for pair in pairs.pairs:
        gold = {p.positive for p in pairs.pairs if p.group == pair.group}
        assert pair.negatives and not gold & set(pair.negatives)
    with pytest.raises(ConfigurationError, match="unknown pair kind 'both'"):
        build_pairs(items, kind="both")


def test_held_out_questions_take_their_sub_questions_along(tmp_path: Path) -> None:
    from kgp.training.session import split_held_out

    items = load_qa(data_file(tmp_path, [*ROWS, MUSIQUE]))
    pairs = build_pairs(items, kind="questions").pairs
    for seed in range(6):
        train, held = split_held_out(pairs, 0.5, seed)
        assert not {p.group for p in train} & {p.group for p in held}
        assert len(train) + len(held) == len(pairs)


def test_bm25_ranks_rare_terms_first() -> None:
    index = Bm25(["the pump the pump", "Thelma pump", "a river town"])
    assert index.top("Thelma pump", 2) == [1, 0]
    assert index.top("nothing matches", 3) == []


def test_training_data_errors(tmp_path: Path) -> None:
    user = tmp_path / "mine.jsonl"
    user.write_text(json.dumps({"question": "q", "supporting": ["t"]}) + "\n")
    with pytest.raises(ConfigurationError, match="kgp's JSONL refers into a graph"):
        load_training_data([user])
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps([{"question": "q", "facts": []}]))
    with pytest.raises(DocumentError, match="not a MuSiQue, HotpotQA, 2Wiki or kgp's JSONL"):
        load_training_data([odd])
    with pytest.raises(TrainingError, match="no training pairs"):
        load_training_data([data_file(tmp_path, ROWS[4:])])


def test_out_of_memory_suggests_a_smaller_batch() -> None:
    error = _out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2 GiB"), 32)
    assert error is not None and "try --batch-size 16" in str(error)
    assert _out_of_memory(RuntimeError("shape mismatch"), 32) is None


QUICK = TrainConfig(epochs=1, batch_size=4, max_length=48, seed=3)


def test_train_mdr_end_to_end(tmp_path: Path, encoder: Encoder) -> None:
    pairs = load_training_data([data_file(tmp_path)], negatives=2)
    out = tmp_path / "mdr"
    lines: list[str] = []
    report = train_mdr(
        pairs, "all-MiniLM-L6-v2", out, config=QUICK, held_out=0.25, progress=lines.append
    )
    assert report.device == "cpu" and len(report.losses) == 1 and report.pairs > 0
    assert lines and lines[-1].startswith("mdr epoch 1/1 step ")
    assert (out / "modules.json").is_file() and not out.with_name("mdr.partial").exists()
    card = json.loads((out / "training.json").read_text())
    assert card["config"]["seed"] == 3 and {"hit@1", "base_hit@1"} <= set(card["held_out"])
    assert "## Hyper-parameters" in (out / "README.md").read_text()
    again = tmp_path / "mdr-again"
    train_mdr(
        pairs, "all-MiniLM-L6-v2", again, config=QUICK, held_out=0.25, progress=lambda _: None
    )
    a = Encoder(model=str(out)).encode(["Who founded Acme?"])
    b = Encoder(model=str(again)).encode(["Who founded Acme?"])
    assert (a == b).all(), "the same seed gives the same model"
    assert (a != encoder.encode(["Who founded Acme?"])).any(), "the weights moved"
    with pytest.raises(
        ConfigurationError, match="exists; choose another --output or pass --overwrite"
    ):
        train_mdr(pairs, "all-MiniLM-L6-v2", out, config=QUICK)


def test_train_encoder_in_half_precision_with_a_card_that_reproduces_it(tmp_path: Path) -> None:
    from kgp.training.report import file_hashes
    from safetensors import safe_open

    path = data_file(tmp_path, [*ROWS, MUSIQUE])
    pairs = load_training_data([path], negatives=2, kind="questions")
    config = TrainConfig(epochs=1, batch_size=4, max_length=48, seed=3, threads=1)
    runs = []
    for name in ("enc", "enc-again"):
        out = tmp_path / name
        report = train_mdr(
            pairs,
            "all-MiniLM-L6-v2",
            out,
            config=config,
            held_out=0.25,
            progress=lambda _: None,
            kind="encoder",
            half=True,
            command=f"kgp train encoder {path} --output {out} --half",
            data=[str(path)],
        )
        runs.append((out, report))
    (out, report), (again, _) = runs
    with safe_open(str(out / "model.safetensors"), "pt") as weights:
        dtypes = {str(weights.get_tensor(key).dtype) for key in weights.keys()}  # noqa: SIM118
    assert dtypes == {"torch.float16"}, "shipped in half precision"
    onward = tmp_path / "onward"  # trained on from the half-precision model, saved whole
    train_mdr(pairs, str(out), onward, config=config, progress=lambda _: None, kind="encoder")
    with safe_open(str(onward / "model.safetensors"), "pt") as weights:
        dtypes = {str(weights.get_tensor(key).dtype) for key in weights.keys()}  # noqa: SIM118
    assert dtypes == {"torch.float32"}, "trained in float32 whatever the base was saved in"
    card = json.loads((out / "training.json").read_text())
    assert card["kind"] == "encoder" and card["config"]["threads"] == 1
    assert card["files"] == file_hashes(out) and "model.safetensors" in card["files"]
    assert json.loads((again / "training.json").read_text())["files"] == card["files"], (
        "the same command writes the same weights, bit for bit"
    )
    text = (out / "README.md").read_text()
    assert "# kgp encoder model" in text and report.command in text
    assert f"`{path}`: HotpotQA questions (licence CC BY-SA 4.0)" in text
    assert "licence Apache-2.0" in text, "the base model's licence"
    import numpy as np
    import torch
    from kgp.ingest.embedding import TransformerPipeline
    from sentence_transformers import SentenceTransformer

    encoder = Encoder(model=str(out)).load()
    assert isinstance(encoder._model, TransformerPipeline), "sentence-transformers 6's layout"
    texts = ["Who founded the Acme Pump Company, and where?", FACTS[1][1]]
    reference = SentenceTransformer(
        str(out), device="cpu", local_files_only=True, model_kwargs={"dtype": torch.float32}
    )
    theirs = reference.encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(encoder.encode(texts), theirs, atol=1e-6)


def test_training_on_a_gpu_gives_the_same_weights_twice(tmp_path: Path) -> None:
    import torch
    from kgp.model import SHIPPED_MODEL

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: training on a CPU is repeated in the half-precision test")
    pairs = load_training_data([data_file(tmp_path, [*ROWS, MUSIQUE])], kind="questions")
    before = torch.are_deterministic_algorithms_enabled()
    cards = []
    for name in ("one", "two"):
        train_mdr(pairs, SHIPPED_MODEL, tmp_path / name, config=QUICK, device="cuda")
        cards.append(json.loads((tmp_path / name / "training.json").read_text()))
    assert cards[0]["files"] == cards[1]["files"], "the same weights, bit for bit"
    assert torch.are_deterministic_algorithms_enabled() == before, "put back after training"


def test_trained_mdr_drives_the_scorer_and_the_graph(tmp_path: Path) -> None:
    pairs = load_training_data([data_file(tmp_path)])
    model = str(tmp_path / "mdr")
    train_mdr(pairs, "all-MiniLM-L6-v2", Path(model), config=QUICK, progress=lambda _: None)
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in FACTS]))
    # the fine-tuned model as the graph's encoder (a KNN-MDR graph) and as the mdr scorer
    with kgp.open(data_dir=tmp_path / "kb", encoder=model, mdr_model=model) as kg:
        kg.sync_corpus(corpus, prefix="f")
        assert kg.stats().relationships["SIMILAR"] > 0
        result = kg.retrieve(
            "Who founded the company that makes the Foo river pump?", 4, scorer="mdr"
        )
        assert len(result.passages) == 4 and result.passages[0].id.startswith("f/")


def test_train_t5_on_a_tiny_model(tmp_path: Path) -> None:
    pairs = load_training_data([data_file(tmp_path)])
    words = [text for p in pairs.pairs for text in (p.t5_input(), p.positive)]
    base = build_tiny_t5(tmp_path / "tiny-t5", words)
    out = tmp_path / "t5"
    report = train_t5(
        pairs,
        str(base),
        out,
        config=TrainConfig(epochs=2, batch_size=4, max_length=64, learning_rate=1e-3),
        progress=lambda _: None,
    )
    assert len(report.losses) == 2 and report.losses[1] < report.losses[0], "it learns"
    generator = T5Generator(out, device="cpu", max_new_tokens=8)
    written = generator.next_evidence("Who founded Acme?", [["Acme makes pumps."], []])
    assert len(written) == 2 and all(isinstance(w, str) for w in written)
    with pytest.raises(ConfigurationError, match="t5 base: no model at"):
        train_t5(pairs, str(tmp_path / "none"), tmp_path / "t5b")


@pytest.mark.slow
def test_cli_train(tmp_path: Path) -> None:
    path = data_file(tmp_path)
    out = tmp_path / "cli-mdr"
    args = ["train", "mdr", str(path), "--output", str(out), "--epochs", "1", "--batch-size", "4"]
    done = run_kgp(*args, "--max-length", "48")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"saved {out} (") and "pairs from 4 questions (1 without" in (
        done.stderr
    )
    again = run_kgp(*args)
    assert again.returncode == 1 and "exists; choose another --output" in again.stderr
    bad = run_kgp("train", "mdr", str(tmp_path / "missing.json"), "--output", str(tmp_path / "x"))
    assert bad.returncode == 1 and "cannot read the QA file" in bad.stderr

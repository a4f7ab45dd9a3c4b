"""QA sets in their native formats (MuSiQue, HotpotQA, 2Wiki) and the shared corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kgp.errors import DocumentError
from kgp.qa import load_qa, shared_corpus

SHARED_QA = Path(__file__).resolve().parents[3] / "shared" / "data" / "qa"

MUSIQUE = {
    "id": "2hop__1",
    "question": "Who founded the company that makes the Foo?",
    "answer": "Ada",
    "paragraphs": [
        {"idx": 0, "title": "Bar", "paragraph_text": "Unrelated.", "is_supporting": False},
        {"idx": 1, "title": "Ada", "paragraph_text": "Ada founded Acme.", "is_supporting": True},
        {"idx": 2, "title": "Foo", "paragraph_text": "Acme makes the Foo.", "is_supporting": True},
    ],
    "question_decomposition": [
        {"question": "who makes the Foo", "answer": "Acme", "paragraph_support_idx": 2},
        {"question": "who founded #1", "answer": "Ada", "paragraph_support_idx": 1},
    ],
}
HOTPOT = {
    "_id": "h1",
    "question": "Which is older, A or B?",
    "answer": "A",
    "supporting_facts": [["B", 0], ["A", 1]],
    "context": [["A", ["A is old.", " Very old."]], ["B", ["B is new."]], ["C", ["C."]]],
}


def write(tmp_path: Path, rows: object, name: str = "qa.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows))
    return path


def test_musique_gold_in_hop_order(tmp_path: Path) -> None:
    (item,) = load_qa(write(tmp_path, [MUSIQUE]))
    assert item.gold == (("Foo", "Acme makes the Foo."), ("Ada", "Ada founded Acme."))
    assert len(item.paragraphs) == 3 and item.answer == "Ada"


def test_hotpot_sentences_and_titles(tmp_path: Path) -> None:
    (item,) = load_qa(write(tmp_path, [HOTPOT]))
    assert item.paragraphs[0] == ("A", "A is old. Very old.")
    assert item.gold == (("B", "B is new."), ("A", "A is old. Very old."))


def test_json_lines_and_shared_corpus_ids(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps(HOTPOT) + "\n" + json.dumps({**HOTPOT, "_id": "h2"}) + "\n")
    items = load_qa(path)
    corpus = shared_corpus(items, prefix="hp")
    assert len(corpus.entries) == 3, "paragraphs are deduplicated by title and text"
    assert corpus.ids[("B", "B is new.")] == "hp/1#passage=0"


def test_kgp_jsonl_format(tmp_path: Path) -> None:
    rows = [
        {
            "id": "u1",
            "question": "Who manages Alder Creek?",
            "answer": ["Mira Kovac", "Kovac"],
            "supporting": [
                "The station   manager is Mira Kovac.",
                {"document": "stations.pdf", "page": 3},
                {"document": "reports/stations.pdf", "table": 2},
                {"document": "notes.md"},
            ],
        },
        {"question": "What is the rainfall?", "supporting": [{"text": "Rain fell."}]},
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    first, second = load_qa(path)
    assert first.id == "u1" and first.answers == ("Mira Kovac", "Kovac") and first.has_gold
    assert [s.describe() for s in first.supports] == [
        "text 'The station manager is Mira Kovac.'",
        "stations.pdf page 3",
        "reports/stations.pdf table 2",
        "notes.md",
    ]
    assert second.answer == "" and second.supports[0].text == "Rain fell."
    assert not first.paragraphs and not first.gold


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"question": "", "supporting": []}, "question 2: 'question' must be a non-empty string"),
        ({"question": "q", "supporting": "x"}, "'supporting' must be a list"),
        ({"question": "q", "supporting": [3]}, "supporting 0: give a passage's text or"),
        ({"question": "q", "supporting": [{"document": "a.pdf", "page": 0}]}, "a number from 1"),
        ({"question": "q", "supporting": [{"document": "a", "page": 1, "table": 1}]}, "one of"),
        ({"question": "q", "answer": 4, "supporting": []}, "'answer' must be a string or a list"),
    ],
)
def test_bad_kgp_jsonl_rows(tmp_path: Path, row: dict[str, object], message: str) -> None:
    path = tmp_path / "mine.jsonl"
    good = {"question": "fine?", "supporting": ["text"]}
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(DocumentError, match=message):
        load_qa(path)


def test_bad_json_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text('{"question": "q", "supporting": ["t"]}\n{oops\n')
    with pytest.raises(DocumentError, match="not JSON or JSON lines \\(line 2: "):
        load_qa(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON or JSON lines"),
        ("[]", "expected a non-empty list of questions"),
        ('[{"question": "q"}]', "question 1: not a MuSiQue, HotpotQA, 2Wiki or kgp's JSONL"),
    ],
)
def test_bad_qa_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DocumentError, match=message):
        load_qa(path)
    with pytest.raises(DocumentError, match="cannot read the QA file"):
        load_qa(tmp_path / "missing.json")


@pytest.mark.skipif(not SHARED_QA.is_dir(), reason="../shared/data/qa is not beside the repo")
@pytest.mark.parametrize(
    ("name", "questions", "paragraphs"),
    [
        ("dev/musique_dev.json", 100, 20),
        ("dev/hotpotqa_dev.json", 100, 10),
        ("dev/2wiki_dev.json", 82, 10),
        ("train/2wiki_train.json", 346, None),
    ],
)
def test_shared_sets_load(name: str, questions: int, paragraphs: int | None) -> None:
    items = load_qa(SHARED_QA / name)
    assert len(items) == questions
    assert all(2 <= len(item.gold) <= 4 for item in items)
    if paragraphs is not None:
        assert all(len(item.paragraphs) == paragraphs for item in items)
        assert all(set(item.gold) <= set(item.paragraphs) for item in items)

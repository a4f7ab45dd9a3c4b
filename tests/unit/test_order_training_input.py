"""What ``kgp train order`` refuses before it builds a graph: a file mixing gold paragraphs with
supporting references, questions with references but no ``--documents``, ``--documents`` with
nothing to ask of it, and a ``--documents`` that is not a folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kgp.errors import ConfigurationError
from kgp.training.order import train_order
from kgp.training.questions import own_format

HOTPOT = {
    "_id": "h1",
    "question": "Which river runs past Stonebridge?",
    "answer": "the Ostra",
    "supporting_facts": [["Stonebridge", 0]],
    "context": [["Stonebridge", ["Stonebridge lies on the Ostra."]]],
}
OWN = {"question": "Who manages the station?", "supporting": ["The station manager is Mira Kovac."]}


def written(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def no_graph(**_: Any) -> Any:
    raise AssertionError("refused before any graph is opened")


def train(tmp_path: Path, paths: list[Path], documents: Path | None) -> None:
    train_order(
        paths, no_graph, tmp_path / "kb", tmp_path / "out", settings=None, documents=documents
    )


def test_each_file_is_one_kind_of_question(tmp_path: Path) -> None:
    native = written(tmp_path / "hotpot.jsonl", HOTPOT)
    own = written(tmp_path / "own.jsonl", OWN)
    assert own_format([native, own]) == ([native], [own])
    mixed = written(tmp_path / "mixed.jsonl", HOTPOT, OWN)
    with pytest.raises(ConfigurationError, match=r"mixed\.jsonl: some questions have supporting"):
        own_format([mixed])


def test_references_need_the_documents_and_the_documents_need_references(tmp_path: Path) -> None:
    own = written(tmp_path / "own.jsonl", OWN)
    with pytest.raises(ConfigurationError, match="need --documents FOLDER"):
        train(tmp_path, [own], None)
    native = written(tmp_path / "hotpot.jsonl", HOTPOT)
    with pytest.raises(ConfigurationError, match="no question file in kgp's own format"):
        train(tmp_path, [native], tmp_path)
    with pytest.raises(ConfigurationError, match="must be a folder of documents"):
        train(tmp_path, [own], own)
    assert not (tmp_path / "out").exists()

"""Bad input is bounded and said: no unbounded passage, a question cut to the limit says so, and
a budget of no passages is refused with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kgp
import pytest
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError
from kgp.ingest.builder import split
from kgp.ingest.embedding import Encoder
from kgp.settings import PassageMode, load_settings


def test_no_passage_is_longer_than_the_cap() -> None:
    settings = load_settings()
    endless = " ".join(f"word{i}" for i in range(10_000))  # one "sentence", 88,890 characters
    pieces = split(endless, settings)
    assert len(pieces) > 300 and max(map(len, pieces)) <= settings.window_chars
    assert " ".join(pieces).split()[-1] == "word9999", "nothing is lost"
    normal = "A short sentence here. " * 3
    assert split(normal, settings) == [normal.strip()]
    whole = settings.model_copy(update={"passage_mode": PassageMode.WHOLE})
    paragraph = "x " * 3_500  # 7,000 characters: a long paragraph stays one passage
    assert split(paragraph, whole) == [paragraph.strip()]
    assert len(split(paragraph * 2, whole)) > 1


def test_a_line_without_punctuation_becomes_bounded_passages(
    tmp_path: Path, encoder: Encoder
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "dump.txt").write_text(" ".join(f"token{i}" for i in range(3_000)))  # 26 KB
    with kgp.open(
        data_dir=tmp_path / "kb", loaded_encoder=encoder, max_passage_chars=2000, groups="*"
    ) as kg:
        kg.sync(folder)
        texts = [n["props"]["text"] for n in kg.store.upkeep.dump()[0] if n["label"] == "Passage"]
    assert len(texts) > 100 and max(map(len, texts)) <= 250


def test_a_question_over_the_limit_is_cut_and_says_so(kg: KnowledgeGraph) -> None:
    question = "Which station recorded the most rain? " + "really " * 1_000
    result = kg.retrieve(question, 3)
    assert len(result.question) == 4_000
    assert result.notices == [
        f"the question has {len(question.strip()):,} characters; only its first 4,000 were used"
    ]
    assert kg.retrieve("Which station recorded the most rain?", 3).notices == []


def test_a_budget_of_no_passages_is_refused(kg: KnowledgeGraph, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="k must be at least 1, not 0"):
        kg.retrieve("Which station recorded the most rain?", 0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    for command in ("retrieve", "ask"):
        done = subprocess.run(
            [sys.executable, "-m", "kgp", "--data-dir", str(tmp_path), command, "q?", "--k", "0"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 1
        assert done.stderr == "kgp: error: --k 0: ask for 1 passage or more\n"

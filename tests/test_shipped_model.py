"""kgp's shipped model (kgp-traversal): installed with the package, its files as its card
records them, the encoder of every new graph while an existing graph keeps its own, and a
missing or damaged copy refused in one line that says what to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import kgp
import pytest
from kgp.errors import ConfigurationError, ModelMissingError
from kgp.model import FOLDER, SHIPPED_MODEL, shipped_model
from kgp.stores import FalkorStore
from kgp.stores.tracer import TraceLog

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTION = "Which station recorded the most rain, and what does it serve?"


def test_the_installed_files_are_the_ones_the_card_records() -> None:
    from safetensors import safe_open

    model = shipped_model(verify=True)
    assert model.path == FOLDER and "model.safetensors" in model.files
    assert 40 < model.megabytes < 50, "MiniLM-L6 in half precision"
    with safe_open(str(FOLDER / "model.safetensors"), "pt") as weights:
        assert {str(weights.get_tensor(k).dtype) for k in weights.keys()} == {"torch.float16"}  # noqa: SIM118
    card = (FOLDER / "README.md").read_text()
    for needed in (
        "all-MiniLM-L6-v2",
        "MuSiQue questions (licence CC BY 4.0)",
        "HotpotQA questions (licence CC BY-SA 4.0)",
        "2WikiMultihopQA questions (licence Apache-2.0)",
        "kgp train encoder ../shared/data/qa/train/musique_train.json",
        "--half",
        "held out",
    ):
        assert needed in card
    training = json.loads((FOLDER / "training.json").read_text())
    assert training["kind"] == "encoder" and training["command"] in card
    assert all(path.startswith("../shared/data/qa/train/") for path in training["data"]), (
        "trained on train/ only, never dev/"
    )


def test_a_new_graph_is_built_with_the_shipped_model(tmp_path: Path) -> None:
    with kgp.open(data_dir=tmp_path / "kb") as kg:
        kg.sync(EXAMPLES)
        assert kg.store.upkeep.graph_encoder() == SHIPPED_MODEL
        assert kg.encoder.model_name == SHIPPED_MODEL
        result = kg.retrieve(QUESTION, 5)
        assert "Cedar Hollow" in result.passages[0].text


def test_an_existing_graph_keeps_its_own_encoder(tmp_path: Path) -> None:
    data_dir = tmp_path / "kb"
    with kgp.open(data_dir=data_dir, encoder="all-MiniLM-L6-v2") as kg:
        kg.sync(EXAMPLES)
    with kgp.open(data_dir=data_dir) as kg:  # KGP_ENCODER unset: the graph's own
        assert kg.encoder.model_name == "all-MiniLM-L6-v2"
        assert kg.retrieve(QUESTION, 3).passages
        assert not kg.sync(EXAMPLES).wrote, "a second sync with the graph's encoder"
    with kgp.open(data_dir=data_dir, encoder=SHIPPED_MODEL) as kg:
        with pytest.raises(ConfigurationError, match="was built with encoder 'all-MiniLM-L6-v2'"):
            kg.retrieve(QUESTION, 3)
        with pytest.raises(ConfigurationError, match="was built with encoder"):
            kg.sync(EXAMPLES)


def test_vectors_of_another_dimension_are_refused_before_any_query(tmp_path: Path) -> None:
    log = TraceLog()
    store = FalkorStore(data_dir=tmp_path / "kb", tracer=log).open()
    store.ensure_schema(8)  # a graph whose vectors have 8 dimensions, its encoder unrecorded
    store.close()
    with kgp.open(data_dir=tmp_path / "kb", tracer=log) as kg:
        log.events.clear()
        with pytest.raises(ConfigurationError, match="holds 8-dimension vectors but encoder"):
            kg.retrieve(QUESTION, 3)
        searches = {
            "fulltext_term",
            "fulltext_term_all",
            "knn_candidates",
            "knn_candidates_all",
            "neighbours",
        }
        assert not searches & set(log.names())


def damaged_copy(tmp_path: Path) -> Path:
    copy = tmp_path / SHIPPED_MODEL
    shutil.copytree(FOLDER, copy)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-10] ^= 0xFF  # one flipped byte in the last tensor: it still loads, wrongly
    weights.write_bytes(bytes(data))
    return copy


def test_a_missing_or_damaged_model_is_one_line_naming_the_path_and_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = damaged_copy(tmp_path)
    with pytest.raises(ModelMissingError) as caught:
        shipped_model(verify=True, folder=damaged)
    message = str(caught.value)
    assert "\n" not in message and str(damaged) in message and "model.safetensors" in message
    assert "--scorer tfidf" in message and "reinstall kgp" in message
    with pytest.raises(ModelMissingError, match=r"is missing or has no readable training\.json"):
        shipped_model(folder=tmp_path / "nowhere")
    (damaged / "tokenizer.json").unlink()
    with pytest.raises(ModelMissingError, match=r"lacks tokenizer\.json"):
        shipped_model(folder=damaged)

    broken = damaged_copy(tmp_path / "again")
    monkeypatch.setattr("kgp.model.FOLDER", broken)
    with kgp.open(data_dir=tmp_path / "kb") as kg:
        with pytest.raises(ModelMissingError, match=r"has a damaged model\.safetensors"):
            kg.sync(EXAMPLES)
        assert kg.stats().labels == {}, "nothing written"

    from kgp.cli import app
    from typer.testing import CliRunner

    shown = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kb"), "sync", str(EXAMPLES)])
    assert shown.exit_code == 1 and "Traceback" not in shown.output
    last = shown.stderr.strip().splitlines()[-1]
    assert last.startswith("kgp: error: kgp's shipped model kgp-traversal at " + str(broken))
    assert "--scorer tfidf" in last
    doctor = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kb"), "doctor"])
    assert doctor.exit_code == 1 and "shipped model" in doctor.output
    assert "damaged model.safetensors" in doctor.output


def test_a_wheel_carries_every_file_of_the_model() -> None:
    """``pip install .`` (a wheel) installs what ``pip install -e .`` finds in the tree: the
    package data patterns cover every file the card records, and the card itself."""
    import fnmatch
    import tomllib

    pyproject = tomllib.loads((EXAMPLES.parents[1] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["kgp.model"]
    files = [*shipped_model().files, "README.md", "training.json"]
    for name in files:
        matched = [p for p in patterns if fnmatch.fnmatch(f"{SHIPPED_MODEL}/{name}", p)]
        assert any(p.count("/") == f"{SHIPPED_MODEL}/{name}".count("/") for p in matched), name

"""Settings: KGP_* variables, .env, kgp.toml, overrides, frozen, secrets never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from kgp.errors import ConfigurationError
from kgp.settings import Device, StoreKind, load_settings
from kgp.stores.falkordb.server import LOAD_TIMEOUT
from pydantic import ValidationError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("KGP_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_defaults() -> None:
    s = load_settings()
    assert s.store is StoreKind.EMBEDDED
    assert (s.budget, s.seeds, s.branching) == (30, 10, 3)
    assert s.device is Device.AUTO
    assert s.encoder is None, "unset: the graph's recorded encoder, else the shipped model"
    assert s.data_dir.is_absolute()
    assert s.load_timeout == LOAD_TIMEOUT, "one default for the setting and the store alone"


def test_sources_in_priority_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "kgp.toml").write_text('store = "neo4j"\nbudget = 12\nseeds = 4\nbranching = 2\n')
    (tmp_path / ".env").write_text("KGP_BUDGET=20\nKGP_SEEDS=5\n")
    monkeypatch.setenv("KGP_BUDGET", "25")
    s = load_settings(branching=7)
    assert s.store is StoreKind.NEO4J  # toml
    assert s.seeds == 5  # .env over toml
    assert s.budget == 25  # environment over .env
    assert s.branching == 7  # override over everything


def test_config_file_named_by_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    other = tmp_path / "conf" / "prod.toml"
    other.parent.mkdir()
    other.write_text('neo4j_database = "kb"\n')
    monkeypatch.setenv("KGP_CONFIG", str(other))
    assert load_settings().neo4j_database == "kb"


def test_frozen() -> None:
    s = load_settings()
    with pytest.raises(ValidationError):
        s.budget = 3  # type: ignore[misc]


def test_secrets_are_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGP_NEO4J_PASSWORD", "hunter2-secret")
    monkeypatch.setenv("KGP_LLM_API_KEY", "sk-very-secret")
    s = load_settings()
    assert s.neo4j_password.get_secret_value() == "hunter2-secret"
    for text in (repr(s), str(s), str(s.redacted()), s.model_dump_json()):
        assert "hunter2" not in text and "sk-very" not in text
    assert s.redacted()["neo4j_password"] == "***"


def test_invalid_value_is_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGP_BUDGET", "lots")
    with pytest.raises(ConfigurationError, match=r"KGP_BUDGET.*'lots'") as raised:
        load_settings()
    assert "\n" not in str(raised.value)
    with pytest.raises(ConfigurationError, match="KGP_DEVICE"):
        load_settings(device="tpu")


def test_broken_toml_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "kgp.toml").write_text("store = \n")
    with pytest.raises(ConfigurationError, match=r"kgp\.toml: cannot read kgp's settings file"):
        load_settings()


def test_the_question_limit_is_one_number_everywhere() -> None:
    """The retriever, the API and the page read a question up to one limit: the page's input
    stops there, and the API and the CLI cut what is longer, with a notice."""
    from pathlib import Path

    from kgp.agents.retriever import clean_question
    from kgp.settings import MAX_QUESTION_CHARS

    page = Path(__file__).resolve().parents[2] / "engine" / "serve" / "static" / "index.html"
    assert f'maxlength="{MAX_QUESTION_CHARS}"' in page.read_text()
    text, notices = clean_question("x" * (MAX_QUESTION_CHARS + 5))
    assert len(text) == MAX_QUESTION_CHARS and f"first {MAX_QUESTION_CHARS:,}" in notices[0]

"""Docs that cannot drift: README commands, CI, the Neo4j compose file, and the settings and
CLI references made from the code."""

from __future__ import annotations

from pathlib import Path

import yaml
from kgp.cli import app
from typer.main import get_command

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
TEST_COMMAND = "python -m pytest -q -n 2"


def test_ci_runs_the_readme_test_command() -> None:
    assert TEST_COMMAND in README
    ci = (REPO / ".ci" / "run").read_text()
    assert TEST_COMMAND in ci.splitlines()[-1]


def test_every_cli_command_is_in_the_readme() -> None:
    for name in getattr(get_command(app), "commands", {}):
        assert f"kgp {name}" in README, name


def test_compose_starts_neo4j_with_auth_volume_and_health_check() -> None:
    compose = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())
    neo4j = compose["services"]["neo4j"]
    assert neo4j["image"].startswith("neo4j:5.26")
    assert "${NEO4J_PASSWORD" in neo4j["environment"]["NEO4J_AUTH"]
    assert any(v.endswith(":/data") for v in neo4j["volumes"])
    assert "cypher-shell" in " ".join(neo4j["healthcheck"]["test"])
    assert compose["services"]["kgp"]["environment"]["KGP_STORE"] == "neo4j"


def test_compose_serves_kgp_with_keys_against_neo4j() -> None:
    compose = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())
    serve = compose["services"]["kgp-serve"]
    assert serve["command"][:1] == ["serve"] and "--keys" in serve["command"]
    assert serve["environment"]["KGP_STORE"] == "neo4j"
    assert serve["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert serve["ports"] == ["127.0.0.1:8000:8000"] and "/health" in str(serve["healthcheck"])


def test_the_settings_and_cli_references_are_what_the_code_makes() -> None:
    """docs/settings.md and docs/cli.md are made from the code (python -m kgp.cli.reference):
    a setting or an option changed without them fails here."""
    from kgp.cli.reference import cli_markdown, settings_markdown

    rerun = "out of date: run python -m kgp.cli.reference"
    assert (REPO / "docs" / "settings.md").read_text() == settings_markdown(), rerun
    assert (REPO / "docs" / "cli.md").read_text() == cli_markdown(), rerun


def test_every_setting_is_in_a_group_with_a_description() -> None:
    from kgp.settings import GROUPS, Settings

    for name, field in Settings.model_fields.items():
        extra = field.json_schema_extra
        assert isinstance(extra, dict) and extra.get("group") in GROUPS, name
        assert field.description and field.description.endswith("."), name


def readme_commands() -> list[list[str]]:
    """Every ``kgp`` command in the README's bash blocks, as words (``&&`` chains split)."""
    import re
    import shlex

    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL):
        for line in block.splitlines():
            for part in line.split("#")[0].split("&&"):
                words = shlex.split(part)
                while words and "=" in words[0]:  # KGP_STORE=neo4j kgp doctor
                    words = words[1:]
                if words[:1] == ["kgp"]:
                    commands.append(words[1:])
    return commands


def test_every_readme_command_exists_and_says_its_data_directory() -> None:
    """A newcomer runs the README's commands as written: each is a kgp command, and each that
    reads or writes a graph names its data directory (leaving it out reads another one)."""
    group = get_command(app)
    names = set(getattr(group, "commands", {}))
    found = readme_commands()
    assert len(found) >= 15
    for words in found:
        options = [w for w in words if w.startswith("--")]
        command = next(
            w
            for i, w in enumerate(words)
            if not w.startswith("-")
            and (i == 0 or words[i - 1] not in ("--data-dir", "--groups", "--store"))
        )
        assert command in names, words
        if command not in ("key", "doctor"):  # (an API key's file; doctor here checks Neo4j)
            assert "--data-dir" in options, f"kgp {' '.join(words)}: say which data directory"

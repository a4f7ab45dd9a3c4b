"""Docs that cannot drift: README commands, CI, and the Neo4j compose file."""

from __future__ import annotations

from pathlib import Path

import yaml
from kgp.cli import app
from typer.main import get_command

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
TEST_COMMAND = "python -m pytest -q"


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

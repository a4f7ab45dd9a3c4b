"""The example documents the repository ships sync as the README shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import kgp as kgp_cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "documents"


@pytest.mark.slow
def test_examples_sync_into_pages_passages_and_a_table(tmp_path: Path) -> None:
    done = kgp_cli("--data-dir", str(tmp_path / "kb"), "sync", str(EXAMPLES), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["added"]) == ["maintenance.md", "rainfall-2024.pdf", "stations.md"]
    import kgp

    with kgp.open(data_dir=tmp_path / "kb") as kg:
        table = kg.store.fetch_nodes(["rainfall-2024.pdf#page=1&table=0"])
        markdown = table["rainfall-2024.pdf#page=1&table=0"]["markdown"]
        assert "| Cedar Hollow | 1,031 | March | 4,385 |" in markdown
        assert kg.stats().labels["Page"] == 4
        question = "Which station recorded the most rain, and what does it serve?"
        shown = kgp_cli("--data-dir", str(tmp_path / "kb"), "ask", question, "--k", "5")
        assert shown.returncode == 0, shown.stderr
        readme = (REPO / "README.md").read_text()
        block = readme.split("```")[5]  # the main job's output on the README's first screen
        assert shown.stdout.strip() in block, "the README shows what the main job prints"
        assert "Cedar Hollow recorded the most rain" in shown.stdout
        assert "Cedar Hollow station serves the northern farms." in shown.stdout

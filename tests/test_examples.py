"""The example documents the repository ships sync as the README shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "documents"


def test_examples_sync_into_pages_passages_and_a_table(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kgp",
            "--data-dir",
            str(tmp_path / "kb"),
            "sync",
            str(EXAMPLES),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["added"]) == ["maintenance.md", "rainfall-2024.pdf", "stations.md"]
    import kgp

    with kgp.open(data_dir=tmp_path / "kb") as kg:
        table = kg.store.fetch_nodes(["rainfall-2024.pdf#page=1&table=0"])
        markdown = table["rainfall-2024.pdf#page=1&table=0"]["markdown"]
        assert "| Cedar Hollow | 1,031 | March | 4,385 |" in markdown
        assert kg.stats().labels["Page"] == 4

"""The example documents the repository ships sync as the README shows, and
examples/make_report.py writes the PDFs among them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import kgp as kgp_cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "documents"


@pytest.mark.slow
def test_examples_sync_into_pages_passages_and_tables(tmp_path: Path) -> None:
    done = kgp_cli("--data-dir", str(tmp_path / "kb"), "sync", str(EXAMPLES), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["added"]) == [
        "budget-2025.pdf",
        "maintenance.md",
        "rainfall-2024.pdf",
        "stations.md",
    ]
    import kgp

    with kgp.open(data_dir=tmp_path / "kb") as kg:
        table = kg.store.fetch_nodes(["rainfall-2024.pdf#page=1&table=0"])
        markdown = table["rainfall-2024.pdf#page=1&table=0"]["markdown"]
        assert "| Cedar Hollow | 1,031 | March | 4,385 |" in markdown
        assert kg.stats().labels["Page"] == 6
        assert kg.stats().labels["Table"] == 4
        captions = {t.id: t.caption for t in kg.store.tables() if t.doc_id == "budget-2025.pdf"}
        assert captions == {
            "budget-2025.pdf#page=1&table=0": "Table 2.1: Operating budget by cost line",
            "budget-2025.pdf#page=1&table=1": "Table 2.2: Capital projects",
            "budget-2025.pdf#page=2&table=0": "TABLE IV: Funding sources 2025",
        }, "camelot finds the ruled tables, and each keeps the caption printed above it"
        assert kg.store.vectors.half, "a sync stores float16 values: the index holds them so"
        question = "Which station recorded the most rain, and what does it serve?"
        shown = kgp_cli("--data-dir", str(tmp_path / "kb"), "ask", question, "--k", "5")
        assert shown.returncode == 0, shown.stderr
        readme = (REPO / "README.md").read_text()
        block = readme.split("```")[5]  # the main job's output on the README's first screen
        assert shown.stdout.strip() in block, "the README shows what the main job prints"
        assert "Cedar Hollow recorded the most rain" in shown.stdout
        assert "Cedar Hollow station serves the northern farms." in shown.stdout


@pytest.mark.parametrize("name", ["rainfall-2024.pdf", "budget-2025.pdf"])
def test_the_shipped_pdfs_are_what_make_report_writes(tmp_path: Path, name: str) -> None:
    import runpy

    import pymupdf

    script = runpy.run_path(str(REPO / "examples" / "make_report.py"))
    written = script["write"](name, tmp_path)

    def pages(path: Path) -> list[str]:
        with pymupdf.open(path) as doc:
            return [page.get_text() for page in doc]

    assert pages(written) == pages(EXAMPLES / name)

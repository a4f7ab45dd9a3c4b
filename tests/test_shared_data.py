"""Tests on the shared data beside the repository (../shared/data): real PDFs and the ICDAR 2013
table ground truth. Skipped, with the reason, when the folder is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PDFS = REPO.parent / "shared" / "data" / "pdfs"

pytestmark = pytest.mark.skipif(
    not PDFS.is_dir(), reason=f"shared data not found at {PDFS} (it sits beside the repository)"
)


def test_icdar_tables_found_and_cell_text() -> None:
    from tests.bench.tables_icdar import evaluate

    total = evaluate()["all"]
    # Measured 2026-11-22 (python -m tests.bench.tables_icdar); the floor catches regressions.
    assert total.matched_tables / total.truth_tables >= 0.85
    assert total.matched_tables / total.found_tables >= 0.85
    assert total.matched_cells / total.truth_cells >= 0.75


def test_real_pdfs_read_with_pages_tables_and_titles() -> None:
    from kgp.ingest.pdf import PdfReader

    pdf = PDFS / "icdar2013" / "eu-001.pdf"
    read = PdfReader().read(pdf, pdf.read_bytes())
    assert read.title == "E-PRTR pollutants and their thresholds"
    assert len(read.pages) == 3
    assert len(read.tables) == 7
    page_text = " ".join(s.text for p in read.pages for s in p.sections)
    assert "facility" in page_text
    # the cells of the tables are not in the page text a second time
    assert "1,2-dichloroethane" not in page_text.lower() or "1,2-dichloroethane" not in " ".join(
        t.markdown.lower() for t in read.tables
    )

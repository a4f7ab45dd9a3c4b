"""Tests on the shared data beside the repository (../shared/data): real PDFs and the ICDAR 2013
table ground truth. Skipped, with the reason, when the folder is not there."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp.ingest.embedding import Encoder

REPO = Path(__file__).resolve().parent.parent
PDFS = REPO.parent / "shared" / "data" / "pdfs"
EXAMPLES = REPO / "examples" / "documents"

pytestmark = pytest.mark.skipif(
    not PDFS.is_dir(), reason=f"shared data not found at {PDFS} (it sits beside the repository)"
)


@pytest.mark.slow
def test_icdar_tables_found_cell_text_and_structure() -> None:
    from tests.bench.tables_icdar import evaluate

    scores = evaluate()
    total = scores.pop("all")
    # floors under docs/benchmarks.md's figures (Tables) on the shared set: they catch regressions
    assert total.matched_tables / total.truth_tables >= 0.85
    assert total.matched_tables / total.found_tables >= 0.85
    assert total.matched_cells / total.truth_cells >= 0.96
    assert total.f1() >= 0.965, "adjacency relations over all documents"
    assert sum(s.f1() for s in scores.values()) / len(scores) >= 0.965, "the documents' mean F1"


def test_real_pdfs_titles_are_no_file_names_or_section_names() -> None:
    from kgp.ingest.pdf import PdfReader

    def title(name: str) -> str:
        return PdfReader().read(PDFS / name, (PDFS / name).read_bytes(), tables=False).title

    # metadata titles "88300 162..177", "S2MNCE01birdisland.xlsx", "DARPA‐BAA‐15‐58"; largest
    # lines "Proposed Rules" (a running head), "- 41 -" and "Page 12" (page numbers)
    assert (
        title("issue-316-example.pdf") == "Shift work interventions for reduced work-family conﬂict"
    )
    # its heading block is printed twice, beside a test's name on the same baseline
    assert title("birdisland.pdf") == (
        "2012 BETTER VARIETIES Harvest Report for Minnesota Central [ MNCE ]"
    )
    assert title("pr-88-example.pdf") == "Broad Agency Announcement"
    assert title("federal-register-2020-17221.pdf") != "Proposed Rules"
    assert title("icdar2013/eu-002.pdf") == "Credit Derivatives Markets"
    assert title("icdar2013/us-028.pdf").startswith("Student Enrollment and Number of Incidents")
    assert title("table-curves-example.pdf") == "Eliquis, INN-apixaban"  # its metadata


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


@pytest.fixture(scope="module")
def pdf_graph(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[Any]:
    """Real PDFs with tables (a wide survey table, a budget, national statistics, a prose
    report with two small tables) and the shipped example documents, in one graph."""
    folder = tmp_path_factory.mktemp("pdfs")
    for name in ("health.pdf", "budget.pdf", "nics-background-checks-2015-11.pdf"):
        shutil.copy(PDFS / name, folder / name)
    shutil.copy(PDFS / "icdar2013" / "us-001.pdf", folder / "us-001.pdf")
    shutil.copytree(EXAMPLES, folder / "examples")
    with kgp.open(data_dir=tmp_path_factory.mktemp("kb"), loaded_encoder=encoder) as kg:
        report = kg.sync(folder)
        assert not report.skipped, report.skipped
        yield kg


@pytest.mark.slow
def test_a_page_the_named_document_lacks_is_never_taken_from_another(pdf_graph: Any) -> None:
    result = pdf_graph.retrieve("What does page 2 of health.pdf say?", 5)
    assert result.structure["documents"] == ["health.pdf"]
    assert result.structure["notice"] == "health.pdf has no page 2 (it has 1 page)"
    assert result.notices == ["health.pdf has no page 2 (it has 1 page)"]
    assert not [p for p in result.passages if p.document["path"] != "health.pdf" and p.score == 1]
    assert all(p.hop > 0 or p.kind != "table" for p in result.passages), "no page given for it"
    named = pdf_graph.retrieve("What does page 2 of us-001.pdf say?", 10)
    assert named.structure["documents"] == ["us-001.pdf"] and named.notices == []
    assert {p.page for p in named.passages[:3]} == {2}
    assert {p.document["path"] for p in named.passages[:3]} == {"us-001.pdf"}
    tables = pdf_graph.retrieve("Table 3 of budget.pdf", 5)
    assert tables.notices == ["budget.pdf has no table 3 (it has 1 table)"]


@pytest.mark.parametrize(
    ("question", "document", "row"),
    [
        ("What was Gujarat's total public health outlay in 2012-13?", "health.pdf", "Gujarat"),
        (
            "How much money did the budget give the Department of Atomic Energy?",
            "budget.pdf",
            "DEPARTMENT OF ATOMIC ENERGY",
        ),
        (
            "How many firearm background checks were run in Florida in November 2015?",
            "nics-background-checks-2015-11.pdf",
            "Florida",
        ),
    ],
)
@pytest.mark.slow
def test_a_value_inside_a_table_is_found_by_a_content_question(
    pdf_graph: Any, question: str, document: str, row: str
) -> None:
    result = pdf_graph.retrieve(question, 5)
    assert result.structure is None, "a content question, not a structural one"
    found = [
        p
        for p in result.passages
        if p.kind == "table-rows" and p.document["path"] == document and row in p.text
    ]
    assert found, [(p.kind, p.document["path"], p.text[:60]) for p in result.passages]
    assert found[0].table and found[0].table.startswith(f"{document}#page=")


@pytest.mark.slow
def test_tables_do_not_drown_prose(pdf_graph: Any) -> None:
    result = pdf_graph.retrieve("Who manages the station whose two pumps were replaced?", 5)
    wide = {"health.pdf", "budget.pdf", "nics-background-checks-2015-11.pdf"}
    assert not [p for p in result.passages if p.document["path"] in wide]
    assert result.passages[0].document["path"] == "examples/stations.md"


def test_a_table_over_many_pages_keeps_its_header_on_each() -> None:
    from kgp.ingest.pdf import PdfReader
    from kgp.ingest.tables import parse_markdown_table

    path = PDFS / "WARN-Report-for-7-1-2015-to-03-25-2016.pdf"
    tables = PdfReader().read(path, path.read_bytes()).tables
    header = parse_markdown_table(tables[0].markdown)[0]
    assert header[:2] == ["Notice Date", "Effective"]
    listing = [t for t in tables if t.cols == tables[0].cols]  # its last page sums up by month
    assert len(listing) > 10
    for table in listing[1:]:
        assert parse_markdown_table(table.markdown)[0] == header, f"page {table.page}"

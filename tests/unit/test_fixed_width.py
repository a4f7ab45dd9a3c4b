"""Tables typed in a fixed-width font, read from real PDFs written by PyMuPDF."""

from pathlib import Path

import pymupdf
from kgp.ingest.fixed_width import fixed_width_tables, typed_lines
from kgp.ingest.pdf import PdfReader

REPORT = """\
SAMPLE SIZES - The table below gives the recommended sizes.  Smaller
samples are marked with an asterisk in the agency's publications.

Table 1. Recommended sample sizes by design effect

                               Design effect
   Proportion            1.0   1.1   1.2   1.3
-----------------------------------------------
0.99 ..................  800   880   960 1,040
0.95 ..................  160   176   192   208
0.56-0.74 .............   30    33    36    39
0.01 ..................  800   880   960 1,040

NOTE: Minimum sizes were adjusted for the design effect.
"""


def typed_pdf(path: Path, text: str) -> Path:
    """A one-page PDF of ``text`` in Courier, a line per line, as a printed text report."""
    doc = pymupdf.open()
    page = doc.new_page()
    for n, line in enumerate(text.splitlines()):
        page.insert_text((72, 72 + 12 * n), line, fontname="cour", fontsize=9)
    doc.save(path)
    return path


def test_a_typed_table_is_read_by_its_character_columns(tmp_path: Path) -> None:
    with pymupdf.open(typed_pdf(tmp_path / "report.pdf", REPORT)) as doc:
        tables = fixed_width_tables(typed_lines(doc[0].get_text("dict")))
    assert len(tables) == 1
    _, grid = tables[0]
    assert grid == [
        ["", "", "Design effect", "", ""],  # a header over several columns stays whole
        ["Proportion", "1.0", "1.1", "1.2", "1.3"],
        ["0.99", "800", "880", "960", "1,040"],  # numbers one space apart are two cells
        ["0.95", "160", "176", "192", "208"],
        ["0.56-0.74", "30", "33", "36", "39"],  # leader dots gone, the range kept
        ["0.01", "800", "880", "960", "1,040"],
    ]


def test_prose_in_a_fixed_width_font_is_no_table(tmp_path: Path) -> None:
    prose = "\n".join(
        [
            "Variance estimation from complex samples such as these is a",
            "complicated process.  Because of the techniques used, exact",
            "expressions for errors are often not available.  Also, the",
            "estimates of sampling error are themselves subject to error.",
        ]
    )
    with pymupdf.open(typed_pdf(tmp_path / "prose.pdf", prose)) as doc:
        assert fixed_width_tables(typed_lines(doc[0].get_text("dict"))) == []


def test_the_pdf_reader_keeps_a_typed_table_and_its_caption(tmp_path: Path) -> None:
    pdf = typed_pdf(tmp_path / "report.pdf", REPORT)
    read = PdfReader().read(pdf, pdf.read_bytes())
    (table,) = read.tables
    assert table.caption == "Table 1. Recommended sample sizes by design effect"
    assert "| 0.95 | 160 | 176 | 192 | 208 |" in table.markdown
    text = read.pages[0].sections[0].text
    assert "Smaller" in text and "NOTE: Minimum sizes" in text
    assert "880" not in text  # the table's words are in the table only

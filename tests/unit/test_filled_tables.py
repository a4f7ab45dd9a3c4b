"""Tables drawn as filled cells without rules, read from real PDFs written by PyMuPDF."""

from pathlib import Path

import pymupdf
from kgp.ingest.filled_tables import filled_cells, filled_tables
from kgp.ingest.pdf import PdfReader
from kgp.ingest.tables import parse_markdown_table

ROWS = [
    ["", "Launch", "One year", "FY 2010"],
    ["Data sets", "47", "272,768", "389,933"],
    ["Downloads", "0", "652,412", "2,348,928"],
    ["Cities with open data", "0", "8", "11"],
]
DARK, LIGHT = (0.09, 0.21, 0.36), (0.78, 0.85, 0.95)


def coloured_table(path: Path, *, sidebar: bool = False) -> Path:
    """A page with a table of coloured cells two points apart (dark header and labels, light
    values), each with a smaller background of the same colour inside it, as office software
    draws them; or, with ``sidebar``, one coloured box of text instead."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((60, 60), "Open data at a glance", fontsize=11)
    if sidebar:
        page.draw_rect(pymupdf.Rect(60, 90, 400, 200), color=None, fill=LIGHT)
        page.insert_text((70, 110), "Data sets published by agencies grew every year.", fontsize=9)
    else:
        widths = [160, 90, 90, 90]
        for r, row in enumerate(ROWS):
            x = 60.0
            for c, text in enumerate(row):
                cell = pymupdf.Rect(x, 90 + 30 * r, x + widths[c], 118 + 30 * r)
                fill = DARK if r == 0 or c == 0 else LIGHT
                page.draw_rect(cell, color=None, fill=fill)
                inner = pymupdf.Rect(cell.x0 + 4, cell.y0 + 4, cell.x1 - 4, cell.y1 - 4)
                page.draw_rect(inner, color=None, fill=fill)
                page.insert_text((x + 6, 108 + 30 * r), text, fontsize=9)
                x += widths[c] + 2
    page.insert_text((60, 260), "The figures are counted at the end of each year.", fontsize=9)
    doc.save(path)
    return path


def test_cells_of_colour_lined_up_are_a_table(tmp_path: Path) -> None:
    with pymupdf.open(coloured_table(tmp_path / "table.pdf")) as doc:
        page = doc[0]
        (found,) = filled_tables(filled_cells(page.get_drawings()), page.get_text("words"))
    _, grid = found
    assert grid == ROWS


def test_a_coloured_box_of_text_is_no_table(tmp_path: Path) -> None:
    with pymupdf.open(coloured_table(tmp_path / "sidebar.pdf", sidebar=True)) as doc:
        page = doc[0]
        assert filled_tables(filled_cells(page.get_drawings()), page.get_text("words")) == []


def test_the_pdf_reader_reads_a_table_of_coloured_cells_once(tmp_path: Path) -> None:
    pdf = coloured_table(tmp_path / "table.pdf")
    read = PdfReader().read(pdf, pdf.read_bytes())
    (table,) = read.tables
    assert parse_markdown_table(table.markdown) == ROWS
    text = read.pages[0].sections[0].text
    assert "counted at the end" in text and "652,412" not in text

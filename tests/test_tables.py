"""Tables as passages: a header carried over a page break (a table that goes on at the top of
the next page without its header gets it back), and the header a reader knows against the one
guessed; what the encoder reads of a table's rows."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from kgp.ingest.embedding import SHIPPED_MODEL, Encoder
from kgp.ingest.pdf import PdfReader
from kgp.ingest.tables import (
    HEADER_READ,
    continued,
    markdown_table,
    parse_markdown_table,
    table_chunks,
)
from kgp.stores.model import TableRecord

HEADER = ["Notice Date", "Company", "City", "Workers"]


def record(page: int, rows: list[list[str]], index: int = 0) -> TableRecord:
    return TableRecord(page, index, markdown_table(rows), len(rows), len(rows[0]))


def test_a_continuation_gets_the_header_of_the_table_it_continues() -> None:
    first = record(1, [HEADER, ["07/01/2015", "Maxim", "San Jose", "72"]])
    rest = record(2, [["07/17/2015", "Boeing", "Huntington Beach", "65"]])
    carried = continued(first, rest)
    assert carried is not None and carried.header_rows == 1 and carried.rows == 2
    assert parse_markdown_table(carried.markdown) == [
        HEADER,
        parse_markdown_table(rest.markdown)[0],
    ]
    ((chunk, _),) = table_chunks(carried.markdown, header_rows=carried.header_rows)
    assert chunk.splitlines()[0] == "| Notice Date | Company | City | Workers |"
    # and the page after takes the same header from the carried one
    third = continued(carried, record(3, [["08/03/2015", "Safeway", "Oakland", "202"]]))
    assert third is not None and parse_markdown_table(third.markdown)[0] == HEADER


def test_what_does_not_continue_keeps_its_rows() -> None:
    first = record(1, [HEADER, ["07/01/2015", "Maxim", "San Jose", "72"]])
    again = record(2, [HEADER, ["07/17/2015", "Boeing", "Huntington Beach", "65"]])
    assert continued(first, again) is None, "its header printed again"
    assert continued(first, record(2, [["a", "b", "c"], ["1", "2", "3"]])) is None, "columns"
    assert continued(first, record(3, [["07/17/2015", "Boeing", "Irvine", "65"]])) is None
    words = record(2, [["Safeway", "Walnut Creek", "Oakland", "Closure"]])
    assert continued(first, words) is None, "a first row of words may be its own header"


def pdf_of_a_table_over_two_pages() -> bytes:
    """A ruled table filling page 1 from its top and going on at the top of page 2."""
    doc = pymupdf.open()
    rows = [HEADER] + [
        [f"07/{d:02d}/2015", f"Company {d}", "Oakland", str(10 * d)] for d in range(1, 31)
    ]
    for page_rows in (rows[:18], rows[18:]):
        page = doc.new_page(width=595, height=842)
        top = 60 if page_rows is rows[:18] else 50
        for r, row in enumerate(page_rows):
            y = top + 40 * r
            for c, cell in enumerate(row):
                x = 50 + 120 * c
                page.draw_rect(pymupdf.Rect(x, y, x + 120, y + 40), color=(0, 0, 0), width=0.8)
                page.insert_text((x + 4, y + 24), cell, fontsize=9)
    return doc.tobytes()


def test_a_ruled_table_over_a_page_break_reads_with_its_header_on_both_pages(
    tmp_path: Path,
) -> None:
    path = tmp_path / "warn.pdf"
    path.write_bytes(pdf_of_a_table_over_two_pages())
    first, second = PdfReader().read(path, path.read_bytes()).tables
    assert parse_markdown_table(first.markdown)[0] == HEADER
    rows = parse_markdown_table(second.markdown)
    assert rows[0] == HEADER and rows[1][0] == "07/18/2015" and second.header_rows == 1


STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut"]
CAPTION = "NICS Firearm Checks: Month/Year by State"


def wide_table() -> tuple[str, str]:
    """A 31-column table like the NICS monthly report, a two-row header over rows of numbers:
    its Markdown and caption."""
    kinds = ["Permit", "Permit recheck", "Handgun", "Long gun", "Other", "Multiple", "Admin"]
    groups = ["State", *(kinds[n // 5] if n % 5 == 0 else "" for n in range(30))]
    header = [
        "",
        *(["Handgun", "Long gun", "Other", "Multiple", "Totals"][n % 5] for n in range(30)),
    ]
    rows = [
        [state, *(f"{(i + 3) * (n + 7) * 131:,}" for n in range(30))]
        for i, state in enumerate(STATES)
    ]
    return markdown_table([groups, header, *rows]), CAPTION


def test_the_encoder_reads_a_table_passage_without_markdown_under_a_header_it_sees_past() -> None:
    chunks = table_chunks(*wide_table())
    assert len(chunks) > 1 and all(t.startswith(f"{CAPTION}\n| State |") for t, _ in chunks)
    text, read = chunks[1]
    assert text.splitlines()[0] == CAPTION and text.splitlines()[1].startswith("| State |")
    lines = read.splitlines()
    assert lines[0] == CAPTION
    # both header rows, cut; then every data row of the passage, without pipes or empty cells
    assert len(lines[1]) <= HEADER_READ and lines[1].startswith(
        "State; Permit; Permit recheck; Handgun"
    )
    data = text.splitlines()[4:]  # caption, header, rule, second header row
    assert len(lines) == 2 + len(data) and "|" not in read
    assert lines[2].split("; ")[0] == parse_markdown_table(data[0])[0][0]


def test_two_row_passages_of_a_wide_table_are_told_apart_by_the_shipped_encoder() -> None:
    chunks = table_chunks(*wide_table())[:2]
    model = Encoder(model=SHIPPED_MODEL, device="cpu").load()
    as_stored = model.encode([text for text, _ in chunks])
    as_read = model.encode([read for _, read in chunks])
    # in Markdown the header fills the encoder's window, and both passages read the same
    assert float(as_stored[0] @ as_stored[1]) > 0.999
    assert float(as_read[0] @ as_read[1]) < 0.98

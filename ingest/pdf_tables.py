"""A PDF's tables with camelot: ruled tables (lattice; one whose cells look merged read again
by whitespace), then on pages without them whitespace tables (stream) that look like tables, less
what they took in of the page around them (a caption's lines, notes, prose) and their grids put
right (:mod:`kgp.ingest.grids`); a table reported twice, or read another way too, kept once; and a
table that goes on over a page break given its header back."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgp.ingest.grids import (
    NUMBER,
    PROSE_LINE,
    STREAM_MAX_MEAN_CELL,
    STREAM_MIN_ROWS,
    caption_line,
    form_rows,
    note_line,
    numbers,
    prose_column,
    repaired,
    tabular,
    without_leaders,
)
from kgp.ingest.tables import (
    HEADER_ROWS,
    caption_row,
    continued,
    is_caption,
    markdown_table,
)
from kgp.stores.model import TableRecord

Box = tuple[float, float, float, float]  # x0, top, x1, bottom
PdfBox = tuple[float, float, float, float]  # x0, bottom, x1, top: camelot's, origin bottom-left
Read = tuple[Any, list[list[str]], PdfBox]  # a camelot table, its grid and its box

# A stream table on a page without ruled tables is kept only when it looks like a table.
STREAM_MIN_COLS = 3
STREAM_MIN_ACCURACY = 90.0
STREAM_MAX_WHITESPACE = 40.0
LABELS_MIN_ROWS = 5  # a captioned two-column table of labels and texts has this many rows
LABEL_MAX = 45  # characters: a longer first cell is a line of prose, not a label
LABELS_SHORT_SHARE = 0.8  # ... and this share of the first cells are labels
CAPTIONED_MIN_ACCURACY = 80.0  # on a page that prints "Table ..."
CAPTIONED_MAX_WHITESPACE = 65.0
# a ruled table whose cells hold more lines than this on average has merged rows
# (docs/decisions/0005-how-tables-are-read.md)
MERGED_LINES_PER_CELL = 3.0
SAME_TABLE_SHARE = 0.9  # a table with this share of its box inside another's is the same one
SAME_TABLE_OVERLAP = 0.5  # ... and one half inside a table read another way
HEADER_SHARE = 0.5  # ... or this share, when it holds no number: another's header read alone
HEADER_GAP = 4.0  # points: header rows ruled apart from their table's body lie this close above it
SAME_WIDTH = 0.9  # ... across this share of the wider one's width
CONTINUED_EDGE = 0.6  # a table that ends below 60 % of its page may go on at the top of the next


@dataclass(frozen=True, slots=True)
class FoundTable:
    record: TableRecord
    bbox: Box  # in PyMuPDF page coordinates


Grid = tuple[int, Box, list[list[str]]]  # a table's page, its box and its cells


def camelot_tables(
    path: Path,
    heights: dict[int, float],
    captioned: Collection[int] = (),
    typed: Collection[int] = (),
) -> list[Grid]:
    """Ruled tables (lattice; one whose cells look merged read again by stream), then on pages
    without them whitespace tables (stream) that are aligned enough (more loosely on the
    ``captioned`` pages, which print a "Table ..." line) and look tabular. Pages in ``typed``
    have their tables in a fixed-width font (:mod:`kgp.ingest.fixed_width`) and are not read by
    whitespace."""
    import camelot

    pages = ",".join(str(n) for n in sorted(heights))
    logging.getLogger("camelot").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # (one column of ruled cells, also when read again, is a framed note, and its page may
        # hold a table without rules)
        ruled = camelot.read_pdf(str(path), pages=pages, flavor="lattice")
        read = [(t, _unmerged(path, t), t._bbox) for t in ruled]
        lattice = [(t, cells, box) for t, cells, box in read if cells and len(cells[0]) > 1]
        ruled_pages = {int(t.page) for t, _, _ in lattice}
        rest = [n for n in sorted(heights) if n not in ruled_pages and n not in typed]
        stream: list[Read] = []
        if rest:
            whole = camelot.read_pdf(str(path), pages=",".join(map(str, rest)), flavor="stream")
            kept = (_aligned(path, t, int(t.page) in captioned) for t in whole)
            trimmed = _distinct([(t, *_trimmed(t)) for t in kept if t is not None])
            stream = [(t, repaired(cells), box) for t, cells, box in trimmed]
    grids = []
    for table, cells, (x0, y0, x1, y1) in lattice + stream:  # PDF coordinates: origin bottom-left
        page = int(table.page)
        box = (x0, heights[page] - y1, x1, heights[page] - y0)
        grids.append((page, box, without_leaders(cells)))
    return grids


def numbered(grids: list[Grid]) -> list[FoundTable]:
    """Tables in page order, each numbered from the top of its page; caption rows at a grid's
    top (a ruled table's first cell can hold its caption) become its caption."""
    found: list[FoundTable] = []
    per_page: dict[int, int] = {}
    for page, box, cells in sorted(grids, key=lambda grid: (grid[0], grid[1][1])):
        index = per_page.get(page, 0)
        per_page[page] = index + 1
        captions = []
        while len(cells) > 1 and (caption := caption_row(cells)):
            captions.append(caption)
            cells = cells[1:]
        width = len(cells[0]) if cells else 0
        markdown = markdown_table(cells)
        record = TableRecord(page, index, markdown, len(cells), width, " ".join(captions))
        found.append(FoundTable(record, box))
    return found


def one_reading(first: list[Grid], second: list[Grid]) -> list[Grid]:
    """Tables read two ways with one reading each: a table of ``first`` that lies half inside
    one of ``second`` gives way to it (the same table, read better the second way); then one of
    ``second`` that lies half inside a table of ``first`` left gives way to that one (it read
    only part of a larger table)."""

    def inside(grid: Grid, others: list[Grid]) -> bool:
        page, box, _ = grid
        return any(
            other_page == page and _overlap(box, other) >= SAME_TABLE_OVERLAP * _area(box)
            for other_page, other, _ in others
        )

    kept = [grid for grid in first if not inside(grid, second)]
    return kept + [grid for grid in second if not inside(grid, kept)]


def headed(grids: list[Grid]) -> list[Grid]:
    """Tables whose header rows were read as a table of their own (ruled apart from the body)
    joined again: a table of at most HEADER_ROWS rows holding no number, just above another of
    as many columns on its page, across the same width, tops it."""
    order = sorted(grids, key=lambda grid: (grid[0], grid[1][1]))
    out: list[Grid] = []
    for page, box, cells in order:
        if out and _heads(out[-1], (page, box, cells)):
            _, head_box, head = out.pop()
            x0, top, x1, _ = head_box
            box = (min(x0, box[0]), top, max(x1, box[2]), box[3])
            cells = head + cells
        out.append((page, box, cells))
    return out


def _heads(upper: Grid, lower: Grid) -> bool:
    (page, (ux0, _, ux1, bottom), head), (lower_page, (lx0, top, lx1, _), body) = upper, lower
    width = min(ux1, lx1) - max(ux0, lx0)
    return (
        page == lower_page
        and len(head) <= HEADER_ROWS
        and bool(body)
        and len(head[0]) == len(body[0])
        and not any(numbers(row) for row in head)
        and abs(top - bottom) <= HEADER_GAP
        and width >= SAME_WIDTH * max(ux1 - ux0, lx1 - lx0)
    )


def carry_headers(
    records: list[TableRecord], boxes: list[Box], heights: dict[int, float]
) -> tuple[TableRecord, ...]:
    """Tables that go on over a page break get their header back on the next page: a page's
    first table, near its top, continues the previous page's last table, near its bottom
    (:func:`kgp.ingest.tables.continued` says whether it does)."""
    out = list(records)
    for n in range(1, len(out)):
        before, table = out[n - 1], out[n]
        ends_low = boxes[n - 1][3] > CONTINUED_EDGE * heights[before.page]
        starts_high = boxes[n][1] < (1 - CONTINUED_EDGE) * heights[table.page]
        if table.index == 0 and ends_low and starts_high:
            out[n] = continued(before, table) or table
    return tuple(out)


def _aligned(path: Path, table: Any, captioned: bool) -> Any | None:
    """A whitespace (stream) table that looks like one (:func:`_looks_tabular`), or else the
    same read again without the lines of prose it took in, if that looks like one by the
    strict thresholds (a caption printed nearby may be prose's); else None."""
    if _looks_tabular(table, captioned) or (captioned and _labels_and_texts(table)):
        return table
    if table.shape[1] < STREAM_MIN_COLS:  # columns of prose, not a table that took some in
        return None
    again = _without_prose(path, table)
    return again if again is not table and _looks_tabular(again, False) else None


def _looks_tabular(table: Any, captioned: bool) -> bool:
    """Whether a whitespace (stream) table is big enough, aligned enough
    (:func:`_clean_stream`) and holds short or numeric cells (:func:`kgp.ingest.grids.tabular`)."""
    return (
        table.shape[0] >= STREAM_MIN_ROWS
        and table.shape[1] >= STREAM_MIN_COLS
        and _clean_stream(table, captioned)
        and tabular(table.df.values.tolist())
    )


def _labels_and_texts(table: Any) -> bool:
    """Whether a two-column whitespace table is labels and what they say ("Inflation rate" |
    "Inflation rate ranges between 1.0% and 2.0%"), not two columns of prose: long enough,
    aligned by the strict thresholds, its first column's cells short."""
    if table.shape[1] != 2 or table.shape[0] < LABELS_MIN_ROWS:
        return False
    firsts = (str(row[0]).strip() for row in table.df.values.tolist())
    labels = sorted(len(cell) for cell in firsts if cell and not is_caption(cell))
    short = sum(length <= LABEL_MAX for length in labels)  # the rest: notes under the table
    return (
        _clean_stream(table, False)
        and short >= LABELS_MIN_ROWS
        and short >= LABELS_SHORT_SHARE * len(labels)
        and labels[len(labels) // 2] <= STREAM_MAX_MEAN_CELL + 10
    )


def _clean_stream(table: Any, captioned: bool) -> bool:
    """Whether a whitespace (stream) table is aligned enough to be one: camelot's accuracy and
    whitespace within limits, looser on a page that prints a table caption."""
    accuracy = float(table.parsing_report.get("accuracy", 0))
    whitespace = float(table.parsing_report.get("whitespace", 100))
    if captioned:
        return accuracy >= CAPTIONED_MIN_ACCURACY and whitespace <= CAPTIONED_MAX_WHITESPACE
    return accuracy >= STREAM_MIN_ACCURACY and whitespace <= STREAM_MAX_WHITESPACE


def _distinct(tables: list[Read]) -> list[Read]:
    """The tables less those whose box lies mostly inside an earlier one's on the same page
    (camelot's stream can report one table twice), and those holding no number whose box lies
    half inside one that holds numbers (a table's header lines reported as a table of their
    own)."""

    def inside(box: PdfBox, others: list[Read], page: int) -> list[float]:
        return [_overlap(box, other[2]) for other in others if int(other[0].page) == page]

    def has_numbers(cells: list[list[str]]) -> bool:
        return any(numbers(row) for row in cells)

    of_numbers = [read for read in tables if has_numbers(read[1])]
    kept: list[Read] = []
    for table, cells, box in tables:
        area, page = _area(box), int(table.page)
        if any(shared >= SAME_TABLE_SHARE * area for shared in inside(box, kept, page)):
            continue
        if not has_numbers(cells) and any(
            shared >= HEADER_SHARE * area for shared in inside(box, of_numbers, page)
        ):
            continue
        kept.append((table, cells, box))
    return kept


def _trimmed(table: Any) -> tuple[list[list[str]], PdfBox]:
    """A whitespace (stream) table's grid less what it took in of the page around it: a last
    column of the page's prose (:func:`kgp.ingest.grids.prose_column`), caption lines at its
    top and notes at its bottom ("NOTE: ...", "— Not available.", a line of prose); its box is
    cut to what is left, so the caption is found above it and the rest stays its page's text."""
    cells = [[str(c) for c in row] for row in table.df.values.tolist()]
    x0, y0, x1, y1 = table._bbox
    if len(cells[0]) > STREAM_MIN_COLS and prose_column([row[-1] for row in cells]):
        cells = [row[:-1] for row in cells]  # the page's next column of text, beside the table
        x1 = table.cols[-1][0]
    first, last = form_rows(cells), len(cells)
    while first < last and caption_line(cells[first], top=first == 0):
        first += 1
    tail = last  # the rows of one cell or none at the bottom: from the first note on, notes
    while tail > first and sum(bool(cell.strip()) for cell in cells[tail - 1]) <= 1:
        tail -= 1
    last = next((n for n in range(tail, last) if note_line(cells[n])), last)
    if last - first < STREAM_MIN_ROWS - 1:
        first, last = 0, len(cells)
    top = table.rows[first][0] if first else y1
    bottom = table.rows[last - 1][1] if last < len(cells) else y0
    rows = [row for row in cells[first:last] if any(cell.strip() for cell in row)]
    return rows, (x0, bottom, x1, top)


def _area(box: Box) -> float:
    """A box's area, at least 1 (a box of no height still has a share to compare)."""
    return max((box[2] - box[0]) * (box[3] - box[1]), 1.0)


def _overlap(a: Box, b: Box) -> float:
    """The area two boxes share (any corner order that is the same for both)."""
    return max(min(a[2], b[2]) - max(a[0], b[0]), 0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0)


def _without_prose(path: Path, table: Any) -> Any:
    """A whitespace (stream) table that took in lines of prose (a row with a line longer than
    ``PROSE_LINE`` characters: text across the columns) read again over its longest run of rows
    without them; else the table itself."""
    prose = [
        any(len(line) > PROSE_LINE for cell in row for line in str(cell).split("\n"))
        for row in table.df.values.tolist()
    ]
    if not any(prose):
        return table
    runs: list[tuple[int, int]] = []  # (length, first row) of each run of rows without prose
    start = 0
    for n, is_prose in enumerate([*prose, True]):
        if is_prose:
            runs.append((n - start, start))
            start = n + 1
    length, first = max(runs)
    if length < STREAM_MIN_ROWS:
        return table
    import camelot

    top, bottom = table.rows[first][0], table.rows[first + length - 1][1]
    x0, _, x1, _ = table._bbox
    area = f"{x0},{top},{x1},{bottom}"
    again = camelot.read_pdf(str(path), pages=str(table.page), flavor="stream", table_areas=[area])
    return again[0] if len(again) else table


def _unmerged(path: Path, table: Any) -> list[list[str]]:
    """A ruled table's cells; when they look merged (one column, more than
    ``MERGED_LINES_PER_CELL`` lines a cell, or a cell of numbers one per line: rules between rows
    or columns that lattice did not see), its area read again by whitespace (stream), if that
    finds columns. Its box stays the ruled one."""
    cells: list[list[str]] = table.df.values.tolist()
    filled = [str(c) for row in cells for c in row if str(c).strip()]
    lines = sum(c.count("\n") + 1 for c in filled) / max(1, len(filled))
    stacked = any(  # numbers one above the other in one cell: rows without a rule between
        len(parts) > 1 and all(NUMBER.fullmatch(part.strip()) for part in parts)
        for parts in (c.split("\n") for c in filled)
    )
    if table.shape[1] > 1 and lines <= MERGED_LINES_PER_CELL and not stacked:
        return cells
    import camelot

    x0, y0, x1, y1 = table._bbox
    area = f"{x0 - 2},{y1 + 2},{x1 + 2},{y0 - 2}"  # left, top, right, bottom; a little margin
    again = camelot.read_pdf(str(path), pages=str(table.page), flavor="stream", table_areas=[area])
    better = [repaired(t.df.values.tolist()) for t in again if t.shape[1] > 1]
    return better[0] if better else cells

"""A PDF's tables with camelot: ruled tables (lattice; one whose cells look merged read again
by whitespace), then on pages without them whitespace tables (stream) that look like tables, their
grids cleaned of what whitespace reading gets wrong (leader dots, wrapped lines, labels a line off
their values, a table reported twice, prose taken in), and a table that goes on over a page break
given its header back."""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgp.ingest.tables import continued, is_caption, markdown_table
from kgp.stores.model import TableRecord

Box = tuple[float, float, float, float]  # x0, top, x1, bottom
PdfBox = tuple[float, float, float, float]  # x0, bottom, x1, top: camelot's, origin bottom-left
Read = tuple[Any, list[list[str]], PdfBox]  # a camelot table, its grid and its box

# A stream table on a page without ruled tables is kept only when it looks like a table.
STREAM_MIN_ROWS = 3
STREAM_MIN_COLS = 3
STREAM_MIN_ACCURACY = 90.0
STREAM_MAX_WHITESPACE = 40.0
STREAM_MAX_MEAN_CELL = 20.0
LABELS_MIN_ROWS = 5  # a captioned two-column table of labels and texts has this many rows
LABEL_MAX = 45  # characters: a longer first cell is a line of prose, not a label
LABELS_SHORT_SHARE = 0.8  # ... and this share of the first cells are labels
CAPTIONED_MIN_ACCURACY = 80.0  # on a page that prints "Table ..."
CAPTIONED_MAX_WHITESPACE = 65.0
# a ruled table whose cells hold more lines than this on average has merged rows
# (docs/benchmarks.md, Tables)
MERGED_LINES_PER_CELL = 3.0
NUMBER = re.compile(r"[-+–(]?[$€£]?\d[\d,.]*(?:%|[KMB]|bn)?\)?")  # a number as tables print it
WIDE_GAP = re.compile(r" {3,}")  # spaces between two columns' texts in one cell
LEADER = re.compile(r"\s*(\.\s*)+")  # a cell of leader dots only
PROSE_LINE = 60  # characters: a longer line in a whitespace table's cell is prose
PROSE_COLUMN_LINE = 50  # ... and a column with half its lines longer is the page's text beside it
SAME_TABLE_SHARE = 0.9  # a table with this share of its box inside another's is the same one
SAME_TABLE_OVERLAP = 0.5  # ... and one half inside a table read another way
HEADER_SHARE = 0.5  # ... or this share, when it holds no number: another's header read alone
NOTE = re.compile(r"(?:notes?\b|sources?\b|abbreviations?\b|see notes|[*†‡§]|[—–] ?[A-Z])", re.I)
HEADER_LINES = 6  # a wrapped header has at most this many lines
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
        ruled = list(camelot.read_pdf(str(path), pages=pages, flavor="lattice"))
        ruled_pages = {int(t.page) for t in ruled}
        rest = [n for n in sorted(heights) if n not in ruled_pages and n not in typed]
        stream: list[Read] = []
        if rest:
            whole = camelot.read_pdf(str(path), pages=",".join(map(str, rest)), flavor="stream")
            kept = (_aligned(path, t, int(t.page) in captioned) for t in whole)
            trimmed = _distinct([(t, *_trimmed(t)) for t in kept if t is not None])
            stream = [(t, _repaired(cells), box) for t, cells, box in trimmed]
        lattice = [(table, _unmerged(path, table), table._bbox) for table in ruled]
    grids = []
    for table, cells, (x0, y0, x1, y1) in lattice + stream:  # PDF coordinates: origin bottom-left
        page = int(table.page)
        box = (x0, heights[page] - y1, x1, heights[page] - y0)
        grids.append((page, box, without_leaders(cells)))
    return grids


def numbered(grids: list[Grid]) -> list[FoundTable]:
    """Tables in page order, each numbered from the top of its page."""
    found: list[FoundTable] = []
    per_page: dict[int, int] = {}
    for page, box, cells in sorted(grids, key=lambda grid: (grid[0], grid[1][1])):
        index = per_page.get(page, 0)
        per_page[page] = index + 1
        width = len(cells[0]) if cells else 0
        record = TableRecord(page, index, markdown_table(cells), len(cells), width)
        found.append(FoundTable(record, box))
    return found


def one_reading(first: list[Grid], second: list[Grid]) -> list[Grid]:
    """Tables read two ways with one reading each: a table of ``first`` that lies half inside
    one of ``second`` gives way to it (the same table, read better the second way); then one of
    ``second`` that lies half inside a table of ``first`` left gives way to that one (it read
    only part of a larger table)."""

    def inside(grid: Grid, others: list[Grid]) -> bool:
        page, box, _ = grid
        area = max((box[2] - box[0]) * (box[3] - box[1]), 1.0)
        return any(
            other_page == page and _overlap(box, other) >= SAME_TABLE_OVERLAP * area
            for other_page, other, _ in others
        )

    kept = [grid for grid in first if not inside(grid, second)]
    return kept + [grid for grid in second if not inside(grid, kept)]


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
    (:func:`_clean_stream`) and holds short or numeric cells (:func:`_tabular`)."""
    return (
        table.shape[0] >= STREAM_MIN_ROWS
        and table.shape[1] >= STREAM_MIN_COLS
        and _clean_stream(table, captioned)
        and _tabular(table.df.values.tolist())
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

    numbered = [read for read in tables if any(_numbers(row) for row in read[1])]
    kept: list[Read] = []
    for read in tables:
        table, _, box = read
        area = max((box[2] - box[0]) * (box[3] - box[1]), 1.0)
        page = int(table.page)
        if any(shared >= SAME_TABLE_SHARE * area for shared in inside(box, kept, page)):
            continue
        if read not in numbered and any(
            shared >= HEADER_SHARE * area for shared in inside(box, numbered, page)
        ):
            continue
        kept.append(read)
    return kept


def _trimmed(table: Any) -> tuple[list[list[str]], PdfBox]:
    """A whitespace (stream) table's grid less what it took in of the page around it: a last
    column of the page's prose (:func:`_prose_column`), caption lines at its top and notes at
    its bottom ("NOTE: ...", "— Not available.", a line of prose); its box is cut to what is
    left, so the caption is found above it and the rest stays its page's text."""
    cells = [[str(c) for c in row] for row in table.df.values.tolist()]
    x0, y0, x1, y1 = table._bbox
    if len(cells[0]) > STREAM_MIN_COLS and _prose_column([row[-1] for row in cells]):
        cells = [row[:-1] for row in cells]  # the page's next column of text, beside the table
        x1 = table.cols[-1][0]
    first, last = 0, len(cells)
    while first < last and _caption_line(cells[first], first > 0):
        first += 1
    tail = last  # the rows of one cell or none at the bottom: from the first note on, notes
    while tail > first and sum(bool(cell.strip()) for cell in cells[tail - 1]) <= 1:
        tail -= 1
    last = next((n for n in range(tail, last) if _note_line(cells[n])), last)
    if last - first < STREAM_MIN_ROWS - 1:
        first, last = 0, len(cells)
    top = table.rows[first][0] if first else y1
    bottom = table.rows[last - 1][1] if last < len(cells) else y0
    rows = [row for row in cells[first:last] if any(cell.strip() for cell in row)]
    return rows, (x0, bottom, x1, top)


def _prose_column(column: list[str]) -> bool:
    """Whether a whitespace table's column is a column of the page's prose: lines as long as a
    text column's (half of them over ``PROSE_COLUMN_LINE`` characters), no number among them."""
    filled = [cell.strip() for cell in column if cell.strip()]
    long = sum(len(cell) > PROSE_COLUMN_LINE for cell in filled)
    return len(filled) >= STREAM_MIN_ROWS and 2 * long >= len(filled) and not _numbers(filled)


def _caption_line(row: list[str], after_caption: bool) -> bool:
    """Whether a grid row at a table's top is a caption's line: "Table 2." (and its title beside
    it), or a line going on with one, whose first line may be above the table ("by education
    system: 2011", "[In thousands]")."""
    filled = [cell.strip() for cell in row if cell.strip()]
    if not filled or _numbers(filled):
        return False
    goes_on = len(filled) == 1 and (filled[0][0].islower() or filled[0][0] in "[(")
    return goes_on or (not after_caption and len(filled) <= 2 and is_caption(filled[0]))


def _note_line(row: list[str]) -> bool:
    """Whether a grid row is a note under a table: one cell, a note's opening or prose."""
    filled = [cell.strip() for cell in row if cell.strip()]
    return len(filled) == 1 and (bool(NOTE.match(filled[0])) or len(filled[0]) > PROSE_LINE)


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
    better = [_repaired(t.df.values.tolist()) for t in again if t.shape[1] > 1]
    return better[0] if better else cells


def without_leaders(cells: list[list[str]]) -> list[list[str]]:
    """The grid with cells of only leader dots (". . . ." between a label and its numbers) put
    back at the end of the label before them, which ends in dots too (a lone ".." after a
    number or a word marks a missing value), and the columns this leaves empty dropped."""
    rows = [[str(c) for c in row] for row in cells]
    for row in rows:
        label = -1  # the cell the leaders after it belong to
        for n, cell in enumerate(row):
            if not LEADER.fullmatch(cell):
                label = n if cell.strip() else label
            elif label >= 0 and row[label].rstrip().endswith("."):
                row[label], row[n] = f"{row[label]} {cell.strip()}", ""
    keep = [n for n in range(len(rows[0]) if rows else 0) if any(row[n].strip() for row in rows)]
    return [[row[n] for n in keep] for row in rows] if keep else rows


def _repaired(cells: list[list[str]]) -> list[list[str]]:
    """A whitespace (stream) table's grid with what reading by whitespace got wrong put right:
    columns read as one (:func:`spread`), wrapped headers (:func:`wrapped_header`), wrapped text
    (:func:`unwrapped`) and labels a line off their values (:func:`labelled`)."""
    return labelled(unwrapped(wrapped_header(spread(cells))))


def spread(cells: list[list[str]]) -> list[list[str]]:
    """A whitespace grid with the cells that hold several columns' texts apart by wide gaps
    ("PK–12      PK–8      9–12", a header whose columns were read as one) spread over the
    empty cells around them, when there are as many of those as texts."""
    rows = [[str(c) for c in row] for row in cells]
    for row in rows:
        for n, cell in enumerate(row):
            parts = [part for part in WIDE_GAP.split(cell.strip()) if part]
            if len(parts) < 2:
                continue
            first, last = n, n
            while first > 0 and not row[first - 1].strip():
                first -= 1
            while last + 1 < len(row) and not row[last + 1].strip():
                last += 1
            if last - first + 1 == len(parts):
                row[first : last + 1] = parts
    return rows


def wrapped_header(cells: list[list[str]]) -> list[list[str]]:
    """A whitespace grid with its header's wrapped lines joined: above the first row of numbers,
    a row of words goes into the row under it when every cell it fills has text under it and
    none spans columns (a cell whose neighbours are empty over a row that fills them: "Stroke"
    over "no. | Rate | (95% CI)" stays a row of its own)."""
    rows = [[str(c) for c in row] for row in cells]
    first_data = next((n for n, row in enumerate(rows) if _numbers(row[1:])), 0)
    if first_data > HEADER_LINES:  # no header this deep: the numbers are not where data starts
        return rows
    n = 0
    while n + 1 < first_data:
        upper, lower = rows[n], rows[n + 1]
        filled = [c for c, cell in enumerate(upper) if cell.strip()]
        if filled and all(lower[c].strip() and not _spans(upper, lower, c) for c in filled):
            rows[n + 1] = [
                f"{a}\n{b}" if a.strip() else b for a, b in zip(upper, lower, strict=True)
            ]
            del rows[n]
            first_data -= 1
        else:
            n += 1
    return rows


def _numbers(cells: list[str]) -> bool:
    return any(NUMBER.fullmatch(cell.strip()) for cell in cells)


def _spans(upper: list[str], lower: list[str], c: int) -> bool:
    """Whether the cell at column ``c`` of a header row spans the columns on both sides of it:
    they are empty in its row and filled in the row under it."""
    if not 0 < c < len(upper) - 1:  # centred over columns, a spanning cell has both beside it
        return False
    return all(not upper[n].strip() and lower[n].strip() for n in (c - 1, c + 1))


def labelled(cells: list[list[str]]) -> list[list[str]]:
    """A whitespace grid with the rows that hold only a label (a first cell) just above and
    just below a row of numbers without one put into it as its label, in order: whitespace
    reading set a label a line off its values, or split a label of two lines around them."""
    rows = [[str(c) for c in row] for row in cells]

    def label_only(n: int) -> bool:
        return 0 <= n < len(rows) and bool(rows[n][0].strip()) and not "".join(rows[n][1:]).strip()

    taken: set[int] = set()
    for m, row in enumerate(rows):
        if m in taken or not _unlabelled_numbers(row):
            continue
        around = [n for n in (m - 1, m + 1) if n not in taken and label_only(n)]
        if around:
            row[0] = "\n".join(rows[n][0] for n in around)
            taken.update(around)
    return [row for n, row in enumerate(rows) if n not in taken]


def _unlabelled_numbers(row: list[str]) -> bool:
    values = [cell.strip() for cell in row[1:] if cell.strip()]
    return not row[0].strip() and bool(values) and all(NUMBER.fullmatch(v) for v in values)


def unwrapped(cells: list[list[str]]) -> list[list[str]]:
    """A whitespace table's grid with the lines of wrapped text cells joined again: a row with
    an empty first cell and only words, under words of the last row with a first cell,
    continues that row's cells (whitespace reading sets each line on a row of its own)."""
    rows: list[list[str]] = []
    anchor: list[str] | None = None  # the last row with a first cell
    for row in ([str(c) for c in row] for row in cells):
        filled = [n for n, cell in enumerate(row) if cell.strip()]
        if (
            anchor is not None
            and filled
            and not row[0].strip()
            and all(_words(anchor[n]) and _words(row[n]) for n in filled)
        ):
            for n in filled:
                anchor[n] = f"{anchor[n]}\n{row[n]}"
            continue
        rows.append(row)
        anchor = row if row[0].strip() else None
    return rows


def _words(cell: str) -> bool:
    """Whether a cell's (last) line is words: letters, not a number or a sign."""
    line = cell.strip().split("\n")[-1]
    return any(ch.isalpha() for ch in line) and not NUMBER.fullmatch(line)


def _tabular(cells: list[list[str]]) -> bool:
    """Columns of prose (multi-column pages) are not tables: a table's cells are short or
    numeric."""
    filled = [str(c).strip() for row in cells for c in row if str(c).strip()]
    if not filled:
        return False
    numeric = sum(any(ch.isdigit() for ch in c) for c in filled) / len(filled)
    mean_length = sum(len(c) for c in filled) / len(filled)
    return numeric >= 0.25 or mean_length <= STREAM_MAX_MEAN_CELL

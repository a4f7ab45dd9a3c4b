"""A table's grid as whitespace reading gives it, put right: pure functions over rows of cell
texts. Leader dots go back to their label, columns read as one cell are spread, a header wrapped
over lines is one row, wrapped text and labels a line off their values rejoin their row; and the
rows that are no part of a table (a caption's lines, notes, a column of the page's prose) are
told apart."""

from __future__ import annotations

import re

from kgp.ingest.tables import is_caption
from kgp.ingest.text import printed_within

NUMBER = re.compile(r"[-+–(]?[$€£]?\d[\d,.]*(?:%|[KMB]|bn)?\)?")  # a number as tables print it
WIDE_GAP = re.compile(r" {3,}")  # spaces between two columns' texts in one cell
LEADER = re.compile(r"\s*(\.\s*)+")  # a cell of leader dots only
NOTE = re.compile(r"(?:notes?\b|sources?\b|abbreviations?\b|see notes|[*†‡§]|[—–] ?[A-Z])", re.I)
PROSE_LINE = 60  # characters: a longer line in a whitespace table's cell is prose
PROSE_COLUMN_LINE = 50  # ... and a column with half its lines longer is the page's text beside it
HEADER_LINES = 6  # a wrapped header has at most this many lines
STREAM_MIN_ROWS = 3  # rows (and columns) a whitespace table has at least
STREAM_MAX_MEAN_CELL = 20.0  # characters: a table of words has cells this short on average
FORM_LABEL = re.compile(r"[A-Z][A-Za-z .&/()\-]{2,40}:(?:\s|$)")  # "SOIL DESCRIPTION: ..."


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


def repaired(cells: list[list[str]]) -> list[list[str]]:
    """A whitespace (stream) table's grid with what reading by whitespace got wrong put right:
    columns read as one (:func:`spread`), wrapped headers (:func:`wrapped_header`), wrapped text
    (:func:`unwrapped`), labels a line off their values (:func:`labelled`) and blocks of one
    table side by side (:func:`restacked`)."""
    return restacked(labelled(unwrapped(wrapped_header(spread(printed_once(cells))))))


def printed_once(cells: list[list[str]]) -> list[list[str]]:
    """A grid whose text the PDF prints twice (a bold look by overprinting: "Kruger\nKruger",
    "1 9\n1.9", one copy missing characters) with each cell's text once, the fuller copy; only
    where most filled cells are so printed (two lines of one row's band that read the same
    otherwise are two lines)."""
    filled = [cell for row in cells for cell in row if cell.strip()]
    twice = {cell for cell in filled if _twice(cell)}
    if not filled or 2 * sum(cell in twice for cell in filled) < len(filled):
        return cells
    return [[_once(cell) if cell in twice else cell for cell in row] for row in cells]


def _twice(cell: str) -> bool:
    """Whether a cell's two lines are one text printed twice, one copy perhaps missing
    characters (the other's letters and digits hold its own in order)."""
    lines = cell.strip().split("\n")
    if len(lines) != 2:
        return False
    short, long = sorted(lines, key=lambda line: len(line.replace(" ", "")))
    return any(ch.isalnum() for ch in short) and printed_within(short, long)


def _once(cell: str) -> str:
    return max(cell.strip().split("\n"), key=lambda line: len(line.replace(" ", "")))


def restacked(cells: list[list[str]]) -> list[list[str]]:
    """A grid of one table set in blocks side by side ("Age | Total | Age | Total": ages 0–39,
    then 40–79 beside them) as the one table: its first row a header whose labels repeat every
    few columns (two or more), each block opening with a column of labels, the blocks' rows
    under one header, block after block."""
    if not cells or len(cells) < 2:
        return cells
    header, width = [c.strip() for c in cells[0]], len(cells[0])
    if not header[0]:
        return cells
    for size in range(2, width // 2 + 1):
        if width % size:
            continue
        if any(header[n] != header[n % size] for n in range(width)):
            continue
        blocks = [[row[b : b + size] for row in cells[1:]] for b in range(0, width, size)]
        if all(_labels([row[0] for row in block]) for block in blocks):
            rows = [row for block in blocks for row in block if any(c.strip() for c in row)]
            return [cells[0][:size], *rows]
    return cells


def _labels(column: list[str]) -> bool:
    """Whether a column's filled cells are labels: four in five of them not numbers."""
    filled = _texts(column)
    return bool(filled) and sum(not NUMBER.fullmatch(c) for c in filled) >= 0.8 * len(filled)


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
    first_data = next((n for n, row in enumerate(rows) if numbers(row[1:])), 0)
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


def _texts(cells: list[str]) -> list[str]:
    """The texts of the filled cells, stripped."""
    return [str(cell).strip() for cell in cells if str(cell).strip()]


def numbers(cells: list[str]) -> bool:
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
    values = _texts(row[1:])
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


def tabular(cells: list[list[str]]) -> bool:
    """Columns of prose (multi-column pages) are not tables: a table's cells are short or
    numeric."""
    filled = [text for row in cells for text in _texts(row)]
    if not filled:
        return False
    numeric = sum(any(ch.isdigit() for ch in c) for c in filled) / len(filled)
    mean_length = sum(len(c) for c in filled) / len(filled)
    return numeric >= 0.25 or mean_length <= STREAM_MAX_MEAN_CELL


def caption_line(row: list[str], *, top: bool) -> bool:
    """Whether a grid row at a table's top (its ``top`` row, or one under caption lines) is a
    caption's line: "Table 2." (and its title beside it) as the first row, or a line going on
    with a caption whose first line may be above the table ("by education system: 2011",
    "[In thousands]")."""
    filled = _texts(row)
    if not filled or numbers(filled):
        return False
    goes_on = len(filled) == 1 and (filled[0][0].islower() or filled[0][0] in "[(")
    return goes_on or (top and len(filled) <= 2 and is_caption(filled[0]))


def form_rows(cells: list[list[str]]) -> int:
    """How many rows at a whitespace table's top are a form above it rather than its rows: up
    to the last row opening with a label ("SOIL DESCRIPTION:", "SEEDED - RATE:") among those
    above its first row with half its columns filled, where two rows or more are labelled (a
    trial report's conditions above its results); 0 otherwise."""
    dense = next((n for n, row in enumerate(cells) if 2 * len(_texts(row)) >= len(row)), len(cells))
    labelled = [n for n, row in enumerate(cells[:dense]) if _label(row)]
    return labelled[-1] + 1 if len(labelled) >= 2 else 0


def _label(row: list[str]) -> bool:
    filled = _texts(row)
    return bool(filled) and FORM_LABEL.match(filled[0]) is not None


def note_line(row: list[str]) -> bool:
    """Whether a grid row is a note under a table: one cell, a note's opening or prose."""
    filled = _texts(row)
    return len(filled) == 1 and (bool(NOTE.match(filled[0])) or len(filled[0]) > PROSE_LINE)


def prose_column(column: list[str]) -> bool:
    """Whether a whitespace table's column is a column of the page's prose: lines as long as a
    text column's (half of them over ``PROSE_COLUMN_LINE`` characters), no number among them."""
    filled = _texts(column)
    long = sum(len(cell) > PROSE_COLUMN_LINE for cell in filled)
    return len(filled) >= STREAM_MIN_ROWS and 2 * long >= len(filled) and not numbers(filled)

"""Tables typed in a fixed-width font: a plain-text report printed to PDF, where a table is lines
of characters whose columns are lined up by spaces, with leader dots and a rule of dashes.

Neither camelot nor PyMuPDF sees such a table: each printed line is one run of text, spaces
included. Here a page's lines in a fixed-width font are set back on a grid of characters, and a
table is a run of lines with three fields or more (fields part at two spaces or more), under up
to ``HEADER_LINES`` indented header lines; its columns are the character positions blank in all
of its data rows. Pure functions over plain data."""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Box = tuple[float, float, float, float]  # x0, top, x1, bottom

MONOSPACED = 8  # PyMuPDF's span flag for a fixed-width font
MIN_ROWS = 3  # data rows a typed table has at least
MIN_COLS = 3  # fields a data row has at least, and columns a table
HEADER_LINES = 3  # at most this many header lines above a table's first row
LINE_GAP = 1.6  # a gap over this many line pitches is a blank line: the table ends there
RULE = re.compile(r"\s*[-=_]{10,}[-=_ ]*")  # a rule line of dashes
LEADERS = re.compile(r"(?<=\s)\.{3,}|(?<=\s)(?:\. ){2,}\.")  # ". . . ." after a label
FIELD = re.compile(r"\S+(?: \S+)*")  # text between runs of two spaces or more
NUMBER = re.compile(r"[-+–(]?[$€£]?\d[\d,.]*%?\)?")


@dataclass(frozen=True, slots=True)
class TypedLine:
    """A line of a page in a fixed-width font: its box and its text set on the page's grid of
    characters (a character's column is its distance from the page's left edge of text)."""

    box: Box
    text: str


def _monospaced(span: dict[str, Any]) -> bool:
    font = str(span.get("font", "")).lower()
    return bool(int(span.get("flags", 0)) & MONOSPACED) or "courier" in font or "mono" in font


def typed_lines(layout: dict[str, Any]) -> list[TypedLine]:
    """A page's lines set wholly in a fixed-width font (from its PyMuPDF "dict"), top to bottom,
    each as text on one grid of characters."""
    lines = [
        line
        for block in layout.get("blocks", [])
        for line in block.get("lines", [])
        if line["spans"] and all(_monospaced(s) or not s["text"].strip() for s in line["spans"])
    ]
    widths = [
        (s["bbox"][2] - s["bbox"][0]) / len(s["text"])
        for line in lines
        for s in line["spans"]
        if len(s["text"]) >= 4
    ]
    if not widths:
        return []
    width = statistics.median(widths)
    left = min(line["bbox"][0] for line in lines)
    out = []
    for line in sorted(lines, key=lambda line: (line["bbox"][1], line["bbox"][0])):
        text = ""
        for span in line["spans"]:
            at = round((span["bbox"][0] - left) / width)
            text = text.ljust(at) + span["text"] if at > len(text) else text + span["text"]
        out.append(TypedLine(tuple(line["bbox"]), text.rstrip()))
    return out


def fixed_width_tables(lines: list[TypedLine]) -> list[tuple[Box, list[list[str]]]]:
    """The tables among a page's typed lines (:func:`typed_lines`): each one's box and grid,
    its header lines first."""
    if len(lines) < MIN_ROWS:
        return []
    tops = [line.box[1] for line in lines]
    pitch = statistics.median(b - a for a, b in itertools.pairwise(tops))
    found = []
    for first, last in _runs(lines, pitch):
        top = first
        while (
            first - top < HEADER_LINES
            and top > 0
            and lines[top].box[1] - lines[top - 1].box[1] <= LINE_GAP * pitch
            and _heading(lines[top - 1].text)
        ):
            top -= 1
        grid = _grid([_blanked(line.text) for line in lines[top : last + 1]], first - top)
        if grid:
            block = lines[top : last + 1]
            box = (
                min(line.box[0] for line in block),
                block[0].box[1],
                max(line.box[2] for line in block),
                block[-1].box[3],
            )
            found.append((box, grid))
    return found


def _runs(lines: list[TypedLine], pitch: float) -> Iterator[tuple[int, int]]:
    """(first, last) of each run of consecutive lines that are rows or rules, with no blank
    line between them, holding ``MIN_ROWS`` rows or more."""
    start = None
    for n, line in enumerate([*lines, None]):
        joined = (
            line is not None
            and start is not None
            and line.box[1] - lines[n - 1].box[1] <= LINE_GAP * pitch
        )
        is_part = line is not None and (_row(line.text) or bool(RULE.fullmatch(line.text)))
        if start is not None and not (joined and is_part):
            if sum(_row(lines[k].text) for k in range(start, n)) >= MIN_ROWS:
                yield start, n - 1
            start = None
        if start is None and is_part:
            start = n


def _blanked(text: str) -> str:
    """A line with its leader dots turned to spaces, its characters where they were."""
    return LEADERS.sub(lambda m: " " * len(m.group()), text)


def _row(text: str) -> bool:
    return len(FIELD.findall(_blanked(text))) >= MIN_COLS


def _heading(text: str) -> bool:
    """Whether a line just above a table reads as a header line: indented, or in fields."""
    return (
        bool(text.strip())
        and not RULE.fullmatch(text)
        and (text.startswith("  ") or len(FIELD.findall(text)) >= 2)
    )


def _grid(texts: list[str], headers: int) -> list[list[str]]:
    """The cells of a typed table's lines (the first ``headers`` are header lines, or all those
    above a rule of dashes), rules left out; [] when its data rows do not line up in
    ``MIN_COLS`` columns or more."""
    rule = next((n for n, t in enumerate(texts) if RULE.fullmatch(t)), None)
    if rule is not None and sum(_row(t) for t in texts[rule + 1 :]) >= MIN_ROWS:
        headers = rule + 1  # the lines above a rule of dashes are the header
    columns = _columns([t for t in texts[headers:] if not RULE.fullmatch(t)])
    if len(columns) < MIN_COLS:
        return []
    grid = []
    for text in texts:
        if RULE.fullmatch(text):
            continue
        row = [""] * len(columns)
        for part, at in _parts(text):
            n = _column(columns, at, at + len(part) - 1)
            row[n] = f"{row[n]} {part}".strip()
        grid.append(row)
    return grid


def _columns(rows: list[str]) -> list[tuple[int, int]]:
    """The (first, last) character positions of each column of data rows: runs of positions
    where some row has a character, parted by positions blank in every row (one blank position
    parts two columns only where numbers stand on both sides of it in every row)."""
    width = max((len(r) for r in rows), default=0)
    filled = [any(n < len(r) and r[n] != " " for r in rows) for n in range(width)]
    spans: list[tuple[int, int]] = []
    for n, used in enumerate(filled):
        if not used:
            continue
        touching = spans and spans[-1][1] == n - 1
        if touching or (spans and n - spans[-1][1] == 2 and not _numbers_apart(rows, n - 1)):
            spans[-1] = (spans[-1][0], n)
        else:
            spans.append((n, n))
    return spans


def _numbers_apart(rows: list[str], gap: int) -> bool:
    """Whether, in every row with text on both sides of the blank position ``gap``, that text is
    numbers (right-aligned figures one space apart), not the words of one label."""
    for row in rows:
        before = row[:gap].split()[-1:] if gap < len(row) and row[gap - 1] != " " else []
        after = row[gap + 1 :].split()[:1] if gap + 1 < len(row) and row[gap + 1] != " " else []
        if before and after and not (NUMBER.fullmatch(before[0]) and NUMBER.fullmatch(after[0])):
            return False
    return True


def _parts(text: str) -> Iterator[tuple[str, int]]:
    """A line's fields with where each starts; a field of numbers one space apart is one part
    per number (a spanning header such as "Design effect" stays whole)."""
    for field in FIELD.finditer(text):
        words = field.group().split(" ")
        if len(words) > 1 and all(NUMBER.fullmatch(w) for w in words):
            at = field.start()
            for word in words:
                yield word, at
                at += len(word) + 1
        else:
            yield field.group(), field.start()


def _column(columns: list[tuple[int, int]], first: int, last: int) -> int:
    """The column a text at character positions first..last belongs to: the one it overlaps
    most, or else the nearest."""

    def fit(n: int) -> tuple[int, int]:
        a, b = columns[n]
        shared = min(b, last) - max(a, first) + 1
        distance = max(a - last, first - b, 0)
        return (shared, -distance)

    return max(range(len(columns)), key=fit)

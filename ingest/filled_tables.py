"""Tables drawn as filled cells: each cell a coloured rectangle, white gaps between them and no
rules, which camelot's lattice (it looks for lines) reads wrong or not at all.

A page's filled rectangles that lie inside no other are its cells' backgrounds; where they line
up in rows and columns (``MIN_ROWS`` by ``MIN_COLS`` or more, every row with a cell in every
column) they are a table, and each cell's text is the words inside its rectangle. Pure
functions over PyMuPDF's drawings and words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Box = tuple[float, float, float, float]  # x0, top, x1, bottom

MIN_ROWS = 2
MIN_COLS = 2
MIN_SIDE = 8.0  # points: a smaller rectangle is a rule or a mark, not a cell
EDGE = 3.0  # points: edges this close are one
WHITE = 0.97  # a fill this light in every channel is the page's background


def filled_cells(drawings: Sequence[dict[str, Any]]) -> list[Box]:
    """The filled, coloured rectangles of a page's drawings that lie inside no other."""
    boxes = []
    for drawing in drawings:
        fill, rect = drawing.get("fill"), drawing.get("rect")
        if not fill or rect is None or all(channel >= WHITE for channel in fill):
            continue
        box = (float(rect.x0), float(rect.y0), float(rect.x1), float(rect.y1))
        if box[2] - box[0] >= MIN_SIDE and box[3] - box[1] >= MIN_SIDE:
            boxes.append(box)
    unique = sorted(set(boxes))
    return [b for b in unique if not any(o != b and _inside(b, o) for o in unique)]


def filled_tables(
    cells: list[Box], words: Sequence[Sequence[Any]]
) -> list[tuple[Box, list[list[str]]]]:
    """The tables the cells (:func:`filled_cells`) make, each with its box and its grid, from
    the page's words (PyMuPDF's "words": x0, top, x1, bottom, text, block, line, word)."""
    found = []
    for group in _groups(cells):
        rows = _bands([(b[1], b[3]) for b in group])
        cols = _bands([(b[0], b[2]) for b in group])
        if len(rows) < MIN_ROWS or len(cols) < MIN_COLS:
            continue
        at = {(_index(rows, (b[1], b[3])), _index(cols, (b[0], b[2]))): b for b in group}
        if len(at) != len(rows) * len(cols):
            continue  # not every row has a cell in every column: no grid
        grid = [[_text(at[r, c], words) for c in range(len(cols))] for r in range(len(rows))]
        if sum(bool(cell) for row in grid for cell in row) * 2 < len(at):
            continue
        box = (cols[0][0], rows[0][0], cols[-1][1], rows[-1][1])
        found.append((box, grid))
    return found


def _inside(inner: Box, outer: Box) -> bool:
    return (
        inner[0] >= outer[0] - 1
        and inner[1] >= outer[1] - 1
        and inner[2] <= outer[2] + 1
        and inner[3] <= outer[3] + 1
    )


def _groups(cells: list[Box]) -> list[list[Box]]:
    """Cells in groups that touch or nearly touch (a gap of ``EDGE`` or less between them)."""
    groups: list[list[Box]] = []
    for cell in sorted(cells, key=lambda b: (b[1], b[0])):
        near = [g for g in groups if any(_near(cell, other) for other in g)]
        merged = [cell] + [c for g in near for c in g]
        groups = [g for g in groups if g not in near] + [merged]
    return groups


def _near(a: Box, b: Box) -> bool:
    return (
        a[0] <= b[2] + EDGE and b[0] <= a[2] + EDGE and a[1] <= b[3] + EDGE and b[1] <= a[3] + EDGE
    )


def _bands(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The distinct spans (rows' tops and bottoms, or columns' sides), edges within ``EDGE``."""
    bands: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if not any(abs(start - s) <= EDGE and abs(end - e) <= EDGE for s, e in bands):
            bands.append((start, end))
    return bands


def _index(bands: list[tuple[float, float]], span: tuple[float, float]) -> int:
    return next(
        n for n, (s, e) in enumerate(bands) if abs(span[0] - s) <= EDGE and abs(span[1] - e) <= EDGE
    )


def _text(box: Box, words: Sequence[Sequence[Any]]) -> str:
    """The words whose centres lie in ``box``, a line of the cell per line of text."""
    lines: dict[tuple[int, int], list[tuple[float, float, str]]] = {}
    for word in words:
        cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
        if box[0] <= cx <= box[2] and box[1] <= cy <= box[3]:
            lines.setdefault((int(word[5]), int(word[6])), []).append((word[1], word[0], word[4]))
    ordered = sorted(lines.values(), key=lambda parts: (min(p[0] for p in parts), parts[0][1]))
    return "\n".join(" ".join(str(p[2]) for p in parts) for parts in ordered)

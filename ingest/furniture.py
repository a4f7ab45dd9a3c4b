"""Page furniture: the lines in a page's margins that are no part of its text, a page number
("10", "- 41 -", "Page 3 of 12", a volume's "47699") or a running head or foot (the same line
on many pages, numbers aside: "Federal Register / Vol. 85, No. 152 / ... / Proposed Rules"), at
the top, the bottom or down a side. Kept in the text they would become passages of their own,
or glue onto a sentence."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

MARGIN = 0.1  # the share of a page's height at its top and at its bottom where furniture sits
SIDE_REPEATS = 0.2  # beside a page's text, a line on this share of the pages (heads alternate)
SIDE_MIN_LINES = 10  # a page with fewer lines has no body of text to be beside
REPEATS = 0.4  # a margin line on at least this share of the pages (and 3 or more) is furniture
_PAGE_NUMBER = re.compile(
    r"[-–—(\[]?\s*(?:page|p\.|pg\.?)?\s*(?:\d{1,5}|[ivx]{1,6}|\d{1,2}\s*[-–]\s*\d{1,3})"
    r"(?:\s*(?:of|/)\s*\d{1,4})?\s*[-–—)\]]?",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Line:
    """A line of a page: where it sits (its top and bottom, and the page's height) and its text."""

    page: int
    box: tuple[float, float, float, float]  # x0, top, x1, bottom
    text: str
    height: float  # the page's

    def in_margin(self) -> bool:
        band = MARGIN * self.height
        return self.box[3] <= band or self.box[1] >= self.height - band


def shape(text: str) -> str:
    """A line as it repeats from page to page: lower case, numbers alike, spaces collapsed."""
    return _DIGITS.sub("#", " ".join(text.lower().split()))


def furniture(lines: Iterable[Line], pages: int) -> list[Line]:
    """The lines that are furniture: a page number alone in its row at the top or the bottom of
    its page; and a margin row whose every line, words in it, is at the same height on at least
    ``REPEATS`` of the pages (3 or more) or a page number, except where it first appears and is
    not the page's outermost row (a table's header repeated on each page is kept once; a
    table's cell beside others is kept); and a line wholly beside a page's body of text at the
    same height on ``SIDE_REPEATS`` of the pages ("ER", "29,2" and the page number down a
    journal page's outer edge, alternating with another head on the facing pages)."""
    every = [line for line in lines if line.text.strip()]
    by_page: dict[int, list[Line]] = {}
    for line in every:
        by_page.setdefault(line.page, []).append(line)
    margin = [line for line in every if line.in_margin()]
    on_pages = Counter(key for _, key in {(line.page, _placed(line)) for line in margin})
    least = max(3, REPEATS * pages)
    repeated = {
        id(line)
        for line in margin
        if on_pages[_placed(line)] >= least and any(c.isalpha() for c in line.text)
    }
    first: dict[tuple[str, int], int] = {}
    for line in sorted(margin, key=lambda line: line.page):
        first.setdefault(_placed(line), line.page)
    side = [line for lines in by_page.values() for line in _beside_text(lines)]
    on_side = Counter(key for _, key in {(line.page, _placed(line)) for line in side})
    out = [line for line in side if on_side[_placed(line)] >= max(3, SIDE_REPEATS * pages)]
    for line in margin:
        row = [o for o in by_page[line.page] if _same_row(o, line) and not _upright(o)]
        running = any(id(o) in repeated for o in row) and all(
            id(o) in repeated or _PAGE_NUMBER.fullmatch(o.text.strip()) for o in row
        )
        if (
            running and (first[_placed(line)] != line.page or _outer_row(row, by_page[line.page]))
        ) or (  # a page number alone in its row: not a cell of a table's last row
            _PAGE_NUMBER.fullmatch(line.text.strip())
            and len(row) == 1
            and _outer_row(row, by_page[line.page])
        ):
            out.append(line)
    return out


def _outer_row(row: list[Line], page: list[Line]) -> bool:
    """Whether no line of the page lies beyond ``row`` towards the page's nearer edge: a running
    head or foot where it first appears, not a table's header that the next pages repeat; a
    page number, not a number with text under it."""
    top, bottom = min(o.box[1] for o in row), max(o.box[3] for o in row)
    if bottom <= MARGIN * row[0].height:
        return not any(o.box[3] <= top for o in page)
    return not any(o.box[1] >= bottom for o in page)


def _beside_text(page: list[Line]) -> list[Line]:
    """The lines of a page, out of its top and bottom margins, wholly left or right of its body
    of text (the span of nine in ten of its lines' edges): a journal's running head down the
    page's outer edge."""
    if len(page) < SIDE_MIN_LINES:
        return []
    starts = sorted(line.box[0] for line in page)
    ends = sorted(line.box[2] for line in page)
    left, right = starts[len(starts) // 10], ends[len(ends) * 9 // 10]
    return [
        line
        for line in page
        if not line.in_margin() and (line.box[2] < left - 1 or line.box[0] > right + 1)
    ]


def _upright(line: Line) -> bool:
    """Whether a line runs up or down the page (a stamp in the gutter): no part of the rows it
    passes."""
    x0, top, x1, bottom = line.box
    return bottom - top > 2 * (x1 - x0) and len(line.text.strip()) > 2


def _same_row(a: Line, b: Line) -> bool:
    return a.box[1] < b.box[3] and a.box[3] > b.box[1]


def _placed(line: Line) -> tuple[str, int]:
    """A margin line's shape and height on its page, to a few points."""
    return shape(line.text), round(line.box[1] / 4)

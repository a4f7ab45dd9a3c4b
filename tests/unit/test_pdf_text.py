"""A PDF page's text when the page prints it twice: a PostScript driver's bold look sets each
line down twice at the same place, one copy perhaps missing characters (birdisland.pdf)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from kgp.ingest.pdf import PdfReader, footnotes_first, shadows

LINES = [
    "SOIL DESCRIPTION: Canisteo clay loam, mod. well drained, non-irrigated",
    "SEEDED - RATE: May 15 140,000 /A TOP 30 for YIELD of 63 TESTED",
    "Pest pressure was very low, which allowed the plants to utilize every bit of moisture.",
]


def _word(text: str, x0: float, x1: float, block: int, line: int, number: int) -> tuple:
    return (x0, 100.0, x1, 110.0, text, block, line, number)


def test_a_line_printed_twice_is_read_once_and_the_fuller_copy_kept(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    for n, line in enumerate(LINES):
        y = 100 + 20 * n
        page.insert_text((50, y), line, fontsize=9)
        page.insert_text((50, y), line, fontsize=9)  # printed again over itself
    page.insert_text((50, 200), "A line printed once.", fontsize=9)
    doc.save(tmp_path / "bold.pdf")
    pdf = tmp_path / "bold.pdf"

    text = PdfReader().read(pdf, pdf.read_bytes()).pages[0].sections[0].text
    for line in LINES:
        assert text.count(line.split(":")[0].split(".")[0]) == 1, line
    assert "140,000" in text and "A line printed once." in text


def test_a_copy_missing_characters_gives_way_to_the_full_one() -> None:
    """Words as PyMuPDF gives them: "H ft" and "1 9" over "Hefty" and "1.9", the garbled line
    set down first; and two lines beside each other that overlap no word stay."""
    words = [
        _word("H", 82, 87, 0, 0, 0),
        _word("ft", 92, 98, 0, 0, 1),
        _word("1", 272, 276, 0, 0, 2),
        _word("9", 279, 283, 0, 0, 3),
        _word("Hefty", 82, 102, 0, 1, 0),
        _word("1.9", 272, 283, 0, 1, 1),
        _word("Kruger", 120, 145, 1, 0, 0),
        _word("K2-1901", 154, 184, 1, 0, 1),
    ]
    assert shadows(words) == {0, 1, 2, 3}
    assert shadows(words[4:]) == set()  # text printed once: nothing hidden


def _words(block: int, top: float, size: float, text: str) -> list[tuple]:
    """A block's words, one line, each word 30 points wide, ``size`` points high."""
    return [
        (50.0 + 30 * n, top, 78.0 + 30 * n, top + size, word, block, 0, n)
        for n, word in enumerate(text.split())
    ]


def test_footnotes_a_page_sets_before_its_body_are_read_after_it() -> None:
    """The Federal Register writes a page's footnotes first: blocks that open with a mark, in
    smaller type, low on the page, before the body's blocks; a footer is no footnote."""
    body = "Hatta International Airport in Jakarta, resulting in 189 fatalities and more words"
    words = [
        *_words(0, 400, 7, "1 Preliminary KNKT.18.10.35.04 Aircraft Accident Investigation Report"),
        *_words(1, 480, 7, "2 The flight control system for 737 MAX airplanes includes two"),
        *_words(2, 60, 9, body),
        *_words(3, 120, 9, body),
        *_words(4, 760, 7, "48 Bureau Veritas January 2020"),
    ]
    assert footnotes_first(words, 792.0) == {0, 1}
    in_order = [*_words(2, 60, 9, body), *_words(0, 400, 7, "1 A note under the body.")]
    assert footnotes_first(in_order, 792.0) == set()  # already after the body

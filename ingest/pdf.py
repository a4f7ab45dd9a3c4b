"""PDF reader: text per page in reading order with PyMuPDF, tables with camelot
(:mod:`kgp.ingest.pdf_tables`), drawn as filled cells from the page's rectangles
(:mod:`kgp.ingest.filled_tables`) or typed in a fixed-width font by character columns
(:mod:`kgp.ingest.fixed_width`), rendered as Markdown; a table's words are kept out of its page's
text so they are not indexed twice, page numbers and running heads out of every page's
(:mod:`kgp.ingest.furniture`), and words hyphenated at a line's end are made whole. Pages
without a text layer are read by OCR where Tesseract's data is installed
(:mod:`kgp.ingest.ocr`)."""

from __future__ import annotations

import itertools
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from kgp.errors import DocumentError
from kgp.ingest.document import Page, ReadDocument, Section
from kgp.ingest.filled_tables import filled_cells, filled_tables
from kgp.ingest.fixed_width import fixed_width_tables, typed_lines
from kgp.ingest.furniture import MARGIN, Line, furniture
from kgp.ingest.ocr import read_scans, tessdata, unread_reason
from kgp.ingest.pdf_tables import (
    Box,
    FoundTable,
    Grid,
    camelot_tables,
    carry_headers,
    headed,
    numbered,
    one_reading,
)
from kgp.ingest.tables import is_caption
from kgp.ingest.text import dehyphenated, printed_within
from kgp.ingest.titles import choose_title


def _inside(word: Sequence[Any], boxes: list[Box]) -> bool:
    """Whether the centre of ``word`` (a word's or a line's box first) lies in one of ``boxes``."""
    cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
    return any(
        x0 - 1 <= cx <= x1 + 1 and top - 1 <= cy <= bottom + 1 for x0, top, x1, bottom in boxes
    )


def _text_lines(layout: dict[str, Any]) -> Iterator[tuple[Box, str]]:
    """Each text line of a page's "dict": its box and its text."""
    for block in layout.get("blocks", []):
        for line in block.get("lines", []):
            yield tuple(line["bbox"]), "".join(s["text"] for s in line["spans"])


def _lines(doc: Any, layout: Callable[[int], dict[str, Any]]) -> list[Line]:
    """Every text line of every page, where it sits (``layout``: a page's "dict" by number)."""
    return [
        Line(number, box, text, height)
        for number in range(1, doc.page_count + 1)
        for height in [float(doc[number - 1].rect.height)]
        for box, text in _text_lines(layout(number))
    ]


def _page_text(
    text: Callable[[str], Any],
    layout: Callable[[], dict[str, Any]],
    boxes: list[Box],
    skip: list[Box],
) -> str:
    """Reading-order text of a page (``text`` is its ``get_text``, ``layout`` gives its "dict")
    without the words inside table boxes, without the lines inside the boxes of ``skip`` (its
    furniture), with words the page prints twice (:func:`shadows`) read once, and with its
    footnotes after its body where the page sets them first (:func:`footnotes_first`)."""
    words = text("words")
    hidden, notes = shadows(words), footnotes_first(words, float(layout().get("height", 0.0)))
    if not boxes and not skip and not hidden and not notes:
        return str(text("text"))
    if not boxes and not hidden and not notes:  # PyMuPDF's text, line by line, less furniture
        return "".join(f"{text}\n" for box, text in _text_lines(layout()) if not _inside(box, skip))
    lines: dict[tuple[int, int], list[str]] = {}
    blocks: dict[int, list[tuple[int, int]]] = {}
    for n, word in enumerate(words):
        if n in hidden or _inside(word, boxes) or _inside(word, skip):
            continue
        key = (word[5], word[6])
        if key not in lines:
            lines[key] = []
            blocks.setdefault(word[5], []).append(key)
        lines[key].append(word[4])
    order = sorted(blocks, key=lambda block: block in notes)  # (a stable sort: notes last)
    return "\n\n".join("\n".join(" ".join(lines[key]) for key in blocks[b]) for b in order)


NOTE_MARK = re.compile(r"(?:\d{1,3}|[*†‡§])")  # a footnote's first word
NOTE_SIZE = 0.9  # a footnote's words are at most this share of the height of the page's text


def _opens_with_mark(block: list[Sequence[Any]]) -> bool:
    return NOTE_MARK.fullmatch(str(min(block, key=lambda word: (word[6], word[7]))[4])) is not None


def footnotes_first(words: Sequence[Sequence[Any]], height: float) -> set[int]:
    """The blocks (PyMuPDF's block numbers of "words") that are footnotes set before the page's
    body text, as some typesetters write them (the Federal Register): blocks that open with a
    note's mark ("1", "*"), begin below the page's top third and above its bottom margin (a
    footer's), and whose words are smaller than most of the page's others, where a block of the
    body's size comes after one of them; else none."""
    blocks: dict[int, list[Sequence[Any]]] = {}
    for word in words:
        blocks.setdefault(word[5], []).append(word)
    marked = {number for number, block in blocks.items() if _opens_with_mark(block)}
    sizes: dict[float, int] = {}  # characters by the height of their word, outside marked blocks
    for number, block in blocks.items():
        for word in block if number not in marked else ():
            size = round(word[3] - word[1], 1)
            sizes[size] = sizes.get(size, 0) + len(word[4])
    if not sizes or not height:
        return set()
    body = max(sizes, key=lambda size: sizes[size])

    def small(block: list[Sequence[Any]]) -> bool:
        heights = sorted(float(word[3] - word[1]) for word in block)
        return heights[len(heights) // 2] < NOTE_SIZE * body

    notes = [
        number
        for number in marked
        if len(blocks[number]) > 3
        and height / 3 < min(word[1] for word in blocks[number]) < (1 - MARGIN) * height
        and small(blocks[number])
    ]
    order = list(blocks)
    first = next((n for n, number in enumerate(order) if number in notes), len(order))
    return set(notes) if any(not small(blocks[b]) for b in order[first + 1 :]) else set()


SHADOW_INSIDE = 0.7  # a word this much inside another that reads the same is printed over it


def shadows(words: Sequence[Sequence[Any]]) -> set[int]:
    """The indices of a page's words (PyMuPDF's "words") on lines printed over another line: a
    PDF that prints its text twice for a bold look (a PostScript driver's), one copy perhaps
    missing characters ("H ft" over "Hefty", "1 9" over "1.9"). Lines are read fullest first
    (the most letters and digits, then characters; of equals, the first set down), and a line
    is a shadow when each of its words lies mostly inside a word of a line read before it, on
    the same baseline, whose letters and digits hold its own in order."""
    lines: dict[tuple[int, int], list[int]] = {}
    rows: dict[int, list[int]] = {}
    for n, word in enumerate(words):
        lines.setdefault((word[5], word[6]), []).append(n)
        rows.setdefault(round(word[3]), []).append(n)
    line_of = {n: key for key, members in lines.items() for n in members}
    under: dict[int, set[tuple[int, int]]] = {}  # a word -> the other lines it is printed over
    for baseline, row in rows.items():  # (and the row a point below: a baseline rounded apart)
        near = sorted(row + rows.get(baseline + 1, []), key=lambda n: words[n][0])
        for i, a in enumerate(near):
            for b in near[i + 1 :]:
                if words[b][0] >= words[a][2]:
                    break  # (sorted by their left edge: no later word reaches a)
                if line_of[a] == line_of[b]:
                    continue
                for shadow, over in ((a, b), (b, a)):
                    if _printed_over(words[shadow], words[over]):
                        under.setdefault(shadow, set()).add(line_of[over])
    hidden: set[int] = set()
    kept: set[tuple[int, int]] = set()

    def fullness(key: tuple[int, int]) -> tuple[int, int, tuple[int, int]]:
        texts = [words[n][4] for n in lines[key]]
        return -sum(ch.isalnum() for t in texts for ch in t), -sum(map(len, texts)), key

    fullest = sorted(lines, key=fullness)
    for key in fullest:  # a line is read unless each of its words is over one of a line kept
        if all(under.get(n, set()) & kept for n in lines[key]):
            hidden.update(lines[key])
        else:
            kept.add(key)
    return hidden


def _printed_over(shadow: Sequence[Any], word: Sequence[Any]) -> bool:
    """Whether ``shadow`` lies mostly inside ``word`` and reads as it printed again."""
    (x0, y0, x1, y1, text), area = shadow[:5], (shadow[2] - shadow[0]) * (shadow[3] - shadow[1])
    width = min(x1, word[2]) - max(x0, word[0])
    height = min(y1, word[3]) - max(y0, word[1])
    if width <= 0 or height <= 0 or width * height < SHADOW_INSIDE * area:
        return False
    return printed_within(text, word[4])


def _filled(page: Any) -> list[tuple[Box, list[list[str]]]]:
    """A page's tables drawn as filled cells (:mod:`kgp.ingest.filled_tables`); its words are
    read only where it has such cells."""
    cells = filled_cells(page.get_drawings())
    return filled_tables(cells, page.get_text("words")) if cells else []


CAPTION_GAP = 48.0  # points between a caption line and the table it names, above or below


def _prints_caption(layout: dict[str, Any]) -> bool:
    """Whether a page (its "dict") has a line that reads as a table caption."""
    return any(is_caption(text) for _, text in _text_lines(layout))


def _caption(layout: dict[str, Any], box: Box) -> str:
    """The caption printed just above (or else just below) a table ("Table 2: ..."), from its
    page's "dict"."""
    x0, top, x1, bottom = box
    above: list[tuple[float, str]] = []
    below: list[tuple[float, str]] = []
    for (lx0, ly0, lx1, ly1), raw in _text_lines(layout):
        text = " ".join(raw.split())
        if not is_caption(text) or lx1 < x0 or lx0 > x1:
            continue
        if top - CAPTION_GAP <= ly1 <= top + 2:
            above.append((top - ly1, text))
        elif bottom - 2 <= ly0 <= bottom + CAPTION_GAP:
            below.append((ly0 - bottom, text))
    for found in (above, below):
        if found:
            return min(found)[1]
    return ""


PARAGRAPH_LINES = 3  # a block of more lines is a paragraph, whose lines are no headings


def _title(metadata: dict[str, Any] | None, first: dict[str, Any], path: Path) -> str:
    """The metadata title, else the largest real heading of the first page (``first``: its
    "dict"), else the file name (:func:`kgp.ingest.titles.choose_title`)."""
    return choose_title((metadata or {}).get("title", "") or "", _headings(first), path.stem)


def _headings(page: dict[str, Any]) -> list[tuple[float, str]]:
    """A page's headings as (size, text) in reading order: each block's runs of lines of one
    size stacked one under another, but in a paragraph (a block of more than PARAGRAPH_LINES
    lines whose middle size is the page's text size, the size most of its characters have)
    only a run set larger than the paragraph's text. A line on the baseline of the line before
    starts a run of its own (a heading beside another, a section number before its name); a
    line printed again (a shadow, a bold copy) is read once; a page number beside a heading is
    no part of it."""
    weights: dict[float, int] = {}  # the page's characters by size
    for block in page.get("blocks", []):
        for line in block.get("lines", []):
            size = round(_size(line), 1)
            weights[size] = weights.get(size, 0) + len(_line_text(line))
    text_size = max(weights, key=lambda size: weights[size], default=0.0)
    headings: list[tuple[float, str]] = []
    for block in page.get("blocks", []):
        lines: list[tuple[float, float, str]] = []  # size, baseline, text
        seen: set[str] = set()
        for line in block.get("lines", []):
            text = _line_text(line)
            if text and not text.isdigit() and text not in seen:
                seen.add(text)
                lines.append((_size(line), line["bbox"][3], text))
        if not lines:
            continue
        stacked = [b > a + 1 for (_, a, _), (_, b, _) in itertools.pairwise(lines)]
        sizes = sorted(size for size, _, _ in lines)
        body = sizes[len(sizes) // 2]
        if len(lines) <= PARAGRAPH_LINES or body > text_size + 0.5:
            body = 0.0  # (a block of headings set larger than the page's text is no paragraph)
        runs: list[tuple[float, list[str]]] = []
        for (size, _, text), below in zip(lines, [False, *stacked], strict=True):
            if below and abs(runs[-1][0] - size) <= 0.5:  # a heading set on two lines
                runs[-1][1].append(text)
            else:
                runs.append((size, [text]))
        headings += [(size, " ".join(texts)) for size, texts in runs if size > body + 0.5]
    return headings


def _size(line: dict[str, Any]) -> float:
    return max((span["size"] for span in line["spans"]), default=0.0)


def _line_text(line: dict[str, Any]) -> str:
    return " ".join("".join(span["text"] for span in line["spans"]).split())


class PdfReader:
    """PDF: a page per page; OCR reads scanned pages, or where Tesseract's data is missing the
    document's notices name them (a PDF of nothing else is refused)."""

    kind = "pdf"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        import pymupdf

        try:
            doc = pymupdf.open(stream=data, filetype="pdf")
        except Exception as exc:  # PyMuPDF raises several types for damaged files
            raise DocumentError(
                f"{path}: not a readable PDF ({exc}); re-export or repair it"
            ) from None
        with doc:
            if doc.needs_pass:
                raise DocumentError(
                    f"{path}: encrypted PDF; decrypt it first (e.g. qpdf --decrypt in.pdf out.pdf)"
                )
            if doc.page_count == 0:
                raise DocumentError(f"{path}: PDF without pages")
            heights = {n + 1: float(doc[n].rect.height) for n in range(doc.page_count)}
            found: list[FoundTable] = []
            notices: list[str] = []
            layouts: dict[int, dict[str, Any]] = {}  # each page's "dict", read once

            def layout(number: int) -> dict[str, Any]:
                if number not in layouts:
                    layouts[number] = doc[number - 1].get_text("dict")
                return layouts[number]

            if tables:
                captioned = {n for n in heights if _prints_caption(layout(n))}
                typed: list[Grid] = [
                    (n, box, cells)
                    for n in heights
                    for box, cells in fixed_width_tables(typed_lines(layout(n)))
                ]
                filled: list[Grid] = [
                    (n, box, cells) for n in heights for box, cells in _filled(doc[n - 1])
                ]
                grids: list[Grid] = []
                with tempfile.TemporaryDirectory() as tmp:
                    copy = Path(tmp) / "document.pdf"  # the bytes that were hashed, not the path
                    # (camelot's pdfminer refuses a file whose owner forbids extraction, which
                    # PyMuPDF reads: it is given the same pages without the encryption)
                    encrypted = doc.metadata and doc.metadata.get("encryption")
                    copy.write_bytes(
                        doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_NONE) if encrypted else data
                    )
                    try:
                        grids = camelot_tables(copy, heights, captioned, {t[0] for t in typed})
                    except Exception as exc:  # camelot fails on some damaged pages
                        notices.append(f"tables not read: {' '.join(str(exc).split())[:200]}")
                found = numbered(typed + headed(one_reading(grids, filled)))
            folder = tessdata()
            scans = read_scans(doc, layout, folder)
            for number, (page, textpage) in scans.read.items():
                layouts[number] = page.get_text("dict", textpage=textpage)
            skip: dict[int, list[Box]] = {}
            for line in furniture(_lines(doc, layout), doc.page_count):
                skip.setdefault(line.page, []).append(line.box)
            texts = []
            for number in range(1, doc.page_count + 1):
                boxes = [t.bbox for t in found if t.record.page == number]
                page, textpage = scans.read.get(number, (doc[number - 1], None))
                texts.append(
                    _page_text(
                        partial(page.get_text, textpage=textpage),
                        partial(layout, number),
                        boxes,
                        skip.get(number, []),
                    )
                )
            pages = [
                Page(number, (Section("", text),) if text.strip() else ())
                for number, text in enumerate(dehyphenated(texts), start=1)
            ]
            records = carry_headers(
                [
                    replace(
                        t.record,
                        caption=t.record.caption or _caption(layout(t.record.page), t.bbox),
                    )
                    for t in found
                ],
                [t.bbox for t in found],
                heights,
            )
            title = _title(doc.metadata, layout(1), path)
        unread = unread_reason(scans.unread, folder is not None) if scans.unread else ""
        if not any(p.sections for p in pages) and not found:
            if unread:
                raise DocumentError(f"{path}: no extractable text: {unread}")
            raise DocumentError(
                f"{path}: no extractable text (only images?); run OCR on it first (e.g. ocrmypdf)"
            )
        if unread:
            notices.append(f"{unread}: not read")
        return ReadDocument(title, self.kind, tuple(pages), records, tuple(notices))

"""What the structured readers (Word, PowerPoint, HTML, spreadsheets) share: sections built from
a stream of headings and paragraphs, table grids cleaned and stored as the PDF reader stores its
tables (Markdown ``TableRecord``s, whose rows :mod:`kgp.ingest.tables` makes passages of), a
title picked from candidates, and a damaged file's one-line error. Pure, but for the error."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from kgp.errors import DocumentError
from kgp.ingest.document import Section
from kgp.ingest.tables import markdown_table
from kgp.ingest.titles import junk_title
from kgp.stores.model import TableRecord

# the first bytes of an OLE compound file: an encrypted Office file, or a .doc/.xls/.ppt
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


class Outline:
    """Sections in the making: each heading closes the section before it. A heading with no
    text under it (one followed by a sub-heading, or only by a table) makes no section."""

    def __init__(self) -> None:
        self._sections: list[Section] = []
        self._heading = ""
        self._paragraphs: list[str] = []

    def heading(self, text: str) -> None:
        self._close()
        self._heading = " ".join(text.split())

    def paragraph(self, text: str) -> None:
        if text.strip():
            self._paragraphs.append(text.strip())

    def sections(self) -> tuple[Section, ...]:
        self._close()
        return tuple(self._sections)

    def _close(self) -> None:
        if self._paragraphs:
            self._sections.append(Section(self._heading, "\n\n".join(self._paragraphs)))
        self._paragraphs = []


def clean_grid(rows: Iterable[Sequence[object]]) -> list[list[str]]:
    """Cells as text with their whitespace collapsed, rows padded to one width, and the rows and
    columns without a filled cell dropped (so the first row is the first non-empty one)."""
    cells = [[" ".join(str(c).split()) for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    width = max((len(row) for row in cells), default=0)
    cells = [row + [""] * (width - len(row)) for row in cells]
    kept = [j for j in range(width) if any(row[j] for row in cells)]
    return [[row[j] for j in kept] for row in cells]


def add_table(
    records: list[TableRecord],
    page: int,
    rows: Iterable[Sequence[object]],
    *,
    header: bool = True,
    caption: str = "",
) -> None:
    """Append ``rows`` to ``records`` as the next table of ``page``, stored as the PDF reader
    stores one: Markdown whose first row is the header. A table without a header row gets an
    empty one (its first row is data). A table without a filled cell is not added."""
    cells = clean_grid(rows)
    if not cells:
        return
    grid = cells if header else [[""] * len(cells[0]), *cells]
    index = sum(1 for r in records if r.page == page)
    caption = " ".join(caption.split())
    records.append(
        TableRecord(
            page, index, markdown_table(grid), len(cells), len(cells[0]), caption, header_rows=1
        )
    )


def table_text(rows: Iterable[Sequence[object]]) -> str:
    """A table as lines of text, its filled cells joined by " | " (for ``tables=False``, where
    a table's words stay in the prose as the PDF reader's do)."""
    return "\n".join(" | ".join(c for c in row if c) for row in clean_grid(rows))


def pick_title(candidates: Iterable[str], fallback: str) -> str:
    """The first of ``candidates`` that is a real title (not
    :func:`kgp.ingest.titles.junk_title`), else ``fallback`` (the file's stem)."""
    for candidate in candidates:
        text = " ".join(candidate.split())
        if len(text) <= 150 and not junk_title(text):
            return text
    return fallback


def unreadable(path: object, data: bytes, exc: BaseException, what: str, fix: str) -> DocumentError:
    """The one-line error for a file its library could not open (``what``: "Word document")."""
    if Path(str(path)).name.startswith("~$"):
        return DocumentError(
            f"{path}: an Office lock file (Office makes one while the document is open), "
            f"not a {what}; it goes when the document is closed"
        )
    if data.startswith(_OLE):
        return DocumentError(
            f"{path}: an encrypted {what} or an old binary Office file (.doc, .xls, .ppt); "
            f"remove its password or {fix}"
        )
    detail = " ".join(str(exc).split())[:160] or type(exc).__name__
    return DocumentError(f"{path}: not a readable {what} ({detail}); {fix}")

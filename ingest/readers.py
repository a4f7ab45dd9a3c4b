"""Readers turn a file into pages of text sections and tables (:mod:`kgp.ingest.document`). Add a
format by registering a ``Reader`` factory for its suffixes with :func:`register`; the readers of
PDF (PyMuPDF, camelot), Word and PowerPoint (:mod:`kgp.ingest.office`), HTML
(:mod:`kgp.ingest.html`) and spreadsheets (:mod:`kgp.ingest.sheets`) are imported the first time
a file of theirs is read."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path

from kgp.errors import DocumentError
from kgp.ingest.document import Page, ReadDocument, Reader, Section

_READERS: dict[str, Callable[[], Reader]] = {}


def register(suffixes: tuple[str, ...], factory: Callable[[], Reader]) -> None:
    for suffix in suffixes:
        _READERS[suffix.lower()] = factory


def supported_suffixes() -> list[str]:
    return sorted(_READERS)


def reader_for(path: Path) -> Reader | None:
    factory = _READERS.get(path.suffix.lower())
    return factory() if factory is not None else None


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 text (a BOM is allowed); binary junk, other encodings and blank files are refused."""
    if b"\x00" in data[:65536]:
        raise DocumentError(f"{path}: binary data (NUL bytes), not text; remove it or rename it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{path}: not UTF-8 (byte {exc.start}); convert it, e.g. iconv -t UTF-8"
        ) from None
    control = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\n\r\t\f")
    if control > max(8, len(text[:65536]) // 100):
        raise DocumentError(f"{path}: binary data (control characters), not text")
    if not text.strip():
        raise DocumentError(f"{path}: empty document (no text)")
    return text


def _first_line_title(text: str, path: Path) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= 120 else path.stem
    return path.stem


class TextReader:
    kind = "text"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        text = decode_text(path, data)
        page = Page(1, (Section("", text),))
        return ReadDocument(title=_first_line_title(text, path), kind=self.kind, pages=(page,))


_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


class MarkdownReader:
    """Markdown: each heading starts a section; fenced code stays with its section."""

    kind = "markdown"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        text = decode_text(path, data)
        sections: list[Section] = []
        heading, title = "", ""
        lines: list[str] = []
        fenced = False
        for line in text.splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            match = None if fenced else _HEADING.match(line)
            if match:
                if "".join(lines).strip():
                    sections.append(Section(heading, "\n".join(lines)))
                heading, lines = match.group(2).strip(), []
                title = title or (heading if len(match.group(1)) == 1 else "")
            else:
                lines.append(line)
        if "".join(lines).strip():
            sections.append(Section(heading, "\n".join(lines)))
        if not sections:
            sections = [Section(heading, heading)]
        title = title or _first_line_title(text, path).lstrip("# ")
        return ReadDocument(title=title, kind=self.kind, pages=(Page(1, tuple(sections)),))


register((".txt", ".text"), TextReader)
register((".md", ".markdown"), MarkdownReader)


def _lazy(module: str, name: str) -> Callable[[], Reader]:
    """A factory that imports ``module`` (and its libraries) the first time it makes a reader."""

    def factory() -> Reader:
        reader: type[Reader] = getattr(importlib.import_module(module), name)
        return reader()

    return factory


register((".pdf",), _lazy("kgp.ingest.pdf", "PdfReader"))
register((".docx",), _lazy("kgp.ingest.office", "DocxReader"))
register((".pptx",), _lazy("kgp.ingest.office", "PptxReader"))
register((".html", ".htm"), _lazy("kgp.ingest.html", "HtmlReader"))
register((".csv",), _lazy("kgp.ingest.sheets", "CsvReader"))
register((".xlsx", ".xlsm"), _lazy("kgp.ingest.sheets", "XlsxReader"))
register((".xls",), _lazy("kgp.ingest.sheets", "XlsReader"))

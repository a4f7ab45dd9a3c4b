"""HTML reader (BeautifulSoup over lxml; imported when a page is read).

A page is one page of sections: its main content (``<main>``, else its one ``<article>``, else
its body) without navigation, page headers and footers, asides, scripts, styles and forms'
controls; ``<h1>``..``<h6>`` start sections, and each ``<table>`` is a ``TableRecord`` whose
rows of ``<th>`` cells are its header. The bytes are decoded as the page declares (a BOM, a
``<meta>`` charset) or as UTF-8."""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

from kgp.errors import DocumentError
from kgp.ingest.document import Page, ReadDocument
from kgp.ingest.outline import Outline, add_table, pick_title, table_text
from kgp.stores.model import TableRecord

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)
_LATIN1 = {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii"}
_DROPPED = ["script", "style", "noscript", "template", "nav", "aside", "svg", "iframe"]
_DROPPED += ["object", "embed", "button", "select", "input", "textarea", "dialog"]
_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCKS = {"address", "blockquote", "br", "dd", "details", "div", "dl", "dt", "figcaption"}
_BLOCKS |= {"figure", "hr", "li", "main", "ol", "p", "pre", "section", "summary", "ul"}
_BLOCKS |= {"article", "header", "footer", "caption", "td", "th", "tr", "fieldset", "legend"}
MAX_SPAN = 100  # a colspan or rowspan larger is taken as this


def decode_html(path: Path, data: bytes) -> str:
    """The page's text: by its BOM, else its ``<meta>`` charset (ISO-8859-1 read as
    Windows-1252, as browsers do), else UTF-8. Bytes that are not in that encoding, an unknown
    charset, binary data and a blank page are refused with one line."""
    if data.startswith(codecs.BOM_UTF8):
        label, encoding = "UTF-8", "utf-8-sig"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        label, encoding = "UTF-16", "utf-16"
    else:
        if b"\x00" in data[:65536]:
            raise DocumentError(f"{path}: binary data (NUL bytes), not an HTML page")
        found = _META_CHARSET.search(data[:4096])
        label = found.group(1).decode("ascii").lower() if found else "utf-8"
        encoding = "cp1252" if label in _LATIN1 else label
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise DocumentError(
                f"{path}: unknown charset {label!r} in its <meta>; convert it to UTF-8"
            ) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DocumentError(
            f"{path}: not valid {label} (byte {exc.start}); fix its charset or convert it, "
            "e.g. iconv -t UTF-8"
        ) from None
    if not text.strip():
        raise DocumentError(f"{path}: empty document (no text)")
    return text


def _span(value: Any) -> int:
    try:
        return max(1, min(MAX_SPAN, int(str(value).strip())))
    except ValueError:
        return 1


def _html_rows(table: Any) -> tuple[list[list[str]], bool]:
    """The table's grid (a cell spanning columns or rows is kept once, in its first row and
    column) and whether it has a header (its first rows are of ``<th>`` or in ``<thead>``)."""
    grid: list[list[str]] = []
    below: dict[int, int] = {}  # column -> how many more rows a rowspan above still covers
    header = False
    rows = [tr for tr in table.find_all("tr") if tr.find_parent("table") is table]
    for number, tr in enumerate(rows):
        cells = tr.find_all(["td", "th"], recursive=False)
        if number == 0:
            header = bool(cells) and (
                tr.find_parent("thead") is not None or all(c.name == "th" for c in cells)
            )
        row: list[str] = []
        for cell in cells:
            while below.get(len(row), 0) > 0:  # a cell of a row above spans down into this one
                below[len(row)] -= 1
                row.append("")
            wide, tall = _span(cell.get("colspan")), _span(cell.get("rowspan"))
            for column in range(len(row), len(row) + wide):
                below[column] = tall - 1
            row += [cell.get_text(" ", strip=True)] + [""] * (wide - 1)
        for column, left in below.items():  # spanning down right of this row's last cell
            if column >= len(row) and left > 0:
                below[column] = left - 1
        grid.append(row)
    return grid, header


def _layout_table(table: Any) -> bool:
    """A table that lays out a page rather than holding data: it holds tables, or one cell."""
    return table.find("table") is not None or len(table.find_all(["td", "th"])) <= 1


def _main(soup: Any) -> Any:
    """The page's main content: ``<main>``, else its one ``<article>``, else its body."""
    main = soup.find("main") or soup.find(attrs={"role": "main"})
    if main is not None:
        return main
    articles = soup.find_all("article")
    if len(articles) == 1:
        return articles[0]
    return soup.body or soup


def _strip(root: Any) -> None:
    """Remove what is not content: scripts, navigation, asides, hidden parts, and the headers
    and footers of the page (an article's or a section's own are content)."""
    doomed = root.find_all(_DROPPED)
    doomed += root.find_all(attrs={"role": lambda r: r is not None and r.lower() in _ROLES})
    doomed += root.find_all(attrs={"hidden": True})
    doomed += root.find_all(attrs={"aria-hidden": "true"})
    doomed += [
        tag
        for tag in root.find_all(["header", "footer"])
        if tag.find_parent(["article", "main", "section"]) is None
    ]
    for tag in doomed:
        if not tag.decomposed:
            tag.decompose()


class HtmlReader:
    """HTML (.html, .htm): one page of sections and tables."""

    kind = "html"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        # lxml repairs markup as browsers do (a <td> or <p> left open ends at the next one),
        # where Python's html.parser nests them; python-docx depends on lxml already
        from bs4 import BeautifulSoup
        from bs4.element import NavigableString, PreformattedString, Tag

        soup = BeautifulSoup(decode_html(path, data), "lxml")
        page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
        root = _main(soup)
        first_h1 = root.find("h1") or soup.find("h1")
        headings = [first_h1.get_text(" ", strip=True)] if first_h1 is not None else []
        _strip(root)
        outline = Outline()
        records: list[TableRecord] = []
        words: list[str] = []

        def flush() -> None:
            outline.paragraph(" ".join("".join(words).split()))
            words.clear()

        stack: list[Any] = list(reversed(list(root.children)))  # no recursion: deep pages
        while stack:
            node = stack.pop()
            if node is None:  # the end of a block
                flush()
            elif isinstance(node, NavigableString):
                if not isinstance(node, PreformattedString):  # comments, doctypes, CDATA
                    words.append(str(node))
            elif not isinstance(node, Tag):
                continue
            elif node.name in _HEADINGS:
                flush()
                outline.heading(node.get_text(" ", strip=True))
            elif node.name == "table" and not _layout_table(node):
                flush()
                rows, header = _html_rows(node)
                if tables:
                    caption = node.caption.get_text(" ", strip=True) if node.caption else ""
                    add_table(records, 1, rows, header=header, caption=caption)
                else:
                    outline.paragraph(table_text(rows))
            else:
                if node.name in _BLOCKS:
                    flush()
                    stack.append(None)
                stack.extend(reversed(list(node.children)))
        flush()
        title = pick_title([page_title, *headings], path.stem)
        pages = (Page(1, outline.sections()),)
        return ReadDocument(title=title, kind=self.kind, pages=pages, tables=tuple(records))

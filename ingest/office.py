"""Word and PowerPoint readers (python-docx, python-pptx; imported when a file is read).

A Word document is one page: its Title and Heading styles start sections, its body's paragraphs
and tables are read in order, with those inside content controls, the text of its text boxes
after the paragraph that holds them, and its footnotes and endnotes at the end (headers and
footers are page furniture, as in a PDF, and are not read). A
PowerPoint slide is a page, its title the heading of its one section, its text frames read top
to bottom then left to right, its speaker notes last; tables on either become ``TableRecord``s
as the PDF reader's do."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgp.ingest.document import Page, ReadDocument, Section
from kgp.ingest.outline import Outline, add_table, pick_title, table_text, unreadable
from kgp.ingest.tables import is_caption
from kgp.stores.model import TableRecord

_HEADING = re.compile(r"(?i)(title|heading (\d))$")
_STYLE_DEPTH = 4  # a custom style based on "Heading 2", itself based on ...
_FIRST_ROW = 0x0020  # tblLook's w:val bit for a table whose first row is its header


def _heading_level(paragraph: Any) -> int:
    """1..9 for a heading paragraph (0 for the Title style), -1 for body text."""
    style = paragraph.style
    for _ in range(_STYLE_DEPTH):
        if style is None:
            break
        match = _HEADING.match(style.name or "")
        if match:
            return int(match.group(2)) if match.group(2) else 0
        style = style.base_style
    return -1


def _docx_rows(table: Any) -> list[list[str]]:
    """The table's grid; a cell merged across columns is kept once, in its first column (one
    merged down rows is python-docx's: repeated in each row)."""
    rows = []
    for row in table.rows:
        cells: list[str] = [""] * row.grid_cols_before
        previous = None
        for cell in row.cells:
            cells.append("" if cell is previous else cell.text)
            previous = cell
        rows.append(cells + [""] * row.grid_cols_after)
    return rows


def _docx_header(table: Any) -> bool:
    """Whether the table's first row is a header: marked to repeat as one, or its style's look
    sets the first row apart (Word's default for a new table)."""
    from docx.oxml.ns import qn

    first = table._tbl.tr_lst[0] if table._tbl.tr_lst else None
    if first is not None and first.find(f"{qn('w:trPr')}/{qn('w:tblHeader')}") is not None:
        return True
    look = table._tbl.find(f"{qn('w:tblPr')}/{qn('w:tblLook')}")
    if look is None:
        return False
    flag = look.get(qn("w:firstRow"))
    if flag is not None:
        return flag in ("1", "true", "on")
    return bool(int(look.get(qn("w:val"), "0"), 16) & _FIRST_ROW)


def _docx_caption(blocks: list[Any], index: int) -> str:
    """The paragraph just above (else just below) the table at ``index``, if it is a caption."""
    from docx.text.paragraph import Paragraph

    for near in (index - 1, index + 1):
        if 0 <= near < len(blocks) and isinstance(blocks[near], Paragraph):
            text = blocks[near].text.strip()
            style = blocks[near].style
            if text and (is_caption(text) or (style is not None and style.name == "Caption")):
                return str(text)
    return ""


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
# what holds text that is not the paragraph's own: a text box (read on its own), the copy of a
# drawing kept for old readers, text deleted or moved away in tracked changes
_NOT_OWN = {f"{_W}txbxContent", _FALLBACK, f"{_W}del", f"{_W}moveFrom"}
_CHARACTERS = {f"{_W}tab": "\t", f"{_W}br": "\n", f"{_W}cr": "\n", f"{_W}noBreakHyphen": "-"}
_NOTES = ("footnotes", "endnotes")


def _blocks(parent: Any) -> Iterator[Any]:
    """The ``w:p`` and ``w:tbl`` elements of a body (or a text box) in order, with those inside
    block content controls and custom XML, which python-docx's ``iter_inner_content`` skips."""
    for child in parent.iterchildren():
        if child.tag in (f"{_W}p", f"{_W}tbl"):
            yield child
        elif child.tag == f"{_W}sdt":
            content = child.find(f"{_W}sdtContent")
            if content is not None:
                yield from _blocks(content)
        elif child.tag == f"{_W}customXml":
            yield from _blocks(child)


def _own(element: Any, paragraph: Any) -> bool:
    """Whether ``element`` belongs to ``paragraph``'s own text (see ``_NOT_OWN``)."""
    for ancestor in element.iterancestors():
        if ancestor is paragraph:
            return True
        if ancestor.tag in _NOT_OWN:
            return False
    return False


def _paragraph_text(paragraph: Any) -> str:
    """A ``w:p``'s text as Word shows it, run by run, also inside inline content controls,
    hyperlinks, fields' results and tracked insertions."""
    out = []
    for element in paragraph.iter(f"{_W}t", *_CHARACTERS):
        if _own(element, paragraph):
            out.append(element.text or "" if element.tag == f"{_W}t" else _CHARACTERS[element.tag])
    return "".join(out)


def _text_boxes(paragraph: Any) -> list[str]:
    """The paragraphs of the text boxes a ``w:p`` anchors, a box inside a box after it (each
    once: not the copy a drawing keeps for old readers)."""
    texts = []
    for box in paragraph.iter(f"{_W}txbxContent"):
        if all(ancestor.tag != _FALLBACK for ancestor in box.iterancestors()):
            texts += [_paragraph_text(p) for p in box.iter(f"{_W}p") if _own(p, box)]
    return texts


def _notes(document: Any) -> list[str]:
    """The text of the document's footnotes and endnotes, one paragraph each, in order (not the
    separators Word keeps among them)."""
    from docx.oxml import parse_xml

    texts = []
    for rel in document.part.rels.values():
        if rel.is_external or rel.reltype.rsplit("/", 1)[-1] not in _NOTES:
            continue
        for note in parse_xml(rel.target_part.blob).iterchildren():
            if note.get(f"{_W}type") in (None, "normal"):
                text = " ".join(_paragraph_text(p) for p in note.iter(f"{_W}p"))
                texts.append(text)
    return texts


class DocxReader:
    """Word (.docx): one page of sections (Title and Heading 1..9 start them) and tables."""

    kind = "docx"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph

        try:
            document = docx.Document(io.BytesIO(data))
            body = document._body
            blocks = [
                Table(b, body) if b.tag == f"{_W}tbl" else Paragraph(b, body)
                for b in _blocks(document.element.body)
            ]
            outline = Outline()
            records: list[TableRecord] = []
            headings: list[str] = []  # the text of each Title and Heading 1, in order
            for index, block in enumerate(blocks):
                if isinstance(block, Table):
                    rows = _docx_rows(block)
                    if tables:
                        caption = _docx_caption(blocks, index)
                        add_table(records, 1, rows, header=_docx_header(block), caption=caption)
                    else:
                        outline.paragraph(table_text(rows))
                    continue
                text = _paragraph_text(block._p)
                level = _heading_level(block)
                if level >= 0 and text.strip():
                    outline.heading(text)
                    if level <= 1:
                        headings.append(text)
                else:
                    outline.paragraph(text)
                for boxed in _text_boxes(block._p):
                    outline.paragraph(boxed)
            for note in _notes(document):
                outline.paragraph(note)
            sections = outline.sections()
            core_title = document.core_properties.title or ""
        except Exception as exc:  # zipfile, lxml and python-docx raise many types
            raise unreadable(path, data, exc, "Word document", "re-save it as .docx") from None
        title = pick_title([*headings[:1], core_title], path.stem)
        return ReadDocument(
            title=title, kind=self.kind, pages=(Page(1, sections),), tables=tuple(records)
        )


def _reading_order(shapes: Any) -> list[Any]:
    """Shapes top to bottom, then left to right; a group's shapes in its place, in its order."""
    ordered = sorted(shapes, key=lambda s: (s.top or 0, s.left or 0))
    flat: list[Any] = []
    for shape in ordered:
        if hasattr(shape, "shapes"):  # a group
            flat += _reading_order(shape.shapes)
        else:
            flat.append(shape)
    return flat


def _pptx_rows(table: Any) -> list[list[str]]:
    """The table's grid; a merged cell's text is kept once, in its first (top-left) cell."""
    return [["" if cell.is_spanned else cell.text for cell in row.cells] for row in table.rows]


class PptxReader:
    """PowerPoint (.pptx): a page per slide, its title the heading of its section."""

    kind = "pptx"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        from pptx import Presentation

        try:
            deck = Presentation(io.BytesIO(data))
            pages: list[Page] = []
            records: list[TableRecord] = []
            titles: list[str] = []
            for number, slide in enumerate(deck.slides, start=1):
                title_shape = slide.shapes.title
                title = " ".join(title_shape.text_frame.text.split()) if title_shape else ""
                titles.append(title)
                texts: list[str] = []
                for shape in _reading_order(slide.shapes):
                    if title_shape is not None and shape.shape_id == title_shape.shape_id:
                        continue
                    if getattr(shape, "has_table", False):
                        rows = _pptx_rows(shape.table)
                        if tables:
                            add_table(records, number, rows, header=shape.table.first_row)
                        else:
                            texts.append(table_text(rows))
                    elif shape.has_text_frame:
                        texts.append(shape.text_frame.text)
                if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
                    texts.append(slide.notes_slide.notes_text_frame.text)
                body = "\n\n".join(t.strip() for t in texts if t.strip())
                # a slide of only a title ("Results by region") still says something
                sections = (Section(title, body or title),) if body or title else ()
                pages.append(Page(number, sections))
            core_title = deck.core_properties.title or ""
        except Exception as exc:  # zipfile, lxml and python-pptx raise many types
            raise unreadable(path, data, exc, "PowerPoint deck", "re-save it as .pptx") from None
        title = pick_title([*titles[:1], core_title], path.stem)
        return ReadDocument(title=title, kind=self.kind, pages=tuple(pages), tables=tuple(records))

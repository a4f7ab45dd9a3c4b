"""The Word, PowerPoint, HTML, CSV and Excel readers and OCR of scanned PDF pages, on real files
each format's own library writes at test time; and a folder of them synced into a real graph,
where a question finds a spreadsheet's cell and a Word document's sentence."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import kgp
import pytest
from kgp.errors import DocumentError
from kgp.ingest import ocr, pdf, sheets
from kgp.ingest.document import ReadDocument
from kgp.ingest.embedding import Encoder
from kgp.ingest.html import HtmlReader
from kgp.ingest.ocr import tessdata
from kgp.ingest.office import DocxReader, PptxReader
from kgp.ingest.pdf import PdfReader
from kgp.ingest.readers import reader_for
from kgp.ingest.sheets import CsvReader, XlsReader, XlsxReader
from kgp.ingest.tables import parse_markdown_table, table_chunks

DOCX_SENTENCE = "Maria Lopez leads the dredging crew of the harbour."
XLSX_VALUE = "875"  # the lighthouse repair's cost, a cell of the Budget sheet


def grid(doc: ReadDocument, index: int = 0) -> list[list[str]]:
    return parse_markdown_table(doc.tables[index].markdown)


def text_of(doc: ReadDocument) -> str:
    return "\n".join(s.text for page in doc.pages for s in page.sections)


# -- files made by each format's library ----------------------------------------------------------


def make_docx(path: Path, *, header: bool = True) -> Path:
    import docx
    from docx.oxml.ns import qn

    document = docx.Document()
    document.core_properties.title = "Microsoft Word - draft7.docx"
    document.add_heading("Harbour Works Annual Report", level=0)
    document.add_paragraph("This report covers the works of the year.")
    document.add_heading("Budget", level=1)
    document.add_paragraph("The harbour budget rose to 4.2 million euros in 2024.")
    document.add_paragraph("Table 1: Spending by project")
    table = document.add_table(rows=4, cols=3)
    for r, row in enumerate([["Project", "Cost", "Lead"], ["Dredging", "1200", "Ana"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    for c, value in enumerate(["Quay wall", "3000", "Ben"]):
        table.cell(2, c).text = value
    merged = table.cell(3, 0).merge(table.cell(3, 2))
    merged.text = "Approved in March"
    if not header:
        look = table._tbl.find(f"{qn('w:tblPr')}/{qn('w:tblLook')}")
        look.set(qn("w:firstRow"), "0")
        look.set(qn("w:val"), "0480")
    document.add_heading("Staff", level=2)
    document.add_paragraph(DOCX_SENTENCE)
    document.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Ferry Timetable Review"
    first.placeholders[1].text = "Operations team"
    second = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    second.shapes.title.text = "Crossings per day"
    lower = second.shapes.add_textbox(Inches(1), Inches(5.5), Inches(6), Inches(1))
    lower.text_frame.text = "Evening crossings were added in May."
    upper = second.shapes.add_textbox(Inches(1), Inches(1.5), Inches(6), Inches(1))
    upper.text_frame.text = "Morning service starts at six."
    shape = second.shapes.add_table(3, 2, Inches(1), Inches(2.5), Inches(6), Inches(2))
    for r, row in enumerate([["Route", "Crossings"], ["North", "14"], ["South", "9"]]):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    second.notes_slide.notes_text_frame.text = "Ask about the winter schedule."
    deck.save(str(path))
    return path


def make_xlsx(path: Path) -> Path:
    """Two sheets: Budget, whose total is a formula with the value Excel would have saved with
    it (openpyxl saves none), and Staff, whose first row and second column are empty."""
    import openpyxl

    book = openpyxl.Workbook()
    budget = book.active
    budget.title = "Budget"
    for row in [["Item", "Cost"], ["Quay wall", 3000], ["Lighthouse repair", 875]]:
        budget.append(row)
    budget["B4"] = "=SUM(B2:B3)"
    budget["A4"] = "Total"
    staff = book.create_sheet("Staff")
    staff["A2"], staff["C2"] = "Name", "Role"
    staff["A3"], staff["C3"] = "Ana", "Diver"
    staff["A4"], staff["C4"] = "Ben", "Engineer"
    raw = io.BytesIO()
    book.save(raw)
    with zipfile.ZipFile(raw) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"<f>SUM(B2:B3)</f><v></v>", b"<f>SUM(B2:B3)</f><v>3875</v>")
                assert b"<v>3875</v>" in data
            target.writestr(item, data)
    return path


CSV_TEXT = "\ufeffStation;Rainfall mm;Month\nCedar Hollow;132,5;March\n;;\nMill Ford;98,0;April\n"

HTML_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Pump Station Manual</title>
<style>p { color: red; }</style><script>var tracking = "secret";</script></head>
<body>
<header><a href="/">Waterworks home</a></header>
<nav><ul><li><a href="/a">About us</a></li><li><a href="/b">Contact</a></li></ul></nav>
<main>
<h1>Pump Station Manual</h1>
<p>The pumps are inspected every spring.</p>
<h2>Bearings</h2>
<p>Replace the <b>bearings</b> every <i>five</i> years.</p>
<table><caption>Table 2: Pump models</caption>
<thead><tr><th>Model</th><th>Flow</th></tr></thead>
<tbody><tr><td>KP-40<td>40 l/s<tr><td colspan="2">Retired in 2020</td></tr></tbody>
</table>
</main>
<aside>Related links: flood plan</aside>
<footer>Copyright Waterworks</footer>
</body></html>
"""


# -- the readers ----------------------------------------------------------------------------------


def test_the_registry_knows_every_format() -> None:
    kinds = {
        suffix: getattr(reader_for(Path(f"a{suffix}")), "kind", None)
        for suffix in (".docx", ".pptx", ".html", ".HTM", ".csv", ".xlsx", ".xls")
    }
    assert kinds == {
        ".docx": "docx",
        ".pptx": "pptx",
        ".html": "html",
        ".HTM": "html",
        ".csv": "csv",
        ".xlsx": "xlsx",
        ".xls": "xls",
    }


def test_docx_headings_paragraphs_and_table(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "report.docx")
    doc = DocxReader().read(path, path.read_bytes())
    assert doc.title == "Harbour Works Annual Report"  # the Title, not the editor's default
    assert doc.kind == "docx" and len(doc.pages) == 1
    sections = [(s.heading, s.text) for s in doc.pages[0].sections]
    assert sections == [
        ("Harbour Works Annual Report", "This report covers the works of the year."),
        (
            "Budget",
            "The harbour budget rose to 4.2 million euros in 2024.\n\nTable 1: Spending by project",
        ),
        ("Staff", DOCX_SENTENCE),
    ]
    (table,) = doc.tables
    assert (table.page, table.index, table.rows, table.cols) == (1, 0, 4, 3)
    assert table.caption == "Table 1: Spending by project"
    assert grid(doc) == [
        ["Project", "Cost", "Lead"],
        ["Dredging", "1200", "Ana"],
        ["Quay wall", "3000", "Ben"],
        ["Approved in March", "", ""],  # merged across the row: once
    ]


def test_docx_table_without_header_and_tables_off(tmp_path: Path) -> None:
    path = make_docx(tmp_path / "plain.docx", header=False)
    doc = DocxReader().read(path, path.read_bytes())
    assert grid(doc)[:2] == [["", "", ""], ["Project", "Cost", "Lead"]]  # all rows are data
    prose = DocxReader().read(path, path.read_bytes(), tables=False)
    assert prose.tables == ()
    assert "Quay wall | 3000 | Ben" in text_of(prose)


W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
MC_NS = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
WPS_NS = 'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'


def make_docx_with_hidden_text(path: Path) -> Path:
    """A Word file whose text sits where python-docx's paragraphs do not look: a block content
    control, an inline one, a text box (with the copy Word keeps for old readers), tracked
    changes, a footnote, and a running header."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import parse_xml

    document = docx.Document()
    document.add_paragraph("The ferry timetable changes in May.")
    body = document.element.body
    body.insert(
        len(body) - 1,  # before the section properties
        parse_xml(
            f"<w:sdt {W_NS}><w:sdtPr/><w:sdtContent>"
            "<w:p><w:r><w:t>The contract with Nordic Marine runs to 2027.</w:t></w:r></w:p>"
            "</w:sdtContent></w:sdt>"
        ),
    )
    inline = document.add_paragraph("Harbour master: ")
    inline._p.append(
        parse_xml(
            f"<w:sdt {W_NS}><w:sdtContent><w:r><w:t>Ingrid Olsen</w:t></w:r></w:sdtContent></w:sdt>"
        )
    )
    box = (
        "<w:txbxContent><w:p><w:r><w:t>Call 555-0142 for berth bookings.</w:t></w:r></w:p>"
        "</w:txbxContent>"
    )
    anchor = document.add_paragraph("See the box.")
    anchor._p.append(
        parse_xml(
            f"<w:r {W_NS} {MC_NS} {WPS_NS}><mc:AlternateContent>"
            f'<mc:Choice Requires="wps"><w:drawing><wps:txbx>{box}</wps:txbx></w:drawing>'
            "</mc:Choice>"
            f"<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback>"
            "</mc:AlternateContent></w:r>"
        )
    )
    edited = document.add_paragraph("The fee is ")
    edited._p.append(parse_xml(f"<w:del {W_NS}><w:r><w:delText>40</w:delText></w:r></w:del>"))
    edited._p.append(parse_xml(f"<w:ins {W_NS}><w:r><w:t>45</w:t></w:r></w:ins>"))
    edited._p.append(parse_xml(f'<w:r {W_NS}><w:t xml:space="preserve"> euros.</w:t></w:r>'))
    notes = (
        f'<w:footnotes {W_NS}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/>'
        '</w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:r>'
        "<w:t>Fees were last raised in 2019.</w:t></w:r></w:p></w:footnote></w:footnotes>"
    )
    part = Part(
        PackURI("/word/footnotes.xml"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
        notes.encode(),
        document.part.package,
    )
    document.part.relate_to(part, RT.FOOTNOTES)
    document.sections[0].header.paragraphs[0].text = "Port Authority - internal"
    document.save(str(path))
    return path


def test_docx_text_in_content_controls_text_boxes_changes_and_notes(tmp_path: Path) -> None:
    path = make_docx_with_hidden_text(tmp_path / "ferry.docx")
    text = text_of(DocxReader().read(path, path.read_bytes()))
    assert text.split("\n\n") == [
        "The ferry timetable changes in May.",
        "The contract with Nordic Marine runs to 2027.",
        "Harbour master: Ingrid Olsen",
        "See the box.",
        "Call 555-0142 for berth bookings.",  # once, not again from the fallback copy
        "The fee is 45 euros.",  # what the tracked changes leave
        "Fees were last raised in 2019.",
    ]
    assert "Port Authority" not in text, "a running header is page furniture"


def test_docx_title_falls_back_to_properties_then_file_name(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Introduction", level=1)  # a section's name: no title
    document.add_paragraph("Tides were measured at four stations.")
    document.core_properties.title = "Tidal Survey of the Estuary"
    document.save(str(tmp_path / "survey.docx"))
    doc = DocxReader().read(tmp_path / "survey.docx", (tmp_path / "survey.docx").read_bytes())
    assert doc.title == "Tidal Survey of the Estuary"
    document.core_properties.title = "Document1"
    document.save(str(tmp_path / "survey.docx"))
    doc = DocxReader().read(tmp_path / "survey.docx", (tmp_path / "survey.docx").read_bytes())
    assert doc.title == "survey"


def test_pptx_slides_titles_reading_order_table_and_notes(tmp_path: Path) -> None:
    path = make_pptx(tmp_path / "ferry.pptx")
    doc = PptxReader().read(path, path.read_bytes())
    assert doc.title == "Ferry Timetable Review" and doc.kind == "pptx"
    assert [p.number for p in doc.pages] == [1, 2]
    assert [(s.heading, s.text) for s in doc.pages[0].sections] == [
        ("Ferry Timetable Review", "Operations team")
    ]
    (section,) = doc.pages[1].sections
    assert section.heading == "Crossings per day"
    assert section.text == (
        "Morning service starts at six.\n\nEvening crossings were added in May."
        "\n\nAsk about the winter schedule."
    )  # top to bottom, whatever order the shapes were added in; the notes last
    (table,) = doc.tables
    assert (table.page, table.index) == (2, 0)
    assert grid(doc) == [["Route", "Crossings"], ["North", "14"], ["South", "9"]]


def test_xlsx_sheets_are_tables_with_formula_values(tmp_path: Path) -> None:
    path = make_xlsx(tmp_path / "harbour.xlsx")
    doc = XlsxReader().read(path, path.read_bytes())
    assert doc.title == "harbour" and doc.kind == "xlsx"
    assert [p.number for p in doc.pages] == [1, 2]
    budget, staff = doc.tables
    assert (budget.page, budget.caption, staff.page, staff.caption) == (1, "Budget", 2, "Staff")
    assert grid(doc, 0) == [
        ["Item", "Cost"],
        ["Quay wall", "3000"],
        ["Lighthouse repair", XLSX_VALUE],
        ["Total", "3875"],  # the formula's saved value, not "=SUM(B2:B3)"
    ]
    assert grid(doc, 1) == [["Name", "Role"], ["Ana", "Diver"], ["Ben", "Engineer"]]
    assert (staff.rows, staff.cols) == (3, 2)


def test_xls_of_excel_97_sheets_dates_and_formula_values(tmp_path: Path) -> None:
    import datetime as dt

    import xlwt

    book = xlwt.Workbook()
    budget = book.add_sheet("Budget")
    for r, row in enumerate([["Item", "Cost", "Approved"], ["Quay wall", 3000.0, None]]):
        for c, value in enumerate(row):
            if value is not None:
                budget.write(r, c, value)
    budget.write(1, 2, dt.date(2024, 3, 5), xlwt.easyxf(num_format_str="YYYY-MM-DD"))
    budget.write(2, 0, "Lighthouse repair")
    budget.write(2, 1, 875.5)
    budget.write(2, 2, True)
    budget.write(3, 0, "Total")
    budget.write(3, 1, xlwt.Formula("B2+B3"))
    book.add_sheet("Staff").write(1, 1, "Ana")
    path = tmp_path / "harbour.xls"
    book.save(str(path))
    doc = XlsReader().read(path, path.read_bytes())
    assert doc.kind == "xls" and [p.number for p in doc.pages] == [1, 2]
    assert [t.caption for t in doc.tables] == ["Budget", "Staff"]
    assert grid(doc, 0)[:3] == [
        ["Item", "Cost", "Approved"],
        ["Quay wall", "3000", "2024-03-05"],  # a date, not Excel's serial number
        ["Lighthouse repair", "875.5", "True"],
    ]
    assert grid(doc, 0)[3][0] == "Total"  # xlwt saves no formula value; Excel would
    assert grid(doc, 1) == [["Ana"]]
    damaged = tmp_path / "damaged.xls"
    damaged.write_bytes(path.read_bytes()[:600])
    with pytest.raises(DocumentError, match=r"damaged\.xls: not a readable Excel 97-2003"):
        XlsReader().read(damaged, damaged.read_bytes())


def test_csv_with_bom_and_semicolons(tmp_path: Path) -> None:
    path = tmp_path / "rain.csv"
    path.write_bytes(CSV_TEXT.encode("utf-8"))
    doc = CsvReader().read(path, path.read_bytes())
    assert doc.title == "rain" and [p.number for p in doc.pages] == [1]
    assert grid(doc) == [
        ["Station", "Rainfall mm", "Month"],
        ["Cedar Hollow", "132,5", "March"],
        ["Mill Ford", "98,0", "April"],
    ]


def test_a_large_sheet_is_cut_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sheets, "MAX_ROWS", 50)
    path = tmp_path / "big.csv"
    path.write_text("n,square\n" + "".join(f"{i},{i * i}\n" for i in range(200)))
    doc = CsvReader().read(path, path.read_bytes())
    assert doc.tables[0].rows == 50
    assert doc.notices == ("the sheet: more than 50 rows; only the first were read",)


def test_html_main_content_headings_and_table(tmp_path: Path) -> None:
    path = tmp_path / "manual.html"
    path.write_text(HTML_PAGE)
    doc = HtmlReader().read(path, path.read_bytes())
    assert doc.title == "Pump Station Manual" and doc.kind == "html"
    assert [(s.heading, s.text) for s in doc.pages[0].sections] == [
        ("Pump Station Manual", "The pumps are inspected every spring."),
        ("Bearings", "Replace the bearings every five years."),
    ]
    for noise in ("Waterworks home", "About us", "secret", "color", "Related", "Copyright"):
        assert noise not in text_of(doc)
    (table,) = doc.tables
    assert table.caption == "Table 2: Pump models"
    assert grid(doc) == [["Model", "Flow"], ["KP-40", "40 l/s"], ["Retired in 2020", ""]]


def test_html_without_main_and_a_declared_charset(tmp_path: Path) -> None:
    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
        "</head><body><nav>Menu</nav><h1>Caf\xe9 opening hours</h1><p>Open daily.</p>"
        "<table><tr><td>Mon</td><td>8-18</td></tr></table><footer>Legal</footer></body></html>"
    )
    path = tmp_path / "cafe.htm"
    path.write_bytes(page.encode("latin-1"))
    doc = HtmlReader().read(path, path.read_bytes())
    assert doc.title == "Café opening hours"
    assert [(s.heading, s.text) for s in doc.pages[0].sections] == [
        ("Café opening hours", "Open daily.")
    ]
    assert grid(doc) == [["", ""], ["Mon", "8-18"]]  # no <th>: no header row


def test_html_cells_spanning_rows_keep_the_columns_in_place(tmp_path: Path) -> None:
    page = (
        "<h1>Shifts</h1><table><tr><th>Team</th><th>Day</th><th>Lead</th></tr>"
        '<tr><td rowspan="2">Red</td><td>Mon</td><td rowspan="3">Ana</td></tr>'
        "<tr><td>Tue</td></tr><tr><td>Blue</td><td>Wed</td></tr>"
        "<tr><td>Green</td><td>Thu</td><td>Ben</td></tr></table>"
    )
    doc = HtmlReader().read(tmp_path / "shifts.html", page.encode())
    assert grid(doc) == [
        ["Team", "Day", "Lead"],
        ["Red", "Mon", "Ana"],
        ["", "Tue", ""],
        ["Blue", "Wed", ""],
        ["Green", "Thu", "Ben"],
    ]


def test_a_sheet_of_words_keeps_its_one_header_row_in_every_row_passage(tmp_path: Path) -> None:
    """A reader that knows its table's header says so: rows of words after it are data, not
    more header repeated in every passage (the guess a PDF table gets)."""
    names = [a + b for a in "ABCDEF" for b in "abcdefghij"]  # words, no digits
    lines = ["Station,Manager,River"] + [f"Station {n},Manager {n},River {n}" for n in names]
    path = tmp_path / "people.csv"
    read = CsvReader().read(path, "\n".join(lines).encode())
    (table,) = read.tables
    assert table.header_rows == 1
    known = table_chunks(table.markdown, table.caption, header_rows=table.header_rows)
    chunks = [text for text, _ in known]
    assert len(chunks) > 2
    for chunk in chunks:
        assert "| Station | Manager | River |" in chunk
    assert sum("| Station Aa |" in chunk for chunk in chunks) == 1, "the first data row once"
    guessed = [text for text, _ in table_chunks(table.markdown, table.caption)]
    assert all("| Station Ab |" in chunk for chunk in guessed), "the guess took data as header"


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("bad.docx", os.urandom(3000), "not a readable Word document"),
        ("bad.pptx", b"PK\x03\x04" + os.urandom(500), "not a readable PowerPoint deck"),
        ("bad.xlsx", os.urandom(3000), "not a readable Excel workbook"),
        ("locked.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "encrypted Excel"),
        ("~$report.docx", b"\x05Maria" + bytes(150), "an Office lock file"),
        ("latin.csv", "Caf\xe9;1\n".encode("latin-1"), "not UTF-8"),
        ("blank.csv", b";;\n;;\n", "empty document"),
        ("bad.html", b'<meta charset="utf-8"><p>caf\xe9</p>', "not valid utf-8"),
        ("odd.html", b'<meta charset="klingon"><p>x</p>', "unknown charset"),
    ],
)
def test_bad_files_are_one_line_errors_naming_the_file(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    path = tmp_path / name
    reader = reader_for(path)
    assert reader is not None
    with pytest.raises(DocumentError) as caught:
        reader.read(path, data)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


# -- scanned PDFs ---------------------------------------------------------------------------------


def scanned_pdf(lines: list[str | None]) -> bytes:
    """A PDF of one page per line: the line as text (a page with a text layer), or, for None, a
    picture of "Harbour inspection found cracked bollards" (no text layer)."""
    import pymupdf

    doc = pymupdf.open()
    for line in lines:
        page = doc.new_page()
        if line is not None:
            page.insert_text((72, 100), line, fontsize=14)
            continue
        source = pymupdf.open()
        drawn = source.new_page()
        drawn.insert_text((72, 100), "Harbour inspection found cracked bollards", fontsize=20)
        pixmap = drawn.get_pixmap(dpi=200)
        page.insert_image(page.rect, pixmap=pixmap)
        assert not page.get_text().strip()
    return bytes(doc.tobytes())


@pytest.mark.skipif(
    tessdata() is None,
    reason="OCR needs Tesseract's English data: apt-get install tesseract-ocr tesseract-ocr-eng",
)
def test_ocr_reads_a_scanned_page(tmp_path: Path) -> None:
    data = scanned_pdf(["The quay was rebuilt in spring.", None])
    doc = PdfReader().read(tmp_path / "scan.pdf", data, tables=False)
    assert [p.number for p in doc.pages] == [1, 2]
    scanned = doc.pages[1].sections[0].text.lower()
    for word in ("harbour", "inspection", "cracked", "bollards"):
        assert word in scanned


def test_without_tesseract_scanned_pages_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoder: Encoder
) -> None:
    monkeypatch.setattr(pdf, "tessdata", lambda: None)  # as where it is not installed
    monkeypatch.setattr(ocr, "tessdata", lambda: None)
    assert ocr.availability() == (
        "not available: scanned PDF pages are skipped; "
        "add it with: apt-get install tesseract-ocr tesseract-ocr-eng"
    )
    path = tmp_path / "docs" / "mixed.pdf"
    path.parent.mkdir()
    path.write_bytes(scanned_pdf(["Page one.", None, None]))
    doc = PdfReader().read(path, path.read_bytes(), tables=False)
    assert [bool(p.sections) for p in doc.pages] == [True, False, False]
    unread = (
        "pages 2-3 are scanned images and OCR is not available; "
        "add it with: apt-get install tesseract-ocr tesseract-ocr-eng: not read"
    )
    assert doc.notices == (unread,)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        report = kg.sync(path.parent)
    assert report.added == ["mixed.pdf"] and report.notices == [f"mixed.pdf: {unread}"]
    with pytest.raises(DocumentError, match="no extractable text: page 1 is a scanned image and"):
        PdfReader().read(tmp_path / "scan.pdf", scanned_pdf([None]), tables=False)


# -- a folder of them in a real graph -------------------------------------------------------------


@pytest.mark.slow
def test_a_folder_of_every_format_syncs_and_answers(tmp_path: Path, encoder: Encoder) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    make_docx(folder / "report.docx")
    make_pptx(folder / "ferry.pptx")
    make_xlsx(folder / "harbour.xlsx")
    (folder / "rain.csv").write_bytes(CSV_TEXT.encode())
    (folder / "manual.html").write_text(HTML_PAGE)
    (folder / "corrupt.docx").write_bytes(os.urandom(4000))
    (folder / "corrupt.xlsx").write_bytes(os.urandom(4000))
    (folder / "~$report.docx").write_bytes(b"\x05Maria" + bytes(150))  # Word has it open
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        report = kg.sync(folder)
        assert sorted(report.added) == [
            "ferry.pptx",
            "harbour.xlsx",
            "manual.html",
            "rain.csv",
            "report.docx",
        ]
        reasons = {s.path: s.reason for s in report.skipped}
        assert reasons["corrupt.docx"].startswith("not a readable Word document")
        assert reasons["corrupt.xlsx"].startswith("not a readable Excel workbook")
        assert all("\n" not in reason for reason in reasons.values())
        assert report.ignored == ["~$report.docx"], "an Office lock file is no document"
        assert kg.store.counts().labels["Table"] == 6  # docx 1, pptx 1, xlsx 2, csv 1, html 1
        cell = kg.retrieve("How much did the lighthouse repair cost?", 5)
        assert any(
            XLSX_VALUE in p.text and p.document["path"] == "harbour.xlsx" for p in cell.passages
        )
        sentence = kg.retrieve("Who leads the dredging crew of the harbour?", 5)
        assert any(DOCX_SENTENCE in p.text for p in sentence.passages)

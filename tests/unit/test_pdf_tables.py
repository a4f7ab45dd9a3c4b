"""The grid clean-ups kgp's PDF reader applies to camelot's tables."""

from collections.abc import Sequence
from pathlib import Path

import pymupdf
from kgp.ingest.grids import (
    form_rows,
    labelled,
    printed_once,
    restacked,
    spread,
    unwrapped,
    without_leaders,
    wrapped_header,
)
from kgp.ingest.pdf import PdfReader
from kgp.ingest.pdf_tables import headed, numbered
from kgp.ingest.tables import parse_markdown_table


def test_leader_dots_join_their_label_and_their_columns_go() -> None:
    grid = [
        ["Category", "", "", "2010"],
        ["All ages . . .", ".", ". .", "303,858"],
        ["Severe . . .", "", ".", "38,284"],
    ]
    assert without_leaders(grid) == [
        ["Category", "2010"],
        ["All ages . . . . . .", "303,858"],
        ["Severe . . . .", "38,284"],
    ]


def test_a_lone_pair_of_dots_is_a_missing_value() -> None:
    grid = [["Finland", "..", ".."], ["Ireland", "20", ".."]]
    assert without_leaders(grid) == grid


def test_wrapped_text_lines_rejoin_their_row() -> None:
    grid = [
        ["Source", "Definition", "Examples"],
        ["Major", "Emissions of 10 tons", "Utilities,"],
        ["", "or more a year", "refineries"],
        ["Area", "Emissions of less", "Dry cleaners"],
    ]
    assert unwrapped(grid) == [
        ["Source", "Definition", "Examples"],
        ["Major", "Emissions of 10 tons\nor more a year", "Utilities,\nrefineries"],
        ["Area", "Emissions of less", "Dry cleaners"],
    ]


def test_numbers_and_notes_under_numbers_stay_rows() -> None:
    grid = [
        ["Q1 2010", "0.64", "0.72"],
        ["", "Source: Bloomberg", ""],
        ["Total", "Fused oxide", "Silicon"],
        ["", "2009", "2010"],
    ]
    assert unwrapped(grid) == grid


def test_a_label_a_line_off_its_numbers_joins_them() -> None:
    grid = [
        ["FY15 3rd Q TTL", "73,794", "96.0"],
        ["", "224,446", "100.7"],
        ["FY2015 TTL", "", ""],
        ["Investigative Matters", "", ""],
        ["", "426", "365"],
        ["Received by AUSAs", "", ""],
        ["Notes", "", ""],
    ]
    assert labelled(grid) == [
        ["FY15 3rd Q TTL", "73,794", "96.0"],
        ["FY2015 TTL", "224,446", "100.7"],  # below its values
        ["Investigative Matters\nReceived by AUSAs", "426", "365"],  # a label of two lines
        ["Notes", "", ""],  # beside no row of numbers: a row of its own
    ]


def test_a_header_wrapped_over_lines_is_one_row() -> None:
    grid = [
        ["", "", "Combined"],
        ["", "Percentage of", "weighted school"],
        ["", "desired population", "participation"],
        ["Education system", "coverage", "response rate"],
        ["Australia", "100", "93"],
    ]
    assert wrapped_header(grid) == [
        [
            "Education system",
            "Percentage of\ndesired population\ncoverage",
            "Combined\nweighted school\nparticipation\nresponse rate",
        ],
        ["Australia", "100", "93"],
    ]


def test_a_header_over_several_columns_stays_a_row_of_its_own() -> None:
    grid = [
        ["", "", "Stroke", ""],
        ["Characteristic", "no.", "Rate", "(95% CI)"],
        ["Female", "82,595", "42.6", "(42.3–42.9)"],
    ]
    assert wrapped_header(grid) == grid


def test_rows_of_words_without_numbers_under_them_are_no_header() -> None:
    grid = [["Program", "Budget"], ["Performance.gov", "$1.1M"], ["Challenges", "$0"]]
    assert wrapped_header(grid) == grid  # "$1.1M" is a number: no header row to join
    prose = [["Source", "Definition"], ["Major", "Emissions of ten tons"], ["Area", "Less"]]
    assert wrapped_header(prose) == prose


def one_page_pdf(path: Path, texts: Sequence[tuple[float, float, str, float]]) -> Path:
    """A one-page PDF written by PyMuPDF with each (x, baseline, text, font size)."""
    doc = pymupdf.open()
    page = doc.new_page()
    for x, y, text, size in texts:
        page.insert_text((x, y), text, fontsize=size)
    doc.save(path)
    return path


PROSE = [
    "disparities in heart disease and stroke among persons who already",
    "have heart disease or have experienced a stroke often focuses on",
    "differences in access to care, use of diagnostic and surgical care,",
    "and type of medication used in treatment. Research examining the",
    "promotion of cardiovascular health through preventing the onset of",
    "hypertension and atherosclerosis is needed across all the states.",
    "Such work would show where prevention reaches people and where not,",
    "and which of the programs of the states have done the most for them.",
]


def test_the_next_column_of_prose_beside_a_table_stays_page_text(tmp_path: Path) -> None:
    """A table in the left column of a two-column page: whitespace reading takes the right
    column's lines in as a last column of the table (ICDAR's us-025)."""
    states = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Florida"]
    rows = [("State", "Deaths", "Rate", "(95% CI)")] + [
        (name, f"{1000 + 37 * n:,}", f"{50 + n * 1.7:.1f}", f"({48 + n:.1f}-{52 + n:.1f})")
        for n, name in enumerate(states)
    ]
    caption = "Table 6. Number of deaths and death rates, by state"
    texts = [(40, 60, caption, 9)]
    for n, row in enumerate(rows):
        texts += [
            (x, 90 + 14 * n, cell, 8) for x, cell in zip((40, 110, 160, 205), row, strict=True)
        ]
    texts += [(320, 97 + 14 * n, line, 8) for n, line in enumerate(PROSE)]
    pdf = one_page_pdf(tmp_path / "two-columns.pdf", texts)

    read = PdfReader().read(pdf, pdf.read_bytes())
    (table,) = read.tables
    assert table.caption == caption
    grid = parse_markdown_table(table.markdown)
    assert grid[0] == ["State", "Deaths", "Rate", "(95% CI)"]
    assert grid[1] == ["Alabama", "1,000", "50.0", "(48.0-52.0)"]
    assert len(grid) == len(rows)  # no row left empty where a line of prose was
    text = read.pages[0].sections[0].text
    assert all(line in text for line in PROSE)


def test_a_captioned_table_of_labels_and_texts_is_a_table_and_its_notes_stay_text(
    tmp_path: Path,
) -> None:
    rows = [
        ("Variable", "Assumption"),
        ("Population", "Projections are consistent with the Census estimates"),
        ("Young adults", "Census projection: annual growth rate of 0.1%"),
        ("Inflation rate", "Inflation rate ranges between 1.0% and 2.0%"),
        ("Unemployment (men)", "Remains between 17.7% and 26.8%"),
        ("Unemployment (women)", "Remains between 14.3% and 19.6%"),
        ("Disposable income", "Annual changes range between -1.9% and 2.2%"),
    ]
    note = "SOURCE: U.S. Department of Commerce, Census Bureau, Population Estimates, 2011."
    caption = "Table A-1. Summary of forecast assumptions to 2021"
    texts = [(40, 60, caption, 9)]
    for n, (label, text) in enumerate(rows):
        texts += [(40, 90 + 14 * n, label, 8), (200, 90 + 14 * n, text, 8)]
    texts.append((40, 90 + 14 * len(rows) + 4, note, 7))
    pdf = one_page_pdf(tmp_path / "assumptions.pdf", texts)

    read = PdfReader().read(pdf, pdf.read_bytes())
    (table,) = read.tables
    assert table.caption == caption
    assert parse_markdown_table(table.markdown) == [list(row) for row in rows]
    assert note in read.pages[0].sections[0].text


def test_columns_read_as_one_cell_spread_over_the_empty_cells_around_it() -> None:
    grid = [
        ["", "", "Total", "", "Private"],
        ["Year", "", "PK–12        PK–8      9–12   PK–12", "", ""],
        ["1996", "51,544", "37,481", "5,933", "4,719"],
    ]
    assert spread(grid)[1] == ["Year", "PK–12", "PK–8", "9–12", "PK–12"]
    # as many texts as cells only: otherwise the cell stays whole
    assert spread([["a", "b      c      d", ""]]) == [["a", "b      c      d", ""]]


def test_a_caption_in_a_tables_first_row_becomes_its_caption() -> None:
    grid = [
        ["Table 4.—Borrowing for graduate education, by characteristics: 2003", "", ""],
        ["Characteristic", "Percent who borrowed", "Average amount"],
        ["Total", "44.8", "$30,400"],
    ]
    (found,) = numbered([(1, (10.0, 20.0, 300.0, 200.0), grid)])
    assert found.record.caption == grid[0][0]
    assert parse_markdown_table(found.record.markdown) == grid[1:]
    assert (found.record.rows, found.record.cols) == (2, 3)


def test_blocks_of_one_table_side_by_side_are_restacked_under_one_header() -> None:
    grid = [
        ["Age", "Total population", "Age", "Total population"],
        ["Under 1 year", "3,533,692", "40 years", "2,468,083"],
        ["1 years", "3,269,557", "41 years", "2,375,849"],
        ["2 years", "3,223,816", "", ""],
    ]
    assert restacked(grid) == [
        ["Age", "Total population"],
        ["Under 1 year", "3,533,692"],
        ["1 years", "3,269,557"],
        ["2 years", "3,223,816"],
        ["40 years", "2,468,083"],
        ["41 years", "2,375,849"],
    ]
    # the same labels over blocks that open with numbers are columns of one row, not blocks
    years = [["2019", "2020", "2019", "2020"], ["51.2", "49.0", "48.8", "50.1"]]
    assert restacked(years) == years


def _states_page(page: pymupdf.Page) -> list[tuple[str, str, str]]:
    """An unruled table of states written on ``page``; its rows."""
    states = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Florida"]
    rows = [("State", "Deaths", "Rate")] + [
        (name, f"{1000 + 37 * n:,}", f"{50 + n * 1.7:.1f}") for n, name in enumerate(states)
    ]
    for n, row in enumerate(rows):
        for x, cell in zip((40, 140, 220), row, strict=True):
            page.insert_text((x, 90 + 14 * n), cell, fontsize=8)
    return rows


def test_a_framed_note_leaves_the_pages_unruled_table_to_be_read(tmp_path: Path) -> None:
    """One column of ruled cells is a framed note, no table: the page's table without rules
    is still read by whitespace (birdisland.pdf's notes box hid its results table)."""
    doc = pymupdf.open()
    page = doc.new_page()
    rows = _states_page(page)
    for y in (300, 325, 350):  # a box of two ruled cells, one above the other
        page.draw_line((40, y), (500, y), color=(0, 0, 0), width=1)
    for x in (40, 500):
        page.draw_line((x, 300), (x, 350), color=(0, 0, 0), width=1)
    page.insert_text((45, 317), "Results in bold are significantly above the average.", fontsize=8)
    page.insert_text((45, 342), "See the last page for brand and technology notes.", fontsize=8)
    doc.save(tmp_path / "framed.pdf")
    pdf = tmp_path / "framed.pdf"

    read = PdfReader().read(pdf, pdf.read_bytes())
    (table,) = read.tables
    assert parse_markdown_table(table.markdown) == [list(row) for row in rows]
    assert "significantly above the average" in read.pages[0].sections[0].text


def test_a_pdf_whose_owner_forbids_extraction_has_its_tables_read(tmp_path: Path) -> None:
    """Encrypted with an empty user password and extraction not permitted: PyMuPDF reads its
    text, and camelot (which refuses such a file) is given its pages without the encryption."""
    doc = pymupdf.open()
    rows = _states_page(doc.new_page())
    pdf = tmp_path / "locked.pdf"
    doc.save(
        pdf,
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        owner_pw="owner",
        user_pw="",
        permissions=pymupdf.PDF_PERM_PRINT,
    )
    assert pymupdf.open(pdf).metadata["encryption"]

    read = PdfReader().read(pdf, pdf.read_bytes())
    assert not read.notices
    (table,) = read.tables
    assert parse_markdown_table(table.markdown) == [list(row) for row in rows]


def test_a_grid_printed_twice_reads_each_cell_once_and_a_stacked_pair_stays() -> None:
    """A PDF that overprints its text for a bold look gives whitespace reading two lines a
    cell, one copy missing characters (birdisland.pdf); where most cells are so printed each
    is read once, the fuller copy. Two different lines of one band stay two lines."""
    twice = [
        ["Company/Brand\nCompany/Brand", "Yield\nYield", "Income\nIncome"],
        ["Hefty\nH ft", "53.7\n53 7", "$806\n$806"],
        ["Kruger\nKruger", "56.4\n56.4", "$846\n$846"],
    ]
    assert printed_once(twice) == [
        ["Company/Brand", "Yield", "Income"],
        ["Hefty", "53.7", "$806"],
        ["Kruger", "56.4", "$846"],
    ]
    wrapped = [["State\nof birth", "Total\nTotal", "Rate"], ["Ohio", "12", "3.4"]]
    assert printed_once(wrapped) == wrapped  # one cell of three printed twice: left alone


def test_a_form_above_a_whitespace_table_is_no_part_of_it() -> None:
    """A trial report prints its conditions as labelled lines above its results; whitespace
    reading takes them in as the table's first rows."""
    cells = [
        ["", "2012 Harvest Report for Minnesota Central", "", "", "", "", "ALL SEASON TEST"],
        ["SOIL DESCRIPTION:", "", "Canisteo clay loam", "", "", "", ""],
        ["PEST MANAGEMENT:", "", "Roundup twice", "", "", "", ""],
        ["SEEDED - RATE:", "", "May 15", "140,000 /A", "", "", ""],
        ["", "Company/Brand", "Product", "Maturity", "Yield", "Moisture", "Income"],
        ["", "Kruger", "K2-1901", "1.9", "56.4", "7.6", "$846"],
    ]
    assert form_rows(cells) == 4
    assert form_rows(cells[4:]) == 0
    notes = [["Note: all figures in thousands", "", ""], ["Region", "2010", "2011"]]
    assert form_rows(notes) == 0  # one label is a note, no form


def test_header_rows_ruled_apart_from_their_table_top_it_again() -> None:
    """A rate sheet rules its two header rows apart from its body, and lattice reads them as a
    table of their own (pr-138-example.pdf); a table of words beside, or one with numbers, stays."""
    head = [["Loan Type", "Rate p.a.", "Comparison rate"], ["", "Annual", "Annual"]]
    body = [["Standard Variable Rate", "5.37%", "5.51%"], ["1 Year Fixed Rate", "4.04%", "5.38%"]]
    beside = [["Fees", "Amount"], ["Package fee", "$395"]]
    grids = [
        (1, (10.0, 74.0, 832.0, 417.0), body),
        (1, (10.0, 31.0, 832.0, 73.0), head),
        (1, (426.0, 425.0, 832.0, 537.0), beside),
    ]
    assert headed(grids) == [(1, (10.0, 31.0, 832.0, 417.0), head + body), grids[2]]
    numbered_head = [["2019", "2020", "2021"]]
    apart = [(1, (10.0, 31.0, 832.0, 73.0), numbered_head), (1, (10.0, 74.0, 832.0, 417.0), body)]
    assert headed(apart) == apart  # a row of numbers is data, not a header
    narrow = [(1, (10.0, 31.0, 300.0, 73.0), head), (1, (10.0, 74.0, 832.0, 417.0), body)]
    assert headed(narrow) == narrow  # a narrower table above: one of its own

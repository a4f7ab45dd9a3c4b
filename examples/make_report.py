"""Writes the example PDFs with ruled tables (PyMuPDF): documents/rainfall-2024.pdf, a report
whose table has no caption, and documents/budget-2025.pdf, whose tables are named by the
captions printed above them ("Table 2.1: ...", "TABLE IV: ..."), not by their position.

python examples/make_report.py                    # both
python examples/make_report.py budget-2025.pdf    # only the ones named
"""

import sys
from pathlib import Path

import pymupdf

DOCUMENTS = Path(__file__).resolve().parent / "documents"

ROWS = [
    ["Station", "Rainfall 2024 (mm)", "Wettest month", "Pump hours"],
    ["Alder Creek", "812", "November", "6,140"],
    ["Birchfield", "764", "October", "11,920"],
    ["Cedar Hollow", "1,031", "March", "4,385"],
    ["Dunmore", "698", "November", "5,002"],
]
TEXT = (
    "Riverside Water - Annual rainfall report 2024\n\n"
    "This report summarises rainfall measured at the four pumping stations in 2024. Cedar Hollow "
    "recorded the most rain of any station, which is why its flood preparation was reviewed in "
    "the autumn. Birchfield ran its pumps for the most hours because it feeds the Stonebridge "
    "treatment plant.\n\n"
    "Table 1 lists the rainfall, the wettest month and the pump hours of each station."
)

BUDGET_TEXT = (
    "Budget 2025\n\n"
    "The board approved this budget in January. Operating costs grow by 5.5 percent, mostly "
    "because electricity became dearer, and three capital projects start during the year."
)
OPERATING = [
    ["Cost line", "2024 (kEUR)", "2025 (kEUR)", "Change"],
    ["Electricity", "1,240", "1,395", "+12.5%"],
    ["Staff", "2,310", "2,380", "+3.0%"],
    ["Maintenance", "640", "655", "+2.3%"],
    ["Treatment chemicals", "415", "430", "+3.6%"],
]
PROJECTS = [
    ["Project", "Site", "Cost (kEUR)", "Start"],
    ["Roof solar panels", "Head office", "96", "March"],
    ["Vehicle fleet renewal", "Garage", "210", "October"],
    ["Laboratory refit", "Laboratory", "75", "June"],
]
FUNDING_TEXT = (
    "Funding\n\n"
    "Water charges pay for most of the year. The regional grant is tied to the roof solar "
    "panels, and the loan is repaid over twelve years."
)
FUNDING = [
    ["Source", "Amount (kEUR)", "Share"],
    ["Water charges", "4,250", "81%"],
    ["Regional grant", "420", "8%"],
    ["Loan", "571", "11%"],
]


def ruled_table(
    page: pymupdf.Page, left: float, top: float, widths: list[float], rows: list[list[str]]
) -> None:
    """A table with a line around every cell (camelot's lattice reads it); rows 24 pt high."""
    height = 24.0
    shape = page.new_shape()
    right = left + sum(widths)
    for r in range(len(rows) + 1):
        shape.draw_line((left, top + height * r), (right, top + height * r))
    x = left
    for width in [0.0, *widths]:
        x += width
        shape.draw_line((x, top), (x, top + height * len(rows)))
    shape.finish(width=1.0, color=(0, 0, 0))
    shape.commit()
    for r, row in enumerate(rows):
        x = left
        for width, cell in zip(widths, row, strict=True):
            page.insert_text((x + 5, top + height * r + 16), cell, fontsize=10)
            x += width


def rainfall() -> pymupdf.Document:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(60, 60, 540, 300), TEXT, fontsize=11)
    ruled_table(page, 60.0, 320.0, [130.0, 120.0, 110.0, 100.0], ROWS)
    page2 = doc.new_page()
    page2.insert_textbox(
        pymupdf.Rect(60, 60, 540, 400),
        "Outlook for 2025\n\nThe Dunmore solar array will be extended by 40 panels. Alder Creek "
        "will receive a third pump, planned for the October inspection.",
        fontsize=11,
    )
    doc.set_metadata({"title": "Annual rainfall report 2024"})
    return doc


def budget() -> pymupdf.Document:
    """Two pages, three ruled tables, each with its caption printed just above it."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(60, 60, 540, 160), BUDGET_TEXT, fontsize=11)
    page.insert_text((60, 200), "Table 2.1: Operating budget by cost line", fontsize=10)
    ruled_table(page, 60.0, 212.0, [150.0, 100.0, 100.0, 80.0], OPERATING)
    page.insert_text((60, 380), "Table 2.2: Capital projects", fontsize=10)
    ruled_table(page, 60.0, 392.0, [150.0, 100.0, 100.0, 80.0], PROJECTS)
    page2 = doc.new_page()
    page2.insert_textbox(pymupdf.Rect(60, 60, 540, 160), FUNDING_TEXT, fontsize=11)
    page2.insert_text((60, 200), "TABLE IV: Funding sources 2025", fontsize=10)
    ruled_table(page2, 60.0, 212.0, [150.0, 120.0, 80.0], FUNDING)
    doc.set_metadata({"title": "Budget 2025"})
    return doc


MAKERS = {"rainfall-2024.pdf": rainfall, "budget-2025.pdf": budget}


def write(name: str, folder: Path = DOCUMENTS) -> Path:
    out = folder / name
    # no_new_id: the same script writes the same bytes
    MAKERS[name]().save(str(out), garbage=4, deflate=True, no_new_id=True)
    return out


def main(names: list[str]) -> None:
    for name in names or list(MAKERS):
        print(write(name))


if __name__ == "__main__":
    main(sys.argv[1:])

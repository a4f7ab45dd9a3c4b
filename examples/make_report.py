"""Writes documents/rainfall-2024.pdf, the example PDF with a ruled table (PyMuPDF).

python examples/make_report.py
"""

from pathlib import Path

import pymupdf

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


def main() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(60, 60, 540, 300), TEXT, fontsize=11)
    left, top, widths, height = 60.0, 320.0, [130.0, 120.0, 110.0, 100.0], 24.0
    shape = page.new_shape()
    right = left + sum(widths)
    for r in range(len(ROWS) + 1):
        shape.draw_line((left, top + height * r), (right, top + height * r))
    x = left
    for width in [0.0, *widths]:
        x += width
        shape.draw_line((x, top), (x, top + height * len(ROWS)))
    shape.finish(width=1.0, color=(0, 0, 0))
    shape.commit()
    for r, row in enumerate(ROWS):
        x = left
        for width, cell in zip(widths, row, strict=True):
            page.insert_text((x + 5, top + height * r + 16), cell, fontsize=10)
            x += width
    page2 = doc.new_page()
    page2.insert_textbox(
        pymupdf.Rect(60, 60, 540, 400),
        "Outlook for 2025\n\nThe Dunmore solar array will be extended by 40 panels. Alder Creek "
        "will receive a third pump, planned for the October inspection.",
        fontsize=11,
    )
    doc.set_metadata({"title": "Annual rainfall report 2024"})
    out = Path(__file__).resolve().parent / "documents" / "rainfall-2024.pdf"
    doc.save(str(out), garbage=4, deflate=True)
    print(out)


if __name__ == "__main__":
    main()

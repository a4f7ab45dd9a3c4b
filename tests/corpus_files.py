"""Small real documents the tests write themselves: text, Markdown and generated PDFs."""

from __future__ import annotations

from pathlib import Path

TEXTS = {
    "rivers.txt": (
        "The Nile is the longest river in Africa. It flows north through Egypt into the "
        "Mediterranean Sea. The Aswan High Dam controls its floods.\n\nThe Amazon carries more "
        "water than any other river. It drains much of Brazil and Peru."
    ),
    "mountains.md": (
        "# Mountains\n\nMount Everest is the highest mountain above sea level. It lies on the "
        "border of Nepal and China.\n\n## Alps\n\nMont Blanc is the highest peak of the Alps. "
        "The Alps stretch across France, Switzerland, Italy and Austria."
    ),
    "cities/egypt.txt": (
        "Cairo is the capital of Egypt. The city lies on the banks of the Nile. Alexandria was "
        "founded by Alexander the Great and has a famous library."
    ),
    "cities/nepal.md": (
        "# Kathmandu\n\nKathmandu is the capital of Nepal. Trekkers pass through it on the way "
        "to Mount Everest. The Kathmandu valley has seven world heritage sites."
    ),
}


def write_corpus(folder: Path, names: list[str] | None = None) -> Path:
    for name in names or list(TEXTS):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEXTS[name], encoding="utf-8")
    return folder


def write_copies(folder: Path, copies: int) -> Path:
    """``copies`` copies of every text, one folder each (``part00``, ...), each text starting
    "Copy i." so that every other sentence is repeated in every copy (ties for the k-NN links)."""
    for i in range(copies):
        part = folder / f"part{i:02d}"
        part.mkdir(parents=True, exist_ok=True)
        for name, text in TEXTS.items():
            (part / name.replace("/", "-")).write_text(f"Copy {i}. " + text, encoding="utf-8")
    return folder


def make_pdf(path: Path, pages: list[str], *, table: bool = False, password: str = "") -> Path:
    """A real PDF made with PyMuPDF: text pages, optionally a ruled table, optionally encrypted."""
    import pymupdf

    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 400), text, fontsize=11)
        if table:
            _ruled_table(page, [["Station", "Rainfall"], ["Aswan", "1 mm"], ["Cairo", "25 mm"]])
    options = {}
    if password:
        options = {
            "encryption": pymupdf.PDF_ENCRYPT_AES_256,
            "owner_pw": password,
            "user_pw": password,
        }
    doc.save(str(path), **options)
    doc.close()
    return path


def _ruled_table(page: object, cells: list[list[str]], top: float = 450) -> None:
    """Cells separated by ruled lines (what camelot's lattice mode finds)."""
    left, width, height = 72.0, 150.0, 24.0
    shape = page.new_shape()  # type: ignore[attr-defined]
    for r in range(len(cells) + 1):
        shape.draw_line((left, top + height * r), (left + width * len(cells[0]), top + height * r))
    for c in range(len(cells[0]) + 1):
        shape.draw_line((left + width * c, top), (left + width * c, top + height * len(cells)))
    shape.finish(width=1.2, color=(0, 0, 0))
    shape.commit()
    for r, row in enumerate(cells):
        for c, cell in enumerate(row):
            page.insert_text((left + width * c + 6, top + height * r + 16), cell, fontsize=10)  # type: ignore[attr-defined]


def make_image_pdf(path: Path) -> Path:
    """A PDF whose only page is a picture: nothing to extract without OCR."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(200)
    page.insert_image(pymupdf.Rect(72, 72, 300, 300), pixmap=pix)
    doc.save(str(path))
    doc.close()
    return path

"""Scanned PDF pages read by OCR: a page without a text layer but with pictures is rendered and
read by the Tesseract built into PyMuPDF, which needs Tesseract's English language data (the
Debian packages ``tesseract-ocr`` and ``tesseract-ocr-eng``). Without it such pages are not read,
and the PDF reader says which; ``kgp doctor`` says whether OCR is available."""

from __future__ import annotations

import glob
import logging
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

LANGUAGE = "eng"
DPI = 300  # Tesseract reads body text best at about 300 dpi
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-eng"
_DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/*/tessdata"

logger = logging.getLogger(__name__)


@cache
def tessdata() -> str | None:
    """The folder of Tesseract's language data that holds English (where PyMuPDF finds it:
    ``TESSDATA_PREFIX``, an installed ``tesseract``; else Debian's), or None: no OCR."""
    import pymupdf

    folders: list[str] = []
    with suppress(Exception):  # RuntimeError: no Tesseract found; OSError from its probe
        folders.append(str(Path(pymupdf.get_tessdata())))
    folders += sorted(glob.glob(_DEBIAN_TESSDATA), reverse=True)
    return next((f for f in folders if (Path(f) / f"{LANGUAGE}.traineddata").is_file()), None)


def availability() -> str:
    """One line for ``kgp doctor``: whether scanned pages can be read, and how to make them."""
    folder = tessdata()
    if folder is not None:
        return f"Tesseract ({LANGUAGE}) in {folder}: scanned PDF pages are read"
    return f"not available: scanned PDF pages are skipped; add it with: {INSTALL}"


@dataclass
class Scans:
    """A PDF's pages without a text layer: those OCR read (the page object and its OCR text,
    which PyMuPDF reads only through that same page object) and those it could not."""

    read: dict[int, tuple[Any, Any]] = field(default_factory=dict)
    unread: list[int] = field(default_factory=list)


def read_scans(doc: Any, layout: Callable[[int], dict[str, Any]], folder: str | None) -> Scans:
    """OCR each page of ``doc`` whose ``layout`` (its "dict") has no text but whose page has a
    picture, with the language data in ``folder`` (None: no OCR, every such page unread)."""
    scans = Scans()
    for number in range(1, doc.page_count + 1):
        if any(block.get("lines") for block in layout(number).get("blocks", [])):
            continue
        page = doc[number - 1]
        if not page.get_images():
            continue  # a blank page
        if folder is None:
            scans.unread.append(number)
            continue
        try:
            textpage = page.get_textpage_ocr(language=LANGUAGE, dpi=DPI, full=True, tessdata=folder)
        except Exception as exc:  # MuPDF raises its own types for a failed render or OCR
            logger.debug("page %d: OCR failed: %s", number, exc)  # the reader names the page
            scans.unread.append(number)
            continue
        scans.read[number] = (page, textpage)
    return scans


def page_list(numbers: list[int]) -> str:
    """ "page 3", "pages 1-4, 7"."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs]
    return ("page " if len(numbers) == 1 else "pages ") + ", ".join(parts)


def unread_reason(numbers: list[int], ocr: bool) -> str:
    """Why the scanned pages ``numbers`` were not read (``ocr``: whether OCR was available)."""
    scans = "is a scanned image" if len(numbers) == 1 else "are scanned images"
    if ocr:
        return f"{page_list(numbers)} {scans} that OCR could not read"
    return f"{page_list(numbers)} {scans} and OCR is not available; add it with: {INSTALL}"

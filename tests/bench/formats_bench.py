"""Ingest cost by document format, with the same encoder embedding the same texts alone as the
baseline.

    python -m tests.bench.formats_bench [--entries 300] [--formats .pdf,.docx,...]

The first ``--entries`` of the 2Wiki corpus are written as documents of each format kgp reads,
``--per-document`` entries each (a heading and a paragraph per entry; a row of a ``title, text``
table for .csv, .xlsx and .xls; a slide per entry for .pptx; for .pdf, pages flowed by PyMuPDF).
Each folder is synced into a fresh embedded store by kgp's shipped encoder, loaded once; then:

- the encoder alone embeds the texts the sync's encoder read, twice right after the sync (the
  machine's speed drifts): the mean of both;
- the format's reader alone reads every file (``reader_for(path).read``).

Per format: documents, passages, sync seconds, encoder-alone seconds, ratio (encoder alone over
sync: 1.0 would mean ingest costs nothing beyond embedding), reading seconds, and the seconds the
sync spent in the encoder's own calls and the rest (reading, splitting, keywords, linking and
writes not overlapped with embedding): on a busy machine the encoder's speed swings from run to
run, and this split, measured within one sync, is the steadier figure. A Markdown table, and
last one JSON line keyed by format.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docx
import kgp
import numpy as np
import openpyxl
import pptx
import pymupdf
import xlwt
from kgp.ingest.embedding import Encoder
from kgp.ingest.readers import reader_for
from kgp.model import SHIPPED_MODEL

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "qa" / "train" / "2wiki_corpus.json"
FORMATS = (".pdf", ".docx", ".pptx", ".html", ".csv", ".xlsx", ".xls", ".md", ".txt")
PAGE = pymupdf.paper_rect("a4")
MARGIN = 56  # points around a PDF page's text
TEXT_AREA = pymupdf.Rect(MARGIN, MARGIN, PAGE.width - MARGIN, PAGE.height - MARGIN)


@dataclass(frozen=True, slots=True)
class Entry:
    title: str
    text: str


# -- writing the documents: one function per format, each writing one file of entries -------


def write_txt(path: Path, entries: Sequence[Entry]) -> None:
    path.write_text("".join(f"{e.title}\n\n{e.text}\n\n" for e in entries))


def write_md(path: Path, entries: Sequence[Entry]) -> None:
    path.write_text("".join(f"## {e.title}\n\n{e.text}\n\n" for e in entries))


def html_body(entries: Sequence[Entry]) -> str:
    return "".join(
        f"<h2>{html.escape(e.title)}</h2>\n<p>{html.escape(e.text)}</p>\n" for e in entries
    )


def write_html(path: Path, entries: Sequence[Entry]) -> None:
    title = html.escape(entries[0].title)
    path.write_text(
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body>\n{html_body(entries)}</body></html>\n"
    )


def write_pdf(path: Path, entries: Sequence[Entry]) -> None:
    """Pages of text flowed by PyMuPDF's Story: the headings and paragraphs of the HTML."""
    story = pymupdf.Story(html=html_body(entries))
    writer = pymupdf.DocumentWriter(str(path))
    more = True
    while more:
        device = writer.begin_page(PAGE)
        more, _ = story.place(TEXT_AREA)
        story.draw(device)
        writer.end_page()
    writer.close()


def write_docx(path: Path, entries: Sequence[Entry]) -> None:
    document = docx.Document()
    for e in entries:
        document.add_heading(e.title, level=2)
        document.add_paragraph(e.text)
    document.save(str(path))


def write_pptx(path: Path, entries: Sequence[Entry]) -> None:
    deck = pptx.Presentation()
    layout = deck.slide_layouts[1]  # title and content
    for e in entries:
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = e.title
        slide.placeholders[1].text = e.text
    deck.save(str(path))


def write_csv(path: Path, entries: Sequence[Entry]) -> None:
    with path.open("w", newline="") as out:
        rows = csv.writer(out)
        rows.writerow(["title", "text"])
        rows.writerows([e.title, e.text] for e in entries)


def write_xlsx(path: Path, entries: Sequence[Entry]) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["title", "text"])
    for e in entries:
        sheet.append([e.title, e.text])
    book.save(path)


def write_xls(path: Path, entries: Sequence[Entry]) -> None:
    book = xlwt.Workbook(encoding="utf-8")
    sheet = book.add_sheet("entries")
    for r, row in enumerate([("title", "text"), *((e.title, e.text) for e in entries)]):
        for c, value in enumerate(row):
            sheet.write(r, c, value)
    book.save(str(path))


WRITERS: dict[str, Callable[[Path, Sequence[Entry]], None]] = {
    ".pdf": write_pdf,
    ".docx": write_docx,
    ".pptx": write_pptx,
    ".html": write_html,
    ".csv": write_csv,
    ".xlsx": write_xlsx,
    ".xls": write_xls,
    ".md": write_md,
    ".txt": write_txt,
}


def write_folder(folder: Path, suffix: str, entries: Sequence[Entry], per: int) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for start in range(0, len(entries), per):
        path = folder / f"doc-{start // per:04d}{suffix}"
        WRITERS[suffix](path, entries[start : start + per])
        paths.append(path)
    return paths


# -- measuring ------------------------------------------------------------------------------


class TimedEncoder(Encoder):
    """The encoder, adding up the seconds its ``encode`` calls take, a sync's included, and
    keeping the texts they read."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        self.seconds = 0.0
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        started = time.perf_counter()
        try:
            return super().encode(texts)
        finally:
            self.seconds += time.perf_counter() - started


@dataclass(slots=True)
class Measure:
    """One format's figures; ``alone``: each run of the encoder alone (its figure: the mean)."""

    documents: int
    passages: int
    reads: list[str]  # what the sync's encoder read
    sync_s: float
    in_sync_s: float  # of sync_s, in the encoder's calls
    reading_s: float
    alone: list[float]

    def time_encoder(self, encoder: Encoder) -> None:
        started = time.perf_counter()
        encoder.encode(self.reads)
        self.alone.append(time.perf_counter() - started)

    @property
    def encoder_s(self) -> float:
        return statistics.mean(self.alone)

    @property
    def ratio(self) -> float:
        return self.encoder_s / self.sync_s

    def figures(self) -> dict[str, float | int]:
        return {
            "documents": self.documents,
            "passages": self.passages,
            "texts": len(self.reads),
            "sync_s": round(self.sync_s, 3),
            "encoder_s": round(self.encoder_s, 3),
            "ratio": round(self.ratio, 3),
            "reading_s": round(self.reading_s, 3),
            "in_sync_s": round(self.in_sync_s, 3),
        }


def reading_seconds(paths: Sequence[Path]) -> float:
    """The reader alone over every file; the first file is read once before, untimed, so the
    format's libraries are imported (as they are for the sync that follows)."""
    reader = reader_for(paths[0])
    if reader is None:
        raise SystemExit(f"kgp reads no {paths[0].suffix} files")
    reader.read(paths[0], paths[0].read_bytes())
    started = time.perf_counter()
    for path in paths:
        reader.read(path, path.read_bytes())
    return time.perf_counter() - started


def measure(
    suffix: str, entries: Sequence[Entry], per: int, work: Path, encoder: TimedEncoder
) -> Measure:
    paths = write_folder(work / suffix.lstrip("."), suffix, entries, per)
    reading_s = reading_seconds(paths)
    with kgp.open(data_dir=work / f"data-{suffix.lstrip('.')}", loaded_encoder=encoder) as kg:
        encoder.seconds, encoder.texts = 0.0, []
        started = time.perf_counter()
        report = kg.sync(paths[0].parent)
        sync_s = time.perf_counter() - started
        if report.skipped:
            raise SystemExit(f"{suffix}: skipped {report.skipped}")
    reads = list(encoder.texts)  # what the sync's encoder read
    return Measure(
        len(report.added), report.passages, reads, sync_s, encoder.seconds, reading_s, []
    )


def markdown_table(results: dict[str, Measure]) -> str:
    lines = [
        "| format | documents | passages | sync s | encoder alone s | ratio | reading s "
        "| sync: in the encoder s | sync: the rest s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for suffix, m in results.items():
        lines.append(
            f"| {suffix} | {m.documents} | {m.passages} | {m.sync_s:.1f} | {m.encoder_s:.1f} "
            f"| {m.ratio:.2f} | {m.reading_s:.2f} | {m.in_sync_s:.1f} "
            f"| {m.sync_s - m.in_sync_s:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--entries", type=int, default=300, help="corpus entries per format")
    parser.add_argument("--per-document", type=int, default=10, help="entries per document")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated suffixes")
    args = parser.parse_args()
    formats = [f if f.startswith(".") else f".{f}" for f in args.formats.split(",") if f]
    if unknown := [f for f in formats if f not in WRITERS]:
        sys.exit(f"no writer for {unknown}; choose among {','.join(FORMATS)}")
    if not args.corpus.is_file():
        sys.exit(f"no corpus at {args.corpus}; pass --corpus")
    raw = json.loads(args.corpus.read_text())[: args.entries]
    entries = [Entry(" ".join(e["title"].split()), " ".join(e["text"].split())) for e in raw]
    encoder = TimedEncoder(model=SHIPPED_MODEL)
    encoder.load()
    encoder.encode([e.text for e in entries[:64]])  # warm up
    results: dict[str, Measure] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in formats:
            m = measure(suffix, entries, args.per_document, Path(tmp), encoder)
            m.time_encoder(encoder)
            m.time_encoder(encoder)
            results[suffix] = m
            print(
                f"{suffix}: {m.documents} documents, {m.passages} passages "
                f"({len(m.reads)} texts): sync {m.sync_s:.2f} s (in the encoder "
                f"{m.in_sync_s:.2f} s), encoder alone {' and '.join(f'{s:.2f}' for s in m.alone)} "
                f"s, reading {m.reading_s:.2f} s",
                flush=True,
            )
    print()
    print(markdown_table(results))
    print(json.dumps({s: m.figures() for s, m in results.items()}, separators=(",", ":")))


if __name__ == "__main__":
    main()

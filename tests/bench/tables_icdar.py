"""Table extraction against the ICDAR 2013 ground truth in ../shared/data/pdfs/icdar2013/.

    python -m tests.bench.tables_icdar [--methods kgp lattice stream pymupdf ...]

Each method turns a PDF into (page, grid of cell strings) per table found (``METHODS``): ``kgp`` is
kgp's PDF reader (camelot lattice, then stream, its tables read back from their Markdown); the
others call one library on every page with its defaults: camelot ``lattice`` and ``stream``,
PyMuPDF's ``find_tables`` (``pymupdf``, and ``pymupdf-text`` with ``strategy="text"``),
pdfplumber's ``extract_tables`` (``pdfplumber``, and ``pdfplumber-text`` with the text strategy
both ways; pdfplumber is not a kgp dependency: ``pip install pdfplumber``); ``truth-grid`` is the
ground truth without its spanning cells, the ceiling of a method that reports none. Seconds are
the methods' own. Three scores per method, each against the ``-str.xml`` files:

- Structure, as the ICDAR 2013 table competition scores it: every non-empty cell's adjacency
  relation to its nearest non-empty neighbour to the right in the same row and below in the same
  column (a truth cell spanning rows or columns has one per row or column it spans; an extracted
  cell spans one), texts compared with all whitespace removed and case-folded. Relations are
  matched as multisets between the tables of the same page; precision, recall and F1 per
  document, F1 over all relations (micro) and the mean of the documents' F1 (macro). Also per kind
  of page: ruled (camelot's lattice, which needs drawn rules, finds its ground-truth tables) or
  unruled; relations found on pages without a ground-truth table are "spurious".
- Tables found per page (precision and recall of the count).
- Cell text: the share of ground-truth cells whose text (whitespace-normalised, case-folded) is a
  cell of the extracted table of the same page that shares the most cells with it."""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ICDAR = REPO.parent / "shared" / "data" / "pdfs" / "icdar2013"

Grid = list[list[str]]
Tables = list[tuple[int, Grid]]  # (page, grid) per table
Cell = tuple[int, int, int, int, str]  # first row, first column, last row, last column, text
Relation = tuple[str, str, str]  # text, neighbour's text, "right" or "below"


def norm(text: str) -> str:
    return " ".join(text.replace("\\|", "|").split()).casefold()


def key(text: str) -> str:
    return "".join(text.split()).casefold()


@dataclass(frozen=True)
class Truth:
    page: int
    cells: list[Cell]
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in PDF coordinates (origin bottom-left)


def truth(structure: Path) -> list[Truth]:
    """Every table region of a ``-str.xml`` file, with its cells and their bounding box."""
    regions = []
    for region in ET.parse(structure).getroot().iter("region"):
        cells: list[Cell] = []
        xs: list[float] = []
        ys: list[float] = []
        for c in region.iter("cell"):
            row, col = int(c.get("start-row", "0")), int(c.get("start-col", "0"))
            end_row, end_col = int(c.get("end-row", row)), int(c.get("end-col", col))
            cells.append((row, col, end_row, end_col, c.findtext("content") or ""))
            box = c.find("bounding-box")
            if box is not None:
                xs += [float(box.get("x1", 0)), float(box.get("x2", 0))]
                ys += [float(box.get("y1", 0)), float(box.get("y2", 0))]
        bbox = (min(xs), min(ys), max(xs), max(ys)) if xs else (0.0, 0.0, 0.0, 0.0)
        regions.append(Truth(int(region.get("page", "1")), cells, bbox))
    return regions


def grid_cells(grid: Grid) -> list[Cell]:
    return [(r, c, r, c, text) for r, row in enumerate(grid) for c, text in enumerate(row)]


def relations(cells: Iterable[Cell]) -> Counter[Relation]:
    """Each non-empty cell's relations to its nearest non-empty neighbours right and below."""
    filled = [(r0, c0, r1, c1, key(text)) for r0, c0, r1, c1, text in cells if key(text)]
    at: dict[tuple[int, int], int] = {}
    for i, (r0, c0, r1, c1, _) in enumerate(filled):
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                at.setdefault((r, c), i)
    last_row = max((r for r, _ in at), default=0)
    last_col = max((c for _, c in at), default=0)
    found: Counter[Relation] = Counter()
    for i, (r0, c0, r1, c1, text) in enumerate(filled):
        right = {
            next((at[r, c] for c in range(c1 + 1, last_col + 1) if (r, c) in at), -1)
            for r in range(r0, r1 + 1)
        }
        below = {
            next((at[r, c] for r in range(r1 + 1, last_row + 1) if (r, c) in at), -1)
            for c in range(c0, c1 + 1)
        }
        found.update((text, filled[j][4], "right") for j in right - {-1, i})
        found.update((text, filled[j][4], "below") for j in below - {-1, i})
    return found


# --- methods: a PDF's tables as (page, grid) ---------------------------------------------------


def _text(cell: Any) -> str:
    return "" if cell is None else str(cell)


def kgp_tables(pdf: Path) -> Tables:
    from kgp.ingest.pdf import PdfReader
    from kgp.ingest.tables import parse_markdown_table

    read = PdfReader().read(pdf, pdf.read_bytes())
    return [(t.page, parse_markdown_table(t.markdown)) for t in read.tables]


def camelot_tables(flavor: str) -> Callable[[Path], Tables]:
    def read(pdf: Path) -> Tables:
        import camelot

        logging.getLogger("camelot").setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = camelot.read_pdf(str(pdf), pages="all", flavor=flavor)
        return [
            (int(t.page), [[_text(c) for c in row] for row in t.df.values.tolist()]) for t in found
        ]

    return read


def pymupdf_tables(**options: Any) -> Callable[[Path], Tables]:
    def read(pdf: Path) -> Tables:
        import pymupdf

        found: Tables = []
        with pymupdf.open(pdf) as doc:
            for page in doc:
                for table in page.find_tables(**options).tables:
                    grid = [[_text(c) for c in row] for row in table.extract()]
                    found.append((page.number + 1, grid))
        return found

    return read


def pdfplumber_tables(**settings: Any) -> Callable[[Path], Tables]:
    def read(pdf: Path) -> Tables:
        import pdfplumber

        with pdfplumber.open(pdf) as doc:
            return [
                (page.page_number, [[_text(c) for c in row] for row in grid])
                for page in doc.pages
                for grid in page.extract_tables(settings or None)
            ]

    return read


def truth_tables(pdf: Path) -> Tables:
    """The ground truth as grids, each cell's text in its first row and column: the ceiling of a
    method that reports no spanning cells."""
    found: Tables = []
    for table in truth(pdf.with_name(pdf.stem + "-str.xml")):
        rows = max((c[2] for c in table.cells), default=-1) + 1
        cols = max((c[3] for c in table.cells), default=-1) + 1
        grid = [[""] * cols for _ in range(rows)]
        for row, col, _, _, text in table.cells:
            grid[row][col] = text
        found.append((table.page, grid))
    return found


TEXT = {"vertical_strategy": "text", "horizontal_strategy": "text"}
METHODS: dict[str, Callable[[Path], Tables]] = {
    "kgp": kgp_tables,
    "lattice": camelot_tables("lattice"),
    "stream": camelot_tables("stream"),
    "pymupdf": pymupdf_tables(),
    "pymupdf-text": pymupdf_tables(strategy="text"),
    "pdfplumber": pdfplumber_tables(),
    "pdfplumber-text": pdfplumber_tables(**TEXT),
    "truth-grid": truth_tables,
}


# --- scores ------------------------------------------------------------------------------------


@dataclass
class Score:
    truth_tables: int = 0
    found_tables: int = 0
    matched_tables: int = 0
    truth_cells: int = 0
    matched_cells: int = 0
    truth_relations: int = 0
    found_relations: int = 0
    matched_relations: int = 0

    def precision(self) -> float:
        return self.matched_relations / self.found_relations if self.found_relations else 0.0

    def recall(self) -> float:
        return self.matched_relations / self.truth_relations if self.truth_relations else 0.0

    def f1(self) -> float:
        found, truth = self.found_relations, self.truth_relations
        return 2 * self.matched_relations / (found + truth) if found + truth else 0.0

    def line(self, name: str) -> str:
        p = self.matched_tables / self.found_tables if self.found_tables else 0.0
        r = self.matched_tables / self.truth_tables if self.truth_tables else 0.0
        c = self.matched_cells / self.truth_cells if self.truth_cells else 0.0
        return (
            f"{name:<16} tables truth {self.truth_tables:>3} found {self.found_tables:>3}  "
            f"precision {p:.2f} recall {r:.2f}  cell text {c:.2f}  "
            f"relations precision {self.precision():.2f} recall {self.recall():.2f} "
            f"F1 {self.f1():.2f}"
        )

    def add(self, other: Score) -> None:
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def score_page(expected: list[Truth], found: list[Grid]) -> Score:
    """One page's ground-truth tables against the tables found on it."""
    score = Score(truth_tables=len(expected), found_tables=len(found))
    score.matched_tables = min(len(expected), len(found))
    found_cells = [{norm(c) for row in grid for c in row} - {""} for grid in found]
    for table in expected:
        cells = {norm(c[4]) for c in table.cells} - {""}
        score.truth_cells += len(cells)
        score.matched_cells += max((len(cells & f) for f in found_cells), default=0)
    truth_relations: Counter[Relation] = Counter()
    for table in expected:
        truth_relations += relations(table.cells)
    found_relations: Counter[Relation] = Counter()
    for grid in found:
        found_relations += relations(grid_cells(grid))
    score.truth_relations = sum(truth_relations.values())
    score.found_relations = sum(found_relations.values())
    score.matched_relations = sum((truth_relations & found_relations).values())
    return score


RULED_COVER = 0.5  # share of a ground-truth table's box that a lattice table must cover


def page_kinds(pdf: Path, expected: list[Truth]) -> dict[int, str]:
    """ "ruled" for a page whose ground-truth tables camelot's lattice finds (it needs drawn
    rules), "unruled" for one where it finds none of them, "mixed" otherwise."""
    import camelot

    pages = sorted({t.page for t in expected})
    logging.getLogger("camelot").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lattice = camelot.read_pdf(str(pdf), pages=",".join(map(str, pages)), flavor="lattice")
    boxes = [(int(t.page), t._bbox) for t in lattice]

    def ruled(table: Truth) -> bool:
        x0, y0, x1, y1 = table.box
        area = max((x1 - x0) * (y1 - y0), 1.0)
        return any(
            p == table.page
            and max(min(x1, b[2]) - max(x0, b[0]), 0) * max(min(y1, b[3]) - max(y0, b[1]), 0)
            >= RULED_COVER * area
            for p, b in boxes
        )

    kinds = {}
    for page in pages:
        verdicts = {ruled(t) for t in expected if t.page == page}
        kinds[page] = "mixed" if len(verdicts) > 1 else "ruled" if True in verdicts else "unruled"
    return kinds


@dataclass
class Document:
    name: str
    pdf: Path
    expected: list[Truth]
    kinds: dict[int, str]


def documents(names: Iterable[str] = ()) -> list[Document]:
    wanted = set(names)
    docs = []
    for pdf in sorted(ICDAR.glob("*.pdf")):
        if wanted and pdf.stem not in wanted:
            continue
        expected = truth(pdf.with_name(pdf.stem + "-str.xml"))
        docs.append(Document(pdf.stem, pdf, expected, {}))
    return docs


@dataclass
class Result:
    documents: dict[str, Score]  # per document
    kinds: dict[str, Score]  # per kind of page, over all documents
    seconds: float

    def total(self) -> Score:
        total = Score()
        for score in self.documents.values():
            total.add(score)
        return total

    def macro_f1(self) -> float:
        return sum(s.f1() for s in self.documents.values()) / max(len(self.documents), 1)


def run(method: str, docs: list[Document]) -> Result:
    extract = METHODS[method]
    result = Result({}, {}, 0.0)
    for doc in docs:
        start = time.perf_counter()
        found = extract(doc.pdf)
        result.seconds += time.perf_counter() - start
        pages = {t.page for t in doc.expected} | {page for page, _ in found}
        total = Score()
        for page in sorted(pages):
            score = score_page(
                [t for t in doc.expected if t.page == page], [g for p, g in found if p == page]
            )
            total.add(score)
            if doc.kinds:
                result.kinds.setdefault(doc.kinds.get(page, "none"), Score()).add(score)
        result.documents[doc.name] = total
    return result


def evaluate(method: str = "kgp") -> dict[str, Score]:
    """Per document and "all": the scores of ``method`` on every ICDAR document."""
    result = run(method, documents())
    return {**result.documents, "all": result.total()}


LOW_F1 = 0.6  # a document below it counts in "docs below 0.6"


# --- report ------------------------------------------------------------------------------------


def report(results: dict[str, Result], pages: Counter[str]) -> str:
    """Markdown tables (all relations; per kind of page, ``pages`` counting each kind), then
    each method's counts and cell text, then F1 per document, worst first for the first method."""
    lines = ["| method | micro F1 | macro F1 | docs below 0.6 | precision | recall | seconds |"]
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    for name, result in results.items():
        total = result.total()
        low = sum(s.f1() < LOW_F1 for s in result.documents.values())
        lines.append(
            f"| {name} | {total.f1():.3f} | {result.macro_f1():.3f} | {low} | "
            f"{total.precision():.3f} | {total.recall():.3f} | {result.seconds:.0f} |"
        )
    kinds = sorted(pages)
    head = " | ".join(f"{k}, {pages[k]} pages: F1 (P / R)" for k in kinds)
    lines += ["", f"| method | {head} | spurious relations |"]
    lines.append("| --- |" + " --- |" * (len(kinds) + 1))
    for name, result in results.items():
        cells = []
        for kind in kinds:
            s = result.kinds.get(kind, Score())
            cells.append(f"{s.f1():.3f} ({s.precision():.2f} / {s.recall():.2f})")
        spurious = result.kinds.get("none", Score()).found_relations
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {spurious} |")
    lines.append("")
    lines += [result.total().line(name) for name, result in results.items()]
    first = next(iter(results.values()))
    order = sorted(first.documents, key=lambda d: (first.documents[d].f1(), d))
    lines += ["", f"{'F1 per document':<16}" + "".join(f"{n[:15]:>16}" for n in results)]
    for doc in order:
        lines.append(
            f"{doc:<16}" + "".join(f"{r.documents[doc].f1():>16.3f}" for r in results.values())
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=["kgp"])
    parser.add_argument("--docs", nargs="+", default=[], help="document names (eu-001 ...)")
    args = parser.parse_args()
    if not ICDAR.is_dir():
        sys.exit(f"no ICDAR data at {ICDAR}")
    docs = documents(args.docs)
    for doc in docs:
        doc.kinds = page_kinds(doc.pdf, doc.expected)
    results = {}
    for method in args.methods:
        try:
            results[method] = run(method, docs)
        except ImportError as exc:  # pdfplumber is no kgp dependency
            sys.exit(f"{method}: {exc} (pip install {exc.name})")
        print(f"{method}: {results[method].seconds:.1f} s", file=sys.stderr)
    print(report(results, Counter(k for doc in docs for k in doc.kinds.values())))


if __name__ == "__main__":
    main()

"""Table extraction against the ICDAR 2013 ground truth in ../shared/data/pdfs/icdar2013/.

    python -m tests.bench.tables_icdar

Tables found per page (precision and recall of the count), and cell text: the share of
ground-truth cells whose text (whitespace-normalised, case-folded) is a cell of the extracted
table of the same page that shares the most cells with it."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kgp.ingest.pdf import PdfReader

REPO = Path(__file__).resolve().parents[2]
ICDAR = REPO.parent / "shared" / "data" / "pdfs" / "icdar2013"


def norm(text: str) -> str:
    return " ".join(text.replace("\\|", "|").split()).casefold()


def truth(structure: Path) -> list[tuple[int, set[str]]]:
    """(page, cell texts) of every table region of a ``-str.xml`` file."""
    regions = []
    for region in ET.parse(structure).getroot().iter("region"):
        cells = {norm(c.findtext("content") or "") for c in region.iter("cell")}
        regions.append((int(region.get("page", "1")), {c for c in cells if c}))
    return regions


def markdown_cells(markdown: str) -> set[str]:
    cells: set[str] = set()
    for line in markdown.splitlines():
        if line.startswith("|---"):
            continue
        cells.update(norm(cell) for cell in line.strip().strip("|").split(" | "))
    return {c for c in cells if c}


@dataclass
class Score:
    truth_tables: int = 0
    found_tables: int = 0
    matched_tables: int = 0
    truth_cells: int = 0
    matched_cells: int = 0

    def line(self, name: str) -> str:
        p = self.matched_tables / self.found_tables if self.found_tables else 0.0
        r = self.matched_tables / self.truth_tables if self.truth_tables else 0.0
        c = self.matched_cells / self.truth_cells if self.truth_cells else 0.0
        return (
            f"{name:<12} tables truth {self.truth_tables:>3} found {self.found_tables:>3}  "
            f"precision {p:.2f} recall {r:.2f}  cell text {c:.2f}"
        )

    def add(self, other: Score) -> None:
        for key in vars(self):
            setattr(self, key, getattr(self, key) + getattr(other, key))


def score_pdf(pdf: Path) -> Score:
    read = PdfReader().read(pdf, pdf.read_bytes())
    expected = truth(pdf.with_name(pdf.stem + "-str.xml"))
    found = [(t.page, markdown_cells(t.markdown)) for t in read.tables]
    score = Score(truth_tables=len(expected), found_tables=len(found))
    per_page_truth = Counter(page for page, _ in expected)
    per_page_found = Counter(page for page, _ in found)
    score.matched_tables = sum(min(n, per_page_found[p]) for p, n in per_page_truth.items())
    for page, cells in expected:
        candidates = [f for p, f in found if p == page]
        best = max((len(cells & f) for f in candidates), default=0)
        score.truth_cells += len(cells)
        score.matched_cells += best
    return score


def evaluate() -> dict[str, Score]:
    results = {pdf.stem: score_pdf(pdf) for pdf in sorted(ICDAR.glob("*.pdf"))}
    total = Score()
    for score in results.values():
        total.add(score)
    results["all"] = total
    return results


def main() -> None:
    if not ICDAR.is_dir():
        sys.exit(f"no ICDAR data at {ICDAR}")
    for name, score in evaluate().items():
        print(score.line(name))


if __name__ == "__main__":
    main()

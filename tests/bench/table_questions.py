"""Template questions about table cells, made from ICDAR 2013's ground truth, for the learned
order's training (``kgp train order --documents``; docs/decisions/0004-the-learned-order.md).

    kgp --data-dir DIR sync ../shared/data/pdfs/icdar2013   # (a copy of it: the PDFs alone)
    python -m tests.bench.table_questions ../shared/data/pdfs/icdar2013 DIR \
        > tests/fixtures/icdar2013_table_questions.jsonl

For each table of each ``-str.xml``, up to six data cells in distinct rows, chosen with a fixed
seed: a cell holding a digit whose row has a label (its first column, with letters) and whose
column a header (the rows above the first with a digit). The question names both, in one of five
wordings; its supporting reference is the line of the stored passage that holds the label and
the value (the table row as kgp extracted it). A cell whose row kgp did not extract with both
is left out, so the file follows the extraction of the day it was written (as the real-PDF
questions do); write it again when tables are read differently.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import kgp
from kgp.access import ADMIN_CALLER
from kgp.evaluate.targets import GoldResolver
from kgp.qa import Support

WORDINGS = (
    "What is the {column} for {row}?",
    "What was the {column} of {row}?",
    "{row}: what {column} does the table give?",
    "How much {column} is reported for {row}?",
    "Which {column} figure is listed for {row}?",
)
PER_TABLE = 6
LETTERS = re.compile(r"[A-Za-z]{3}")


def squeezed(text: str) -> str:
    return " ".join(text.split())


def grids(truth: Path) -> Iterator[tuple[str, dict[tuple[int, int], str]]]:
    """Each table of a ``-str.xml`` as its id and {(row, column): text}, spans filled."""
    for table in ET.parse(truth).getroot().iter("table"):
        grid: dict[tuple[int, int], str] = {}
        for cell in table.iter("cell"):
            top, left = int(cell.get("start-row", 0)), int(cell.get("start-col", 0))
            bottom = int(cell.get("end-row", top))
            right = int(cell.get("end-col", left))
            for row in range(top, bottom + 1):
                for column in range(left, right + 1):
                    grid[(row, column)] = squeezed(cell.findtext("content") or "")
        if grid:
            yield table.get("id", "?"), grid


def cells(grid: dict[tuple[int, int], str]) -> list[tuple[int, str, str, str]]:
    """The table's askable cells: (row, row label, column header, value)."""
    rows = max(r for r, _ in grid) + 1
    columns = max(c for _, c in grid) + 1
    header = 0
    while header < rows - 1 and not any(
        re.search(r"\d", grid.get((header, c), "")) for c in range(1, columns)
    ):
        header += 1
    header = max(header, 1)
    found = []
    for row in range(header, rows):
        label = grid.get((row, 0), "")
        if not LETTERS.search(label):
            continue
        for column in range(1, columns):
            value = grid.get((row, column), "")
            above = dict.fromkeys(grid.get((h, column), "") for h in range(header))
            title = " ".join(text for text in above if text)
            if re.search(r"\d", value) and LETTERS.search(title):
                found.append((row, label, title, value))
    return found


def questions(truth_dir: Path, resolver: GoldResolver, texts: dict[str, str]) -> Iterator[dict]:
    chance = random.Random(0)
    for truth in sorted(truth_dir.glob("*-str.xml")):
        document = truth.name.removesuffix("-str.xml") + ".pdf"
        for table, grid in grids(truth):
            options = cells(grid)
            chance.shuffle(options)
            rows_asked: set[int] = set()
            for row, label, title, value in options:
                if row in rows_asked or len(rows_asked) == PER_TABLE:
                    continue
                line = _stored_line(texts, document, label, value)
                if line is None:
                    continue
                wording = chance.choice(WORDINGS)
                if not resolver.resolve(Support(text=line))[0]:
                    continue
                rows_asked.add(row)
                yield {
                    "id": f"{document}#table={table}#row={row}",
                    "question": wording.format(column=title.lower(), row=label),
                    "answer": value,
                    "supporting": [line],
                }


def _stored_line(texts: dict[str, str], document: str, label: str, value: str) -> str | None:
    """The first table row (a line ``| … |``) of the document's stored passages holding both
    ``label`` and ``value`` (a prose line holding them, "by 10% in Italy", is not the cell)."""
    wanted = [squeezed(label).lower(), squeezed(value).lower()]
    for pid, text in texts.items():
        if not pid.startswith(document + "#"):
            continue
        for line in text.splitlines():
            plain = squeezed(line).lower()
            if plain.startswith("| ") and all(part in plain for part in wanted):
                return squeezed(line)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("truth", type=Path, help="the folder of -str.xml files and their PDFs")
    parser.add_argument("data_dir", type=Path, help="a data dir where those PDFs were synced")
    args = parser.parse_args()
    kg = kgp.open(data_dir=args.data_dir)
    try:
        with kg.store.reading_as(ADMIN_CALLER):
            documents = kg.store.list_documents()
            texts = {
                row.id: row.text for row in kg.store.document_passages([d.id for d in documents])
            }
            for question in questions(args.truth, GoldResolver(kg.store), texts):
                sys.stdout.write(json.dumps(question, ensure_ascii=False) + "\n")
    finally:
        kg.close()


if __name__ == "__main__":
    main()

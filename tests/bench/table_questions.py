"""Template questions about table cells, made from ICDAR 2013's ground truth, for the learned
order's training (``kgp train order --documents``; docs/decisions/0004-the-learned-order.md).

    kgp --data-dir DIR sync ../shared/data/pdfs/icdar2013
    python -m tests.bench.table_questions ../shared/data/pdfs/icdar2013 DIR \
        > tests/fixtures/icdar2013_table_questions.jsonl

For each table of each ``-str.xml``, up to six data cells in distinct rows, chosen with a fixed
seed: a cell holding a digit whose row has a label (its first column, with letters; a label of
rows in more than one table is not asked about) and whose column a header. The question names
both, in one of five wordings; its supporting reference is the stored table row whose first cell
is the label and another the value (the row as kgp extracted it). A cell without exactly one
such row is left out, so the file follows the extraction of the day it was written (as the
real-PDF questions do); write it again when tables are read differently.
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
from typing import Any

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


Grid = dict[tuple[int, int], tuple[str, tuple[int, int]]]  # place -> text, its cell's origin


def grids(truth: Path) -> Iterator[tuple[str, Grid]]:
    """Each table of a ``-str.xml`` as its id and {(row, column): (text, the cell's top-left)},
    a spanning cell in every place it covers."""
    for table in ET.parse(truth).getroot().iter("table"):
        grid: Grid = {}
        for cell in table.iter("cell"):
            top, left = int(cell.get("start-row", 0)), int(cell.get("start-col", 0))
            bottom = int(cell.get("end-row", top))
            right = int(cell.get("end-col", left))
            for row in range(top, bottom + 1):
                for column in range(left, right + 1):
                    grid[(row, column)] = (squeezed(cell.findtext("content") or ""), (top, left))
        if grid:
            yield table.get("id", "?"), grid


def header_rows(grid: Grid) -> int:
    """How many rows the header takes: those before the first with a digit beside its label,
    and on while the first column is still the header's spanning cell (a row of years or grade
    numbers under it is header too)."""
    rows = max(r for r, _ in grid) + 1
    columns = max(c for _, c in grid) + 1
    text = {place: value for place, (value, _) in grid.items()}
    header = 0
    while header < rows - 1 and not any(
        re.search(r"\d", text.get((header, c), "")) for c in range(1, columns)
    ):
        header += 1
    header = max(header, 1)
    corner = grid.get((0, 0), ("", (0, 0)))[1]
    while header < rows and (header, 0) in grid and grid[(header, 0)][1] == corner:
        header += 1
    return header


def cells(grid: Grid) -> list[tuple[int, str, str, str]]:
    """The table's askable cells: (row, row label, column header, value)."""
    text = {place: value for place, (value, _) in grid.items()}
    rows = max(r for r, _ in grid) + 1
    columns = max(c for _, c in grid) + 1
    header = header_rows(grid)
    found = []
    for row in range(header, rows):
        label = text.get((row, 0), "")
        if not LETTERS.search(label):
            continue
        for column in range(1, columns):
            value = text.get((row, column), "")
            above = dict.fromkeys(text.get((h, column), "") for h in range(header))
            title = " ".join(words for words in above if words)
            if re.search(r"\d", value) and LETTERS.search(title):
                found.append((row, label, title, value))
    return found


def labels_in_many_tables(truth_dir: Path) -> set[str]:
    """Row labels found in more than one table ("Total", "Spain"): a question naming one does
    not say which table it means, so none is asked."""
    tables: dict[str, set[str]] = {}
    for truth in sorted(truth_dir.glob("*-str.xml")):
        for table, grid in grids(truth):
            for _, label, _, _ in cells(grid):
                tables.setdefault(label.lower(), set()).add(f"{truth.name}#{table}")
    return {label for label, where in tables.items() if len(where) > 1}


def questions(
    truth_dir: Path, resolver: GoldResolver, rows: dict[str, list[str]]
) -> Iterator[dict]:
    chance = random.Random(0)
    ambiguous = labels_in_many_tables(truth_dir)
    for truth in sorted(truth_dir.glob("*-str.xml")):
        document = truth.name.removesuffix("-str.xml") + ".pdf"
        for table, grid in grids(truth):
            options = [cell for cell in cells(grid) if cell[1].lower() not in ambiguous]
            chance.shuffle(options)
            rows_asked: set[int] = set()
            for row, label, title, value in options:
                if row in rows_asked or len(rows_asked) == PER_TABLE:
                    continue
                line = _stored_row(rows.get(document, []), label, value)
                if line is None or not resolver.resolve(Support(text=line))[0]:
                    continue
                wording = chance.choice(WORDINGS)
                rows_asked.add(row)
                yield {
                    "id": f"{document}#table={table}#row={row}",
                    "question": wording.format(column=title.lower(), row=label),
                    "answer": value,
                    "supporting": [line],
                }


def _stored_row(rows: list[str], label: str, value: str) -> str | None:
    """The one of a document's stored table rows whose first cell is ``label`` and another cell
    ``value``; None when no row or more than one is."""
    wanted_label, wanted_value = squeezed(label).lower(), squeezed(value).lower()
    found = set()
    for row in rows:
        cells = [squeezed(cell).lower() for cell in row[1:-1].split("|")]
        if cells[0] == wanted_label and wanted_value in cells[1:]:
            found.add(row)
    return found.pop() if len(found) == 1 else None


def table_rows(passages: list[Any]) -> dict[str, list[str]]:
    """Each document's stored table rows (lines ``| … |`` of its passages), spaces squeezed."""
    rows: dict[str, list[str]] = {}
    for passage in passages:
        for line in passage.text.splitlines():
            plain = squeezed(line)
            if plain.startswith("| ") and plain.endswith(" |"):
                rows.setdefault(passage.doc_id, []).append(plain)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("truth", type=Path, help="the folder of -str.xml files and their PDFs")
    parser.add_argument("data_dir", type=Path, help="a data dir where those PDFs were synced")
    args = parser.parse_args()
    kg = kgp.open(data_dir=args.data_dir)
    try:
        with kg.store.reading_as(ADMIN_CALLER):
            documents = kg.store.list_documents()
            rows = table_rows(kg.store.document_passages([d.id for d in documents]))
            for question in questions(args.truth, GoldResolver(kg.store), rows):
                sys.stdout.write(json.dumps(question, ensure_ascii=False) + "\n")
    finally:
        kg.close()


if __name__ == "__main__":
    main()

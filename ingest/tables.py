"""Tables as Markdown, and tables as searchable passages.

A table is stored whole as a ``Table`` node (its Markdown answers "Table 3" questions). So that a
content question finds a value inside it ("how much did the Ministry of Defence get?"), its rows
are also passages: each holds the caption, the header rows and a few data rows, about as long as
a passage of prose, so a 40-column table is many passages of ordinary length instead of one that
matches every question. Pure functions."""

from __future__ import annotations

import re
from dataclasses import replace

from kgp.stores.model import TableRecord

CHUNK_CHARS = 600  # about the text of a passage the encoder sees whole
HEADER_READ = 160  # characters of a table's header the encoder reads: about a third of its window
HEADER_ROWS = 3  # at most this many leading rows are taken as the header
_CAPTION = re.compile(r"^\s*table\b", re.IGNORECASE)
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def markdown_table(cells: list[list[str]]) -> str:
    """A grid of cells as a Markdown table (the first row is the header)."""
    if not cells:
        return ""
    width = max(len(row) for row in cells)

    def clean(cell: str) -> str:
        return " ".join(str(cell).split()).replace("|", "\\|")

    rows = [[clean(c) for c in row] + [""] * (width - len(row)) for row in cells]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def parse_markdown_table(markdown: str) -> list[list[str]]:
    """The grid of a Markdown table written by :func:`markdown_table` (header row first)."""
    rows = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|") or re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line):
            continue
        cells = _CELL_SPLIT.split(line.strip("|"))
        rows.append([cell.strip().replace("\\|", "|") for cell in cells])
    return rows


def caption_row(rows: list[list[str]]) -> str:
    """A first row that is only a caption ("Table: 5 Public Health Outlay"), else ""."""
    if not rows:
        return ""
    filled = [cell for cell in rows[0] if cell]
    return filled[0] if len(filled) == 1 and _CAPTION.match(filled[0]) else ""


def is_caption(line: str) -> bool:
    """Whether a line of text reads as a table's caption ("Table 2: ...", "TABLE IV")."""
    return bool(_CAPTION.match(line))


def _numeric(row: list[str]) -> bool:
    filled = [cell for cell in row if cell]
    return bool(filled) and sum(any(ch.isdigit() for ch in c) for c in filled) * 2 >= len(filled)


def header_count(rows: list[list[str]]) -> int:
    """How many leading rows of a grid are its header when no reader said: the first, and those
    after it that are not mostly numbers, at most ``HEADER_ROWS`` (one row is left for data)."""
    head = 1
    while head < min(HEADER_ROWS, len(rows) - 1) and not _numeric(rows[head]):
        head += 1
    return head


def continued(previous: TableRecord, table: TableRecord) -> TableRecord | None:
    """``table`` with ``previous``'s header rows put back on top, when it reads as the rest of
    ``previous`` on the next page that lost its header there: the same columns and a first row
    that is data (mostly numbers), not a header row of ``previous`` printed again. Else None."""
    above, rows = parse_markdown_table(previous.markdown), parse_markdown_table(table.markdown)
    if not above or not rows or previous.cols != table.cols or table.page != previous.page + 1:
        return None
    header = above[: previous.header_rows or header_count(above)]
    if rows[0] in header or not _numeric(rows[0]):
        return None
    grid = header + rows
    return replace(table, markdown=markdown_table(grid), rows=len(grid), header_rows=len(header))


def table_chunks(
    markdown: str, caption: str = "", *, budget: int = CHUNK_CHARS, header_rows: int = 0
) -> list[tuple[str, str]]:
    """The table's rows as passages, each with what the encoder reads of it. A passage has the
    caption, the header rows and as many data rows as fit ``budget`` characters (at least one).
    The header is ``header_rows`` rows when the reader knows it (Word, PowerPoint, HTML, sheets:
    their first row), else the leading rows that are not mostly numbers, at most three (a PDF
    table's grid says nothing of it). The encoder reads the same caption, header and rows
    without Markdown (pipes, the rule line, empty cells) and the header cut to ``HEADER_READ``
    characters, so that the data rows telling one passage of a table from the next fit its
    window (128 tokens for kgp-traversal) under a wide header."""
    rows = parse_markdown_table(markdown)
    inside = caption_row(rows)
    if inside:
        rows = rows[1:]
        caption = caption or inside
    if not rows:
        return [(caption, caption)] if caption else []
    head = min(header_rows, len(rows)) or header_count(rows)
    lead = [caption, markdown_table(rows[:head])] if caption else [markdown_table(rows[:head])]
    read_lead = [caption, "; ".join(_filled(rows[:head]))[:HEADER_READ]]
    body = rows[head:]
    if not body:
        return [("\n".join(lead), _joined(read_lead))]
    chunks: list[tuple[str, str]] = []
    taken: list[tuple[list[str], str]] = []  # each row and its Markdown line
    size = sum(len(part) + 1 for part in lead)

    def chunk() -> tuple[str, str]:
        text = "\n".join([*lead, *(line for _, line in taken)])
        return text, _joined([*read_lead, *("; ".join(_filled([row])) for row, _ in taken)])

    for row in body:
        line = markdown_table([row]).splitlines()[0]
        if taken and size + len(line) > budget:
            chunks.append(chunk())
            taken, size = [], sum(len(part) + 1 for part in lead)
        taken.append((row, line))
        size += len(line) + 1
    chunks.append(chunk())
    return chunks


def _filled(rows: list[list[str]]) -> list[str]:
    return [" ".join(cell.split()) for row in rows for cell in row if cell.strip()]


def _joined(parts: list[str]) -> str:
    return "\n".join(part for part in parts if part)

"""Spreadsheet readers: CSV (the standard library's ``csv``) and Excel workbooks (openpyxl for
.xlsx, xlrd for the binary .xls of Excel 97-2003; imported when a workbook is read).

Each sheet is a page holding one table (a CSV is one sheet), stored as the PDF reader stores a
table, so its rows become passages of a few rows each under the header (:mod:`kgp.ingest.tables`):
the header is the first non-empty row; empty rows and columns are dropped; a formula's value is
the one last saved with the workbook. A sheet is read up to ``MAX_ROWS`` rows and
``MAX_COLUMNS`` columns, streamed, and a sync is told when more were left unread. Sheets are
tables whatever ``tables`` says: they hold nothing else."""

from __future__ import annotations

import csv
import datetime as dt
import io
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kgp.errors import DocumentError
from kgp.ingest.document import Page, ReadDocument
from kgp.ingest.outline import add_table, pick_title, unreadable
from kgp.stores.model import TableRecord

MAX_ROWS = 10_000  # rows read of one sheet, empty ones included
MAX_COLUMNS = 100
SNIFF_CHARS = 64 * 1024  # of a CSV, to find its delimiter and quoting
_DELIMITERS = ",;\t|"


def cell_text(value: Any) -> str:
    """A cell's value as text: whole numbers without ".0", dates without a midnight time."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def _sheet(
    records: list[TableRecord],
    notices: list[str],
    page: int,
    name: str,
    rows: Iterable[Sequence[Any]],
) -> None:
    """Read up to ``MAX_ROWS`` of ``rows`` into the table of ``page``; a sheet with more rows or
    columns is cut, and ``notices`` says so."""
    where = f"sheet {name!r}:" if name else "the sheet:"
    grid: list[list[str]] = []
    wide = False
    for number, row in enumerate(rows):
        if number == MAX_ROWS:
            notices.append(f"{where} more than {MAX_ROWS:,} rows; only the first were read")
            break
        wide = wide or any(value not in (None, "") for value in row[MAX_COLUMNS:])
        grid.append([cell_text(value) for value in row[:MAX_COLUMNS]])
    if wide:
        notices.append(f"{where} more than {MAX_COLUMNS:,} columns; only the first were read")
    add_table(records, page, grid, caption=name)


def _csv_dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    """The sample's dialect (comma, semicolon, tab or bar; its quoting), else Excel's."""
    sample = sample[: sample.rfind("\n") + 1] or sample  # whole lines only
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:  # one column, or no consistent delimiter
        return csv.excel


class CsvReader:
    """CSV (.csv): one page holding one table; UTF-8 (a BOM is allowed), its dialect sniffed."""

    kind = "csv"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        if b"\x00" in data[:65536]:
            raise DocumentError(f"{path}: binary data (NUL bytes), not CSV text")
        stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
        records: list[TableRecord] = []
        notices: list[str] = []
        reader = None
        try:
            dialect = _csv_dialect(stream.read(SNIFF_CHARS))
            stream.seek(0)
            reader = csv.reader(stream, dialect)
            _sheet(records, notices, 1, "", reader)
        except UnicodeDecodeError:
            near = f" (near line {reader.line_num + 1})" if reader is not None else ""
            raise DocumentError(
                f"{path}: not UTF-8{near}; convert it, e.g. iconv -t UTF-8"
            ) from None
        except csv.Error as exc:
            raise DocumentError(f"{path}: not readable CSV ({exc}); check its quoting") from None
        if not records:
            raise DocumentError(f"{path}: empty document (no cells)")
        page = (Page(1, ()),)
        return ReadDocument(path.stem, self.kind, page, tuple(records), tuple(notices))


class XlsxReader:
    """Excel (.xlsx, .xlsm): a page per sheet, each holding one table (its name the caption)."""

    kind = "xlsx"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        import openpyxl

        records: list[TableRecord] = []
        notices: list[str] = []
        try:
            with warnings.catch_warnings():  # openpyxl warns of every extension it skips
                warnings.simplefilter("ignore")
                book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            try:
                sheets = list(book.worksheets)
                for number, sheet in enumerate(sheets, start=1):
                    rows = sheet.iter_rows(max_col=MAX_COLUMNS + 1, values_only=True)
                    _sheet(records, notices, number, str(sheet.title), rows)
                core_title = book.properties.title or ""
            finally:
                book.close()
        except Exception as exc:  # zipfile, lxml and openpyxl raise many types
            raise unreadable(path, data, exc, "Excel workbook", "re-save it as .xlsx") from None
        if not records:
            raise DocumentError(f"{path}: empty workbook (no cells)")
        pages = tuple(Page(number, ()) for number in range(1, len(sheets) + 1))
        title = pick_title([core_title], path.stem)
        return ReadDocument(title, self.kind, pages, tuple(records), tuple(notices))


class XlsReader:
    """Excel 97-2003 (.xls): as .xlsx, a page per sheet, each holding one table."""

    kind = "xls"

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument:
        import xlrd

        records: list[TableRecord] = []
        notices: list[str] = []
        try:
            book = xlrd.open_workbook(file_contents=data, on_demand=True)
            try:
                count = book.nsheets
                for number in range(1, count + 1):
                    sheet = book.sheet_by_index(number - 1)
                    rows = (_xls_row(book, sheet, r) for r in range(sheet.nrows))
                    _sheet(records, notices, number, str(sheet.name), rows)
                    book.unload_sheet(number - 1)
            finally:
                book.release_resources()
        except Exception as exc:  # xlrd raises its own and struct's errors on a damaged file
            raise unreadable(
                path, b"", exc, "Excel 97-2003 workbook", "re-save it as .xlsx"
            ) from None
        if not records:
            raise DocumentError(f"{path}: empty workbook (no cells)")
        pages = tuple(Page(number, ()) for number in range(1, count + 1))
        return ReadDocument(path.stem, self.kind, pages, tuple(records), tuple(notices))


def _xls_row(book: Any, sheet: Any, index: int) -> list[Any]:
    """A row's values as openpyxl gives them: dates as datetimes, booleans as bools, an error
    cell empty."""
    import xlrd

    values: list[Any] = []
    for cell in sheet.row(index)[: MAX_COLUMNS + 1]:
        if cell.ctype == xlrd.XL_CELL_DATE:
            values.append(xlrd.xldate.xldate_as_datetime(cell.value, book.datemode))
        elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
            values.append(bool(cell.value))
        elif cell.ctype in (xlrd.XL_CELL_ERROR, xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
            values.append(None)
        else:
            values.append(cell.value)
    return values

"""What a reader makes of a file: pages of text sections, and tables; and the ``Reader`` protocol
every format implements (the registry is :mod:`kgp.ingest.readers`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kgp.stores.model import TableRecord


@dataclass(frozen=True, slots=True)
class Section:
    """Text under one heading (``heading`` is empty for plain text and PDF pages)."""

    heading: str
    text: str


@dataclass(frozen=True, slots=True)
class Page:
    number: int
    sections: tuple[Section, ...]


@dataclass(frozen=True, slots=True)
class ReadDocument:
    title: str
    kind: str
    pages: tuple[Page, ...]
    tables: tuple[TableRecord, ...] = field(default=())
    notices: tuple[str, ...] = field(default=())  # what was read only in part, for the report


class Reader(Protocol):
    kind: str

    def read(self, path: Path, data: bytes, *, tables: bool = True) -> ReadDocument: ...

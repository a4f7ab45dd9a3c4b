"""Plain data that crosses the store boundary, and the pure functions that shape it into rows.

A :class:`DocumentGraph` is one document's whole subgraph as ingest produces it
(:mod:`kgp.stores.rows` turns documents into the parameters of the write query).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
from kgp.access import DEFAULT_GROUPS


class EdgeKind(StrEnum):
    """The relationship kinds whose union is a passage's neighbourhood N(v)."""

    SIMILAR = "similar"
    NEXT = "next"
    KEYWORD = "keyword"


def page_id(doc_id: str, number: int) -> str:
    return f"{doc_id}#page={number}"


def passage_id(doc_id: str, ordinal: int) -> str:
    return f"{doc_id}#passage={ordinal}"


def passage_document(pid: str) -> str:
    """The document id of a passage id (the inverse of ``passage_id``)."""
    return pid.rsplit("#passage=", 1)[0]


def table_id(doc_id: str, page: int, index: int) -> str:
    return f"{doc_id}#page={page}&table={index}"


def stored_vectors(vectors: np.ndarray) -> np.ndarray:
    """Passage vectors (unit length) as the graph keeps them: float32 values that float16 holds
    exactly, so the embedded store's index, kept at half precision, holds each passage's own
    vector, and a stored neighbour scores as the sync's copy of it did
    (docs/decisions/0001-vectors-beside-the-graph.md)."""
    return np.asarray(vectors, dtype=np.float32).astype(np.float16).astype(np.float32)


def text_hash(text: str) -> str:
    """The key under which identical passage texts share one stored vector."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    id: str
    path: str
    title: str
    sha256: str
    bytes: int
    kind: str
    pages: int
    ingested_at: str
    groups: tuple[str, ...] = DEFAULT_GROUPS  # who may read it (kgp.access)


@dataclass(frozen=True, slots=True)
class TableRecord:
    page: int
    index: int
    markdown: str
    rows: int
    cols: int
    caption: str = ""  # the line that names it ("Table 2: Rainfall by station"), if found
    header_rows: int = 0  # rows of header the reader knows the table has; 0: guess them


@dataclass(frozen=True, slots=True)
class PassageRecord:
    page: int
    ordinal: int
    text: str
    embedding: tuple[float, ...]
    keywords: tuple[str, ...] = ()
    table: tuple[int, int] | None = None  # (page, index) of the table whose rows it holds


@dataclass(frozen=True, slots=True)
class SimilarEdge:
    """A ``SIMILAR`` relationship; at least one end is a passage of the document being written."""

    source: str
    target: str
    score: float
    method: str = "knn"


@dataclass(frozen=True, slots=True)
class DocumentGraph:
    document: DocumentRecord
    passages: tuple[PassageRecord, ...] = ()
    tables: tuple[TableRecord, ...] = ()
    similar: tuple[SimilarEdge, ...] = ()
    page_numbers: tuple[int, ...] = field(default=())

    def pages(self) -> tuple[int, ...]:
        """Page numbers: the explicit ones, else 1..document.pages."""
        return self.page_numbers or tuple(range(1, self.document.pages + 1))


def stored_groups(value: Any) -> tuple[str, ...] | None:
    """A Document node's ``groups`` as kgp compares them: sorted; None for a node written
    before access groups."""
    return tuple(sorted(str(g) for g in value)) if value is not None else None


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    id: str
    path: str
    sha256: str
    title: str = ""
    pages: int = 0
    groups: tuple[str, ...] | None = None  # None: a graph from before access groups
    passages: int | None = None  # Passage nodes, table rows included; None: not counted
    tables: int | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    id: str
    score: float


@dataclass(frozen=True, slots=True)
class Neighbour:
    source: str
    target: str
    kind: EdgeKind
    weight: float


@dataclass(frozen=True, slots=True)
class GraphCounts:
    labels: Mapping[str, int]
    relationships: Mapping[str, int]
    groups: Mapping[str, int] = field(default_factory=dict)  # documents per access group

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {
            "labels": dict(self.labels),
            "relationships": dict(self.relationships),
            "groups": dict(self.groups),
        }


@dataclass(frozen=True, slots=True)
class StoredPassage:
    """A passage as the graph holds it (``passage_vectors``, ``document_passages``). The
    embedding is the list of floats the driver returns, unconverted, or the float32 array of
    the embedded store's index beside the graph."""

    id: str
    doc_id: str
    page: int
    text: str
    embedding: Sequence[float] | np.ndarray
    table_id: str | None = None  # the table whose rows it holds, if any
    doc_title: str | None = None  # its document's title and path, where the query reads them
    doc_path: str | None = None  # (passage_texts, passage_vectors)


@dataclass(frozen=True, slots=True)
class PassageVector:
    """A passage's id and stored embedding (``passages_needing_knn``)."""

    id: str
    embedding: list[float]


@dataclass(frozen=True, slots=True)
class PagePassage:
    id: str
    text: str


@dataclass(frozen=True, slots=True)
class PageTable:
    id: str
    markdown: str
    caption: str = ""  # (document_pages reads it; page_contents does not)


@dataclass(frozen=True, slots=True)
class PageContent:
    """A page's passages of prose and its tables, in reading order (``page_contents``)."""

    doc_id: str
    number: int
    passages: tuple[PagePassage, ...] = ()
    tables: tuple[PageTable, ...] = ()


@dataclass(frozen=True, slots=True)
class DocumentView:
    """A document as kgp holds it (``KnowledgeGraph.document``): its record, and its pages
    with their passages of prose and tables in reading order."""

    id: str
    path: str
    title: str
    groups: tuple[str, ...]  # of its groups, those the caller holds (all for the admin)
    kind: str  # the reader that read it ("pdf", "markdown", ...)
    bytes: int
    sha256: str
    ingested_at: str  # when it was last synced (ISO 8601, UTC)
    pages: tuple[PageContent, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class NeighbourhoodNode:
    """A passage as the graph explorer shows it."""

    id: str
    doc_id: str
    title: str  # its document's
    page: int
    text: str
    table: str | None = None  # the table whose rows it holds, if any


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """A passage and its neighbours N(v) (``KnowledgeGraph.neighbourhood``): each edge is
    (neighbour id, kind, weight: the SIMILAR score, 1 for NEXT, shared keywords for KEYWORD)."""

    node: NeighbourhoodNode
    edges: tuple[tuple[str, str, float], ...]
    nodes: tuple[NeighbourhoodNode, ...]  # the neighbours, each once

    def as_dict(self) -> dict[str, Any]:
        return {
            "node": asdict(self.node),
            "edges": [{"id": i, "kind": k, "weight": w} for i, k, w in self.edges],
            "nodes": [asdict(n) for n in self.nodes],
        }


def document_view(node: Mapping[str, Any], pages: Iterable[PageContent]) -> DocumentView:
    """The view from a Document node's properties (``fetch_nodes``) and its pages."""
    return DocumentView(
        id=str(node["id"]),
        path=str(node.get("path") or ""),
        title=str(node.get("title") or ""),
        groups=tuple(node.get("groups") or ()),
        kind=str(node.get("kind") or ""),
        bytes=int(node.get("bytes") or 0),
        sha256=str(node.get("sha256") or ""),
        ingested_at=str(node.get("ingested_at") or ""),
        pages=tuple(pages),
    )


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table with its place: ``index`` is its position on its page (``tables``); ``caption``
    is the line printed above or below it ("Table 2.1: ..."), "" when none was found."""

    id: str
    doc_id: str
    page: int
    index: int
    markdown: str
    caption: str = ""


def neighbour_rows(rows: Iterable[Mapping[str, Any]]) -> list[Neighbour]:
    return [
        Neighbour(str(r["source"]), str(r["target"]), EdgeKind(r["kind"]), float(r["weight"]))
        for r in rows
    ]


def stored_passage(row: Mapping[str, Any]) -> StoredPassage:
    """A ``passage_vectors``, ``passage_texts`` (no embedding: an empty list) or
    ``document_passages`` row (page 1 when none is recorded)."""
    return StoredPassage(
        id=str(row["id"]),
        doc_id=str(row["doc_id"]),
        page=int(row["page"] or 1),
        text=str(row["text"]),
        embedding=row.get("embedding") or [],
        table_id=str(row["table_id"]) if row["table_id"] else None,
        doc_title=_text_or_none(row, "doc_title"),
        doc_path=_text_or_none(row, "doc_path"),
    )


def _text_or_none(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    return None if value is None else str(value)


def page_content(row: Mapping[str, Any]) -> PageContent:
    return PageContent(
        doc_id=str(row["doc_id"]),
        number=int(row["number"]),
        passages=tuple(PagePassage(str(x["id"]), str(x["text"])) for x in row["passages"]),
        tables=tuple(
            PageTable(str(x["id"]), str(x["markdown"]), str(x.get("caption") or ""))
            for x in row["tables"]
        ),
    )


def stored_table(row: Mapping[str, Any]) -> StoredTable:
    return StoredTable(
        id=str(row["id"]),
        doc_id=str(row["doc_id"]),
        page=int(row["page"]),
        index=int(row["index"]),
        markdown=str(row["markdown"]),
        caption=str(row["caption"] or ""),  # tables written before captions were kept have none
    )

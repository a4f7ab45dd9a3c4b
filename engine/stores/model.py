"""Plain data that crosses the store boundary, and the pure functions that shape it into rows.

A :class:`DocumentGraph` is one document's whole subgraph as ingest produces it.
``documents_rows`` turns documents into the parameters of the one write query, after checking that
each is consistent, so a store never receives half a document.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kgp.access import DEFAULT_GROUPS
from kgp.errors import DocumentError


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
    embedding is the list of floats the driver returns, unconverted."""

    id: str
    doc_id: str
    page: int
    text: str
    embedding: list[float]
    table_id: str | None = None  # the table whose rows it holds, if any


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


@dataclass(frozen=True, slots=True)
class PageContent:
    """A page's passages of prose and its tables, in reading order (``page_contents``)."""

    doc_id: str
    number: int
    passages: tuple[PagePassage, ...] = ()
    tables: tuple[PageTable, ...] = ()


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


def _unsafe_key(key: str) -> bool:
    """FalkorDB's exact-match index misses strings that start or end with whitespace, or hold
    ``\\x01`` anywhere (found by the contract tests); control characters are refused outright."""
    return key[0] <= " " or key[-1] <= " " or any(ch < " " for ch in key)


def check_document(graph: DocumentGraph, dimension: int | None) -> None:
    """Raise :class:`DocumentError` when the graph is inconsistent (before anything is written)."""
    doc = graph.document
    where = f"document {doc.path!r}"
    if not doc.id:
        raise DocumentError(f"{where} has an empty id; give it a path relative to the synced root")
    if _unsafe_key(doc.id):
        raise DocumentError(
            f"{where}: the id {doc.id!r} has a control character or leading or trailing "
            "whitespace, which the stores' indexes cannot look up; rename the file"
        )
    pages = set(graph.pages())
    ordinals = [p.ordinal for p in graph.passages]
    if len(set(ordinals)) != len(ordinals):
        raise DocumentError(f"{where} has two passages with the same ordinal; renumber them")
    for passage in graph.passages:
        if passage.page not in pages:
            raise DocumentError(
                f"{where}: passage {passage.ordinal} is on page {passage.page}, "
                f"which the document does not have "
                f"(pages {min(pages, default=0)}..{max(pages, default=0)})"
            )
        if dimension is not None and len(passage.embedding) != dimension:
            raise DocumentError(
                f"{where}: passage {passage.ordinal} has a {len(passage.embedding)}-dimension "
                f"embedding, the graph uses {dimension}; re-embed it with the graph's encoder"
            )
        if not all(map(math.isfinite, passage.embedding)):
            raise DocumentError(f"{where}: passage {passage.ordinal} has a non-finite embedding")
        bad = next((k for k in passage.keywords if not k or _unsafe_key(k)), None)
        if bad is not None:
            raise DocumentError(
                f"{where}: passage {passage.ordinal} has keyword {bad!r}; keywords must be "
                "non-empty, without control characters or leading or trailing whitespace"
            )
    tables = [(t.page, t.index) for t in graph.tables]
    if len(set(tables)) != len(tables):
        raise DocumentError(f"{where} has two tables with the same page and index")
    for table in graph.tables:
        if table.page not in pages:
            raise DocumentError(f"{where}: table {table.index} is on missing page {table.page}")
    for passage in graph.passages:
        if passage.table is not None and passage.table not in tables:
            raise DocumentError(
                f"{where}: passage {passage.ordinal} holds rows of table {passage.table}, which "
                "the document does not have"
            )
    own = {passage_id(doc.id, o) for o in ordinals}
    for edge in graph.similar:
        if edge.source not in own and edge.target not in own:
            raise DocumentError(
                f"{where}: SIMILAR edge {edge.source} -> {edge.target} touches none of its passages"
            )


def documents_rows(graphs: Sequence[DocumentGraph], dimension: int | None = None) -> dict[str, Any]:
    """The parameters of ``write_documents``: each document's rows, one list per kind (every
    row names its document); raises :class:`DocumentError` when one is inconsistent or a
    document comes twice."""
    ids = [g.document.id for g in graphs]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise DocumentError(f"{twice[0]}: given twice in one write; write it once")
    merged: dict[str, Any] = {"doc_ids": ids, "docs": []}
    terms: Counter[str] = Counter()
    for graph in graphs:
        rows = document_rows(graph, dimension)
        merged["docs"].append(rows.pop("doc"))
        terms.update({c["term"]: c["n"] for c in rows.pop("term_counts")})
        rows.pop("terms")
        for kind, values in rows.items():
            merged.setdefault(kind, []).extend(values)
    for kind in ("pages", "tables", "passages", "table_passages", "next", "keywords", "similar"):
        merged.setdefault(kind, [])
    merged["terms"] = sorted(terms)
    merged["term_counts"] = [{"term": t, "n": n} for t, n in sorted(terms.items())]
    return merged


def document_rows(graph: DocumentGraph, dimension: int | None = None) -> dict[str, Any]:
    """One document's rows for ``write_documents``; raises :class:`DocumentError` when
    inconsistent."""
    check_document(graph, dimension)
    doc = graph.document
    ordered = sorted(graph.passages, key=lambda p: p.ordinal)

    def row(p: PassageRecord) -> dict[str, Any]:
        holder = table_id(doc.id, *p.table) if p.table is not None else None
        return {
            "id": passage_id(doc.id, p.ordinal),
            "doc_id": doc.id,
            "page_id": page_id(doc.id, p.page),
            "table_id": holder,
            "props": {
                "id": passage_id(doc.id, p.ordinal),
                "doc_id": doc.id,
                "page": p.page,
                "ordinal": p.ordinal,
                "text": p.text,
                "text_hash": text_hash(p.text),
                **({"table_id": holder} if holder else {}),
            },
            "embedding": list(map(float, p.embedding)),
        }

    # a passage of prose is contained by its page, a passage of table rows by its table; NEXT
    # runs through the prose, and through each table's rows
    flows: dict[tuple[int, int] | None, list[dict[str, Any]]] = {}
    for p in ordered:
        flows.setdefault(p.table, []).append(row(p))
    passages = flows.get(None, [])
    table_rows = [r for key, rows in flows.items() if key is not None for r in rows]
    keywords = [
        {"passage": passage_id(doc.id, p.ordinal), "term": term}
        for p in ordered
        for term in dict.fromkeys(p.keywords)
    ]
    return {
        "doc": {
            "id": doc.id,
            "path": doc.path,
            "title": doc.title,
            "sha256": doc.sha256,
            "bytes": doc.bytes,
            "kind": doc.kind,
            "pages": doc.pages,
            "ingested_at": doc.ingested_at,
            "groups": list(doc.groups),
            "pending": True,  # until the sync has linked older passages to this document's
        },
        "pages": [{"id": page_id(doc.id, n), "doc_id": doc.id, "number": n} for n in graph.pages()],
        "tables": [
            {
                "page_id": page_id(doc.id, t.page),
                "props": {
                    "id": table_id(doc.id, t.page, t.index),
                    "doc_id": doc.id,
                    "page": t.page,
                    "index": t.index,
                    "markdown": t.markdown,
                    "rows": t.rows,
                    "cols": t.cols,
                    "caption": t.caption,
                },
            }
            for t in graph.tables
        ],
        "passages": passages,
        "table_passages": table_rows,
        "next": [
            {"source": a["id"], "target": b["id"]}
            for rows in flows.values()
            for a, b in itertools.pairwise(rows)
        ],
        "keywords": keywords,
        "terms": sorted({row["term"] for row in keywords}),
        # how many of the document's passages use each term: the df each keyword gains
        "term_counts": [
            {"term": term, "n": n}
            for term, n in sorted(Counter(row["term"] for row in keywords).items())
        ],
        "similar": [
            {"source": e.source, "target": e.target, "score": float(e.score), "method": e.method}
            for e in graph.similar
        ],
    }


def neighbour_rows(rows: Iterable[Mapping[str, Any]]) -> list[Neighbour]:
    return [
        Neighbour(str(r["source"]), str(r["target"]), EdgeKind(r["kind"]), float(r["weight"]))
        for r in rows
    ]


def stored_passage(row: Mapping[str, Any]) -> StoredPassage:
    """A ``passage_vectors`` or ``document_passages`` row (page 1 when none is recorded)."""
    return StoredPassage(
        id=str(row["id"]),
        doc_id=str(row["doc_id"]),
        page=int(row["page"] or 1),
        text=str(row["text"]),
        embedding=row["embedding"],
        table_id=str(row["table_id"]) if row["table_id"] else None,
    )


def page_content(row: Mapping[str, Any]) -> PageContent:
    return PageContent(
        doc_id=str(row["doc_id"]),
        number=int(row["number"]),
        passages=tuple(PagePassage(str(x["id"]), str(x["text"])) for x in row["passages"]),
        tables=tuple(PageTable(str(x["id"]), str(x["markdown"])) for x in row["tables"]),
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

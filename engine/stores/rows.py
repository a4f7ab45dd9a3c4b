"""Documents as the write query's parameters: each checked first, so a store never receives half
a document, then shaped into one list of rows per kind of node and relationship; and their write,
made again while the store kept it short of its keyword links (write_whole)."""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kgp.errors import DocumentError, StoreError
from kgp.stores.model import (
    DocumentGraph,
    PassageRecord,
    page_id,
    passage_id,
    table_id,
    text_hash,
)
from kgp.text import index_terms


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


def documents_rows(
    graphs: Sequence[DocumentGraph], dimension: int | None = None, *, with_terms: bool = False
) -> dict[str, Any]:
    """The parameters of ``write_documents``: each document's rows, one list per kind (every
    row names its document; with ``with_terms``, each passage its ``index_terms``); raises
    :class:`DocumentError` when one is inconsistent or a document comes twice."""
    ids = [g.document.id for g in graphs]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise DocumentError(f"{twice[0]}: given twice in one write; write it once")
    merged: dict[str, Any] = {"doc_ids": ids, "docs": []}
    terms: Counter[str] = Counter()
    for graph in graphs:
        rows = document_rows(graph, dimension, with_terms=with_terms)
        merged["docs"].append(rows.pop("doc"))
        terms.update({c["term"]: c["n"] for c in rows.pop("term_counts")})
        rows.pop("terms")
        for kind, values in rows.items():
            merged.setdefault(kind, []).extend(values)
    for kind in ("pages", "tables", "passages", "table_passages", "next", "keywords", "similar"):
        merged.setdefault(kind, [])
    # each passage's place among the write's new passages: a store that keys its vectors
    # (FalkorStore) gives it the key its counter stood at plus this
    for slot, row in enumerate(merged["passages"] + merged["table_passages"]):
        row["slot"] = slot
    merged["terms"] = sorted(terms)
    merged["term_counts"] = [{"term": t, "n": n} for t, n in sorted(terms.items())]
    return merged


def document_rows(
    graph: DocumentGraph, dimension: int | None = None, *, with_terms: bool = False
) -> dict[str, Any]:
    """One document's rows for ``write_documents`` (with ``with_terms``, each passage's
    ``index_terms``, which the embedded store's full-text index holds); raises
    :class:`DocumentError` when inconsistent."""
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
                **({"terms": index_terms(p.text)} if with_terms else {}),
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


WRITE_TRIES = 3  # a write kept short of its keyword links is made again (count_keyword_links)
log = logging.getLogger("kgp.stores")


class Writes(Protocol):
    """What :func:`write_whole` needs of a store (:class:`~kgp.stores.base.GraphStore`)."""

    short_writes: bool  # whether its writes are to be counted

    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[dict[str, Any]]: ...

    def delete_document(self, doc_id: str) -> bool: ...


def write_whole(store: Writes, rows: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``documents_rows``' ``rows`` (one query, which replaces the documents whole) until
    the documents' passages have every keyword link it was given (a store whose writes are
    never short: once; else one more read a write, of those documents' links). After
    WRITE_TRIES short writes the documents are removed, so each is whole or absent and the next
    sync writes it; a StoreError says so. Returns the last write's row, with the
    ``replaced_keys`` of every write (a store that keys its passages: FalkorStore)."""
    wanted = len(rows["keywords"])
    replaced: list[Any] = []
    for attempt in range(1, WRITE_TRIES + 1):
        written = store.run("write_documents", rows, write=True)
        result = dict(written[0]) if written else {}
        replaced += result.get("replaced_keys") or []
        result["replaced_keys"] = replaced
        if not wanted or not store.short_writes:
            return result
        found = store.run("count_keyword_links", {"doc_ids": rows["doc_ids"]})
        links = int(found[0]["keyworded"]) if found else 0
        if links == wanted:
            return result
        short = f"{links} of {wanted} keyword links of {', '.join(rows['doc_ids'])}"
        if attempt < WRITE_TRIES:
            log.warning("the store kept a write with %s; writing those documents again", short)
    for doc_id in rows["doc_ids"]:
        store.delete_document(doc_id)
    raise StoreError(
        f"the store kept {short} after {WRITE_TRIES} writes; those documents were removed "
        "again (the next sync adds them): run it again"
    )

"""The graph out of kgp: a snapshot of it, for the files other tools read (kgp.graph_files:
``neo4j-admin database import`` CSV, GraphML for Gephi and yEd), or loaded into another store (a
running Neo4j, or a fresh embedded one) through the store port.

A :class:`Snapshot` is every node and relationship of the documents chosen (all, or those some
groups may read), with the passages' vectors, as the graph holds them, less what a store derives
again (the embedded store's stemmed ``terms``) and its bookkeeping (the dump's). Loading one into
a store writes its documents through ``write_documents`` and their SIMILAR lists through
``links.replace_similar``, so the store makes its own schema, indexes and derived data as a sync
would: a fresh store so loaded dumps equal to the graph exported. Saved traces are each caller's
record of a question, not the graph: they are not exported."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgp.access import ADMIN_CALLER, Caller
from kgp.errors import ConfigurationError
from kgp.stores.base import GraphStore
from kgp.stores.model import (
    DocumentGraph,
    DocumentRecord,
    PassageRecord,
    TableRecord,
)

Row = dict[str, Any]
DERIVED = frozenset({"terms"})  # what a store derives again when it writes a document
DOCUMENT_LABELS = ("Document", "Page", "Table", "Passage")  # nodes of one document
# a relationship's end labels where a key alone could name two nodes (a keyword's term may
# equal a document's id): the keyword end of HAS_KEYWORD is the Keyword, every other end not
KEYWORD_ENDS = {("HAS_KEYWORD", "target")}
BATCH = 50  # documents a write


@dataclass
class Snapshot:
    """Nodes (``label``, ``key``, ``props``) and relationships (``type``, ``source``,
    ``target``, ``props``), each ``key`` a node's ``id`` (a Keyword's ``term``)."""

    nodes: list[Row]
    rels: list[Row]


def labels_by_key(nodes: Iterable[Row]) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        labels[node["key"]].add(node["label"])
    return labels


def end_label(labels: Mapping[str, set[str]], rel: Row, end: str) -> str:
    """The label of a relationship's ``end`` ("source" or "target")."""
    if (rel["type"], end) in KEYWORD_ENDS:
        return "Keyword"
    others = sorted(labels.get(rel[end], set()) - {"Keyword"})
    return others[0] if others else "Keyword"


def snapshot(store: GraphStore, groups: Sequence[str] | None = None) -> Snapshot:
    """The graph, or with ``groups`` the part those groups may read: their documents' nodes,
    the keywords those passages carry (each keyword's ``df`` counted over them), the graph's
    record (Meta), and every relationship between them (a SIMILAR edge to a document they may
    not read is left out)."""
    with store.reading_as(ADMIN_CALLER):
        nodes, rels = store.upkeep.dump()
        documents = [n["key"] for n in nodes if n["label"] == "Document"]
        vectors: dict[str, Any] = {}
        for at in range(0, len(documents), 200):
            for passage in store.document_passages(documents[at : at + 200]):
                vectors[passage.id] = [float(x) for x in passage.embedding]
    reader = Caller(tuple(groups)) if groups is not None else ADMIN_CALLER
    kept_docs = {
        n["key"]
        for n in nodes
        if n["label"] == "Document" and reader.may_read(n["props"].get("groups") or ())
    }

    def belongs(node: Row) -> bool:
        if node["label"] in DOCUMENT_LABELS:
            return str(node["props"].get("doc_id", node["key"])) in kept_docs
        return bool(node["label"] == "Meta")

    labels = labels_by_key(nodes)
    kept = {(n["label"], n["key"]) for n in nodes if belongs(n)}
    df: dict[str, int] = defaultdict(int)  # keyword -> kept passages carrying it
    for rel in rels:
        if rel["type"] == "HAS_KEYWORD" and ("Passage", rel["source"]) in kept:
            df[rel["target"]] += 1
    kept |= {("Keyword", term) for term in df}
    out_nodes = []
    for node in nodes:
        if (node["label"], node["key"]) not in kept:
            continue
        props = {k: v for k, v in node["props"].items() if k not in DERIVED}
        if node["label"] == "Passage" and node["key"] in vectors:
            props["embedding"] = vectors[node["key"]]
        if node["label"] == "Keyword" and "df" in props:
            props["df"] = df[node["key"]]
        out_nodes.append({**node, "props": props})
    out_rels = [
        r
        for r in rels
        if (end_label(labels, r, "source"), r["source"]) in kept
        and (end_label(labels, r, "target"), r["target"]) in kept
    ]
    return Snapshot(out_nodes, out_rels)


# -- into a store --------------------------------------------------------------------------------


def documents_of(snap: Snapshot) -> list[DocumentGraph]:
    """The snapshot's documents as a sync would write them (without their SIMILAR edges)."""
    by_label: dict[str, list[Row]] = defaultdict(list)
    for node in snap.nodes:
        by_label[node["label"]].append(node["props"])
    keywords: dict[str, list[str]] = defaultdict(list)
    for rel in snap.rels:
        if rel["type"] == "HAS_KEYWORD":
            keywords[rel["source"]].append(rel["target"])
    tables = {t["id"]: t for t in by_label["Table"]}
    pages: dict[str, list[int]] = defaultdict(list)
    for page in by_label["Page"]:
        pages[page["doc_id"]].append(int(page["number"]))
    passages: dict[str, list[PassageRecord]] = defaultdict(list)
    for p in by_label["Passage"]:
        if "embedding" not in p:
            raise ConfigurationError(
                f"passage {p['id']!r} has no vector in the export; export with its vectors"
            )
        table = tables.get(p.get("table_id") or "")
        passages[p["doc_id"]].append(
            PassageRecord(
                page=int(p["page"]),
                ordinal=int(p["ordinal"]),
                text=str(p.get("text", "")),
                embedding=tuple(float(x) for x in p["embedding"]),
                keywords=tuple(sorted(keywords.get(p["id"], ()))),
                table=(int(table["page"]), int(table["index"])) if table else None,
            )
        )
    grouped_tables: dict[str, list[TableRecord]] = defaultdict(list)
    for t in by_label["Table"]:
        grouped_tables[t["doc_id"]].append(
            TableRecord(
                page=int(t["page"]),
                index=int(t["index"]),
                markdown=str(t.get("markdown", "")),
                rows=int(t.get("rows") or 0),
                cols=int(t.get("cols") or 0),
                caption=str(t.get("caption") or ""),
                header_rows=int(t.get("header_rows") or 0),
            )
        )
    graphs = []
    for d in sorted(by_label["Document"], key=lambda d: str(d["id"])):
        record = DocumentRecord(
            id=str(d["id"]),
            path=str(d.get("path") or d["id"]),
            title=str(d.get("title") or ""),
            sha256=str(d.get("sha256") or ""),
            bytes=int(d.get("bytes") or 0),
            kind=str(d.get("kind") or ""),
            pages=int(d.get("pages") or 0),
            ingested_at=str(d.get("ingested_at") or ""),
            groups=tuple(d.get("groups") or ()),
        )
        graphs.append(
            DocumentGraph(
                document=record,
                passages=tuple(sorted(passages[record.id], key=lambda p: p.ordinal)),
                tables=tuple(sorted(grouped_tables[record.id], key=lambda t: (t.page, t.index))),
                page_numbers=tuple(sorted(pages[record.id])),
            )
        )
    return graphs


def load(snap: Snapshot, store: GraphStore, *, say: Any = None) -> int:
    """Write the snapshot's documents and SIMILAR lists into ``store`` (an empty one, or one
    holding these documents: each is written again whole); how many documents. The store
    makes its schema and indexes as at a first sync."""
    meta: Row = next((n["props"] for n in snap.nodes if n["label"] == "Meta"), {})
    graphs = documents_of(snap)
    dimension = next((len(p.embedding) for g in graphs for p in g.passages), 0)
    similar: dict[str, list[Row]] = defaultdict(list)
    for rel in snap.rels:
        if rel["type"] == "SIMILAR":
            props = rel["props"]
            score = float(props.get("score", math.nan))
            method = props.get("method", "knn")
            similar[rel["source"]].append({"id": rel["target"], "score": score, "method": method})
    with store.reading_as(ADMIN_CALLER):
        if dimension:
            store.ensure_schema(dimension)
        store.upkeep.prepare_writes()  # (indexes a store set aside at its last close)
        if meta.get("encoder"):
            store.upkeep.set_graph_encoder(str(meta["encoder"]))
        for at in range(0, len(graphs), BATCH):
            store.write_documents(graphs[at : at + BATCH])
            if say is not None:
                say(f"{min(at + BATCH, len(graphs))}/{len(graphs)} documents written")
        ids = [g.document.id for g in graphs]
        rows = [{"source": source, "targets": targets} for source, targets in similar.items()]
        for at in range(0, max(len(rows), 1), 2000):
            done = ids if at + 2000 >= len(rows) else []
            store.links.replace_similar(rows[at : at + 2000], done=done)
        store.upkeep.record_access_sets()
        store.upkeep.checkpoint(force=True)
    return len(graphs)

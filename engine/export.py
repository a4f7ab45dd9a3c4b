"""The graph out of kgp: files other tools read (``neo4j-admin database import`` CSV; GraphML
for Gephi and yEd) and another store (a running Neo4j, or a fresh embedded one) through the
store port.

A :class:`Snapshot` is every node and relationship of the documents chosen (all, or those some
groups may read), with the passages' vectors, as the graph holds them, less what a store derives
again (the embedded store's stemmed ``terms``) and its bookkeeping (the dump's). Loading one into
a store writes its documents through ``write_documents`` and their SIMILAR lists through
``links.replace_similar``, so the store makes its own schema, indexes and derived data as a sync
would: a fresh store so loaded dumps equal to the graph exported. Saved traces are each caller's
record of a question, not the graph: they are not exported."""

from __future__ import annotations

import csv
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

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
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
ARRAY = ";"  # neo4j-admin's array delimiter, as the CSV header says
BATCH = 50  # documents a write


@dataclass
class Snapshot:
    """Nodes (``label``, ``key``, ``props``) and relationships (``type``, ``source``,
    ``target``, ``props``), each ``key`` a node's ``id`` (a Keyword's ``term``)."""

    nodes: list[Row]
    rels: list[Row]


def _labels_by_key(nodes: Iterable[Row]) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        labels[node["key"]].add(node["label"])
    return labels


def _end_label(labels: Mapping[str, set[str]], rel: Row, end: str) -> str:
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

    labels = _labels_by_key(nodes)
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
        if (_end_label(labels, r, "source"), r["source"]) in kept
        and (_end_label(labels, r, "target"), r["target"]) in kept
    ]
    return Snapshot(out_nodes, out_rels)


# -- neo4j-admin import CSV ----------------------------------------------------------------------


def write_csv(snap: Snapshot, folder: Path) -> list[Path]:
    """One file per node label (``nodes-<Label>.csv``) and per relationship type and end labels
    (``rels-<TYPE>-<From>-<To>.csv``), with neo4j-admin's typed headers, and ``import.txt``
    holding the command that imports them; the files written. An empty text is written as no
    property (CSV cannot tell them apart; a load gives the empty text back)."""
    if folder.exists() and not folder.is_dir():
        raise ConfigurationError(f"{folder} is a file; give a new folder for the export")
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.glob("nodes-*.csv")) or any(folder.glob("rels-*.csv")):
        raise ConfigurationError(f"{folder} already holds an export; give an empty or new folder")
    labels = _labels_by_key(snap.nodes)
    written: list[Path] = []
    by_label: dict[str, list[Row]] = defaultdict(list)
    for node in snap.nodes:
        by_label[node["label"]].append(node)
    node_args = []
    for label, nodes in sorted(by_label.items()):
        key = "term" if label == "Keyword" else "id"
        path = folder / f"nodes-{label}.csv"
        _write_table(path, [n["props"] for n in nodes], id_column=(key, f"ID({label})"))
        node_args.append(f"--nodes={label}={path.name}")
        written.append(path)
    by_type: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for rel in snap.rels:
        ends = (_end_label(labels, rel, "source"), _end_label(labels, rel, "target"))
        by_type[(rel["type"], *ends)].append(rel)
    rel_args = []
    for (kind, start, end), rels in sorted(by_type.items()):
        path = folder / f"rels-{kind}-{start}-{end}.csv"
        rows = [{":START_ID": r["source"], ":END_ID": r["target"], **r["props"]} for r in rels]
        _write_table(path, rows, ends=(start, end))
        rel_args.append(f"--relationships={kind}={path.name}")
        written.append(path)
    command = folder / "import.txt"
    command.write_text(
        "# Into an empty, stopped Neo4j database, from this folder; then kgp --store neo4j makes\n"
        "# its indexes at the first sync or question (kgp doctor checks it).\n"
        "neo4j-admin database import full --multiline-fields=true "
        f"--array-delimiter='{ARRAY}' " + " ".join(node_args + rel_args) + " neo4j\n"
    )
    return [*written, command]


def _write_table(
    path: Path,
    rows: Sequence[Mapping[str, Any]],
    *,
    id_column: tuple[str, str] | None = None,
    ends: tuple[str, str] | None = None,
) -> None:
    names = list(dict.fromkeys(k for row in rows for k in row))
    header = []
    for name in names:
        if id_column and name == id_column[0]:
            header.append(f"{name}:{id_column[1]}")
        elif ends and name == ":START_ID":
            header.append(f":START_ID({ends[0]})")
        elif ends and name == ":END_ID":
            header.append(f":END_ID({ends[1]})")
        else:
            header.append(f"{name}:{_kind([row.get(name) for row in rows])}")
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for row in rows:
            writer.writerow([_cell(row.get(name)) for name in names])


def _kind(values: Iterable[Any]) -> str:
    """The neo4j-admin type of a column from its values (None where a row lacks it)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "boolean"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "long"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "double"
    if present and all(isinstance(v, list) for v in present):
        items = [x for v in present for x in v]
        numeric = items and all(isinstance(x, int | float) for x in items)
        return "double[]" if numeric else "string[]"
    return "string"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ARRAY.join(repr(float(x)) if isinstance(x, float) else str(x) for x in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def read_csv(folder: Path) -> Snapshot:
    """A snapshot back from :func:`write_csv`'s files."""
    nodes: list[Row] = []
    for path in sorted(folder.glob("nodes-*.csv")):
        label = path.stem.removeprefix("nodes-")
        for props in _read_table(path):
            key = props["term" if label == "Keyword" else "id"]
            nodes.append({"label": label, "key": key, "props": props})
    rels: list[Row] = []
    for path in sorted(folder.glob("rels-*.csv")):
        kind = path.stem.removeprefix("rels-").split("-")[0]
        for props in _read_table(path):
            source, target = props.pop(":START_ID"), props.pop(":END_ID")
            rels.append({"type": kind, "source": source, "target": target, "props": props})
    if not nodes:
        raise ConfigurationError(f"{folder} holds no kgp export (nodes-*.csv); give its folder")
    return Snapshot(nodes, rels)


def _read_table(path: Path) -> Iterator[Row]:
    with path.open(newline="", encoding="utf-8") as source:
        reader = csv.reader(source)
        header = next(reader)
        columns = [_column(h) for h in header]
        for line in reader:
            row: Row = {}
            for (name, kind), text in zip(columns, line, strict=True):
                if text != "":
                    row[name] = _value(kind, text)
            yield row


def _column(header: str) -> tuple[str, str]:
    if header.startswith((":START_ID", ":END_ID")):
        return header.split("(")[0], "string"
    name, _, kind = header.partition(":")
    return name, "string" if kind.startswith("ID(") else kind


def _value(kind: str, text: str) -> Any:
    if kind == "long":
        return int(text)
    if kind == "double":
        return float(text)
    if kind == "boolean":
        return text == "true"
    if kind == "double[]":
        return [float(x) for x in text.split(ARRAY)]
    if kind == "string[]":
        return text.split(ARRAY)
    return text


# -- GraphML --------------------------------------------------------------------------------------


def write_graphml(snap: Snapshot, path: Path) -> None:
    """The snapshot as GraphML (Gephi, yEd), without the vectors: each node's ``labels`` and
    properties, each edge's ``label`` (its type) and properties; lists as JSON text; node ids
    ``Label:key`` (a keyword's term may equal a document's id); characters XML 1.0 cannot hold
    (control characters a text file kept) left out."""
    if path.exists():
        raise ConfigurationError(f"{path} exists; give a new file for the export")
    labels = _labels_by_key(snap.nodes)
    node_keys = _graphml_keys(n["props"] for n in snap.nodes)
    edge_keys = _graphml_keys(r["props"] for r in snap.rels)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '  <key id="labels" for="node" attr.name="labels" attr.type="string"/>',
        '  <key id="label" for="edge" attr.name="label" attr.type="string"/>',
    ]
    for prefix, keys, where in (("n", node_keys, "node"), ("e", edge_keys, "edge")):
        for name, kind in keys.items():
            lines.append(
                f'  <key id={quoteattr(prefix + "_" + name)} for="{where}" '
                f"attr.name={quoteattr(name)} attr.type={quoteattr(kind)}/>"
            )
    lines.append('  <graph id="kgp" edgedefault="directed">')
    for node in snap.nodes:
        lines.append(f"    <node id={_xml_attr(node['label'] + ':' + node['key'])}>")
        lines.append(f'      <data key="labels">:{escape(node["label"])}</data>')
        lines += _graphml_data("n", node["props"], node_keys)
        lines.append("    </node>")
    for at, rel in enumerate(snap.rels):
        source = _end_label(labels, rel, "source") + ":" + rel["source"]
        target = _end_label(labels, rel, "target") + ":" + rel["target"]
        lines.append(f'    <edge id="e{at}" source={_xml_attr(source)} target={_xml_attr(target)}>')
        lines.append(f'      <data key="label">{escape(rel["type"])}</data>')
        lines += _graphml_data("e", rel["props"], edge_keys)
        lines.append("    </edge>")
    lines += ["  </graph>", "</graphml>", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def _graphml_keys(props: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    kinds: dict[str, set[str]] = defaultdict(set)
    for row in props:
        for name, value in row.items():
            if name == "embedding":
                continue
            kinds[name].add(_graphml_kind(value))
    return {name: ("string" if len(k) > 1 else next(iter(k))) for name, k in kinds.items()}


def _graphml_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    return "string"


def _graphml_data(prefix: str, props: Mapping[str, Any], keys: Mapping[str, str]) -> list[str]:
    out = []
    for name, value in props.items():
        if name not in keys:
            continue
        if keys[name] == "string" and not isinstance(value, str):
            text = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value)
        out.append(f"      <data key={quoteattr(prefix + '_' + name)}>{_xml_text(text)}</data>")
    return out


def _xml_text(text: str) -> str:
    return escape(XML_INVALID.sub("", text))


def _xml_attr(text: str) -> str:
    return quoteattr(XML_INVALID.sub("", text))


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

"""The graph's files (:mod:`kgp.export`'s snapshots): CSV that ``neo4j-admin database import``
reads, and read back; GraphML for Gephi and yEd."""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from kgp.errors import ConfigurationError
from kgp.export import Row, Snapshot, end_label, labels_by_key

ARRAY = ";"  # neo4j-admin's array delimiter, as the CSV header says
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

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
    labels = labels_by_key(snap.nodes)
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
        ends = (end_label(labels, rel, "source"), end_label(labels, rel, "target"))
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
    labels = labels_by_key(snap.nodes)
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
        source = end_label(labels, rel, "source") + ":" + rel["source"]
        target = end_label(labels, rel, "target") + ":" + rel["target"]
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

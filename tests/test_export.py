"""``kgp export``: the example documents synced (PDFs with tables among them, one document
readable by another group), exported to neo4j-admin CSV and read back, loaded into a fresh store
(the embedded one always, Neo4j when KGP_TEST_NEO4J_URI is set): the same graph; a part readable
by some groups holds nothing of the others; GraphML that a parser reads; the command's errors."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp.access import ADMIN_CALLER
from kgp.errors import ConfigurationError
from kgp.export import Snapshot, snapshot
from kgp.export import load as load_snapshot
from kgp.graph_files import read_csv, write_csv, write_graphml
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder
from kgp.stores import FalkorStore, GraphStore

from tests.conftest import STORE_KINDS, _neo4j_store
from tests.served import run_kgp

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents"
SECRET = "budget-2025.pdf"  # readable by finance only


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("export")
    docs = root / "docs"
    shutil.copytree(EXAMPLES, docs)
    (docs / ACCESS_FILE).write_text(f'[groups]\n"{SECRET}" = ["finance"]\n')
    with kgp.open(data_dir=root / "kb", loaded_encoder=encoder) as kg:
        kg.sync(docs)
        yield kg


@pytest.fixture(params=STORE_KINDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """An empty store of each kind, without a schema: the load makes it."""
    store: GraphStore = (
        FalkorStore(data_dir=tmp_path / "target") if request.param == "falkordb" else _neo4j_store()
    )
    with store:
        with store.reading_as(ADMIN_CALLER):
            store.clear()
        yield store


def canonical(rows: list[dict[str, Any]]) -> list[Any]:
    """Rows comparable whatever their order (an empty text is no property in CSV)."""
    return sorted(
        (
            sorted((k, v) for k, v in row.items() if k != "props"),
            sorted((k, v) for k, v in row["props"].items() if v != ""),
        )
        for row in rows
    )


def dump(store: GraphStore) -> Any:
    with store.reading_as(ADMIN_CALLER):
        return store.upkeep.dump()


def test_an_export_read_back_and_loaded_is_the_same_graph(
    source: Any, target: GraphStore, tmp_path: Path
) -> None:
    snap = snapshot(source.store)
    labels = {n["label"] for n in snap.nodes}
    assert {"Document", "Page", "Table", "Passage", "Keyword", "Meta"} <= labels
    files = write_csv(snap, tmp_path / "out")
    command = (tmp_path / "out" / "import.txt").read_text()
    assert "neo4j-admin database import full" in command and "--nodes=Passage=" in command
    assert all(f.name in command for f in files if f.suffix == ".csv")
    header = (tmp_path / "out" / "nodes-Passage.csv").read_text().splitlines()[0]
    assert "id:ID(Passage)" in header and "embedding:double[]" in header
    back = read_csv(tmp_path / "out")
    assert canonical(back.nodes) == canonical(snap.nodes), "the CSV holds every property"
    assert canonical(back.rels) == canonical(snap.rels)
    assert load_snapshot(back, target) == 4
    assert dump(target) == dump(source.store)
    load_snapshot(back, target)  # written again whole: nothing changes
    assert dump(target) == dump(source.store)
    with target.reading_as(ADMIN_CALLER):
        assert target.upkeep.graph_encoder() == source.store.upkeep.graph_encoder()
    question = "Which station recorded the most rain?"
    vector = source.encoder.encode([question])[0].tolist()
    with source.store.reading_as(ADMIN_CALLER), target.reading_as(ADMIN_CALLER):
        assert target.vector_search(vector, 5) == source.store.vector_search(vector, 5)
        assert target.fulltext_search(question, 5) == source.store.fulltext_search(question, 5)


def test_a_part_readable_by_some_groups_holds_nothing_of_the_others(
    source: Any, tmp_path: Path
) -> None:
    whole = snapshot(source.store)
    public = snapshot(source.store, ["public"])
    documents = {n["key"] for n in public.nodes if n["label"] == "Document"}
    assert documents and SECRET not in documents
    assert SECRET in {n["key"] for n in whole.nodes if n["label"] == "Document"}
    kept = {n["key"] for n in public.nodes}
    assert not any(str(key).startswith(SECRET) for key in kept)
    assert all(r["source"] in kept and r["target"] in kept for r in public.rels)
    crossing = [
        r
        for r in whole.rels
        if r["type"] == "SIMILAR"
        and (r["source"].startswith(SECRET) != r["target"].startswith(SECRET))
    ]
    assert crossing and not any(r in public.rels for r in crossing)
    carried = [r["target"] for r in public.rels if r["type"] == "HAS_KEYWORD"]
    keywords = {n["key"]: n["props"] for n in public.nodes if n["label"] == "Keyword"}
    assert set(keywords) == set(carried)
    assert all(props["df"] == carried.count(term) for term, props in keywords.items())
    secret_only = {r["target"] for r in whole.rels if r["type"] == "HAS_KEYWORD"} - set(carried)
    assert secret_only and not secret_only & kept, "a keyword only the budget uses stays out"


def test_graphml_is_read_by_a_parser_with_every_node_and_edge(source: Any, tmp_path: Path) -> None:
    snap = snapshot(source.store)
    path = tmp_path / "kb.graphml"
    write_graphml(snap, path)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = ET.parse(path).getroot()
    graph = root.find("g:graph", ns)
    assert graph is not None
    assert len(graph.findall("g:node", ns)) == len(snap.nodes)
    assert len(graph.findall("g:edge", ns)) == len(snap.rels)
    keys = {k.get("attr.name"): k.get("attr.type") for k in root.findall("g:key", ns)}
    assert keys["score"] == "double" and keys["page"] == "long" and "embedding" not in keys
    kinds = {e.findtext("g:data[@key='label']", namespaces=ns) for e in graph.findall("g:edge", ns)}
    assert {"SIMILAR", "HAS_PAGE", "CONTAINS", "HAS_PASSAGE", "NEXT", "HAS_KEYWORD"} <= kinds


def test_the_command_exports_and_says_what_is_wrong(source: Any, tmp_path: Path) -> None:
    data_dir = str(source.settings.data_dir)
    done = run_kgp("--data-dir", data_dir, "export", str(tmp_path / "out"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["documents"] == 4
    again = run_kgp("--data-dir", data_dir, "export", str(tmp_path / "out"))
    assert again.returncode == 1 and "already holds an export" in again.stderr
    assert "Traceback" not in again.stderr
    bad = run_kgp("--data-dir", data_dir, "export", str(tmp_path / "x.txt"), "--to", "graphml")
    assert bad.returncode == 1 and ".graphml file" in bad.stderr
    part = run_kgp(
        "--data-dir",
        data_dir,
        "export",
        str(tmp_path / "p.graphml"),
        "--to",
        "graphml",
        "--readable-by",
        "public",
    )
    assert part.returncode == 0 and "exported 3 documents" in part.stdout, part.stderr
    reader = run_kgp("--data-dir", data_dir, "--groups", "public", "export", str(tmp_path / "q"))
    assert reader.returncode == 1 and "--readable-by" in reader.stderr


def test_a_keyword_named_as_a_document_stays_a_keyword_and_xml_holds_no_control_character(
    tmp_path: Path,
) -> None:
    """A keyword's term may equal a document's id ("See notes.md" gives the keyword notes.md):
    each relationship still joins the right nodes in CSV and GraphML; a text file's control
    characters, which XML 1.0 cannot hold, are left out of GraphML."""
    snap = Snapshot(
        nodes=[
            {"label": "Document", "key": "notes.md", "props": {"id": "notes.md", "groups": ["a"]}},
            {
                "label": "Passage",
                "key": "notes.md#passage=0",
                "props": {
                    "id": "notes.md#passage=0",
                    "doc_id": "notes.md",
                    "page": 1,
                    "ordinal": 0,
                    "text": "See notes.md \x1b[1m now",
                    "embedding": [0.5],
                },
            },
            {"label": "Keyword", "key": "notes.md", "props": {"term": "notes.md", "df": 1}},
        ],
        rels=[
            {
                "type": "HAS_PASSAGE",
                "source": "notes.md",
                "target": "notes.md#passage=0",
                "props": {},
            },
            {
                "type": "HAS_KEYWORD",
                "source": "notes.md#passage=0",
                "target": "notes.md",
                "props": {},
            },
        ],
    )
    write_csv(snap, tmp_path / "out")
    names = {p.name for p in (tmp_path / "out").glob("rels-*.csv")}
    assert names == {
        "rels-HAS_PASSAGE-Document-Passage.csv",
        "rels-HAS_KEYWORD-Passage-Keyword.csv",
    }
    back = read_csv(tmp_path / "out")
    assert canonical(back.nodes) == canonical(snap.nodes)
    write_graphml(snap, tmp_path / "g.graphml")
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    graph = ET.parse(tmp_path / "g.graphml").getroot().find("g:graph", ns)
    assert graph is not None
    ids = {n.get("id") for n in graph.findall("g:node", ns)}
    assert ids == {"Document:notes.md", "Passage:notes.md#passage=0", "Keyword:notes.md"}
    ends = {(e.get("source"), e.get("target")) for e in graph.findall("g:edge", ns)}
    assert ("Passage:notes.md#passage=0", "Keyword:notes.md") in ends
    with pytest.raises(ConfigurationError, match="exists"):
        write_graphml(snap, tmp_path / "g.graphml")

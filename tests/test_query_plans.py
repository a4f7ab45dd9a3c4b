"""A query about a few documents costs what they hold, not what the graph holds: FalkorDB's plan
for each starts from an index, never from a scan of every node of a label. (The write query once
scanned every passage to find the neighbours of the document it replaced, which made a sync
quadratic: tests/bench/scale_bench.py measured it.) Plans, not timings, so the test is exact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kgp import cypher
from kgp.access import ADMIN_CALLER
from kgp.stores import FalkorStore
from kgp.stores.rows import documents_rows

from tests.graphs import make_document

ADMIN = ADMIN_CALLER.parameters
PER_DOCUMENT: dict[str, dict[str, Any]] = {
    "delete_document": {"id": "a.txt"},
    "document_passages": {"doc_ids": ["a.txt"]},
    "count_document_nodes": {"doc_ids": ["a.txt"]},
    "fetch_nodes": {"ids": ["a.txt#passage=0", "a.txt"]},
    "passage_vectors": {"ids": ["a.txt#passage=0"]},
    "passage_texts": {"ids": ["a.txt#passage=0"]},
    "passages_by_text_hash": {"hashes": ["0" * 16]},
    "set_document_groups": {"rows": [{"id": "a.txt", "groups": ["hr"]}]},
}


@pytest.fixture(scope="module")
def falkor(tmp_path_factory: pytest.TempPathFactory) -> Any:
    document = make_document("a.txt", 3, table_rows=2, similar_to=())
    with FalkorStore(data_dir=Path(tmp_path_factory.mktemp("plans"))) as store:
        store.ensure_schema(len(document.passages[0].embedding))
        store.write_documents([document])
        store.write_documents([make_document("b.txt", 3, seed=1, similar_to=("a.txt#passage=0",))])
        yield store, documents_rows([document], store.dimension)


def scans(store: FalkorStore, name: str, parameters: dict[str, Any]) -> list[str]:
    plan = str(store.graph.explain(cypher.load(store.dialect, name), {**parameters, **ADMIN}))
    # the one Meta node (the graph's records: encoder, schema, group sets) is no scan of the graph
    return [
        line.strip()
        for line in plan.splitlines()
        if "Scan" in line and "Index" not in line and "(m:Meta)" not in line
    ]


@pytest.mark.parametrize("name", ["write_documents", *PER_DOCUMENT])
def test_per_document_queries_start_from_an_index(falkor: Any, name: str) -> None:
    store, rows = falkor
    assert scans(store, name, rows if name == "write_documents" else PER_DOCUMENT[name]) == []


def test_a_scan_is_seen(tmp_path: Path) -> None:
    """The check itself: the write query's earlier form, which scanned every passage."""
    earlier = """
    CALL {
      MATCH (p:Passage)-[:SIMILAR]->(:Passage {doc_id: $id})
      WHERE p.doc_id <> $id
      MERGE (p)-[:NEEDS_KNN]->(p)
    }
    RETURN 1 AS done
    """
    with FalkorStore(data_dir=tmp_path) as store:
        store.ensure_schema(4)
        plan = str(store.graph.explain(earlier, {"id": "a.txt"}))
    assert "Node By Label Scan | (p:Passage)" in plan


def test_the_refill_finds_flagged_passages_from_the_flags_index(falkor: Any) -> None:
    """A refill (after every removal) costs what is flagged: the passages' own pattern planned a
    scan of every passage through the id index (200 ms at 100,000 passages, with no flag)."""
    store, _ = falkor
    parameters = {"after": "", "limit": 10, **ADMIN}
    plan = str(store.graph.explain(cypher.load(store.dialect, "passages_needing_knn"), parameters))
    assert "Edge By Index Scan" in plan and "NEEDS_KNN" in plan, plan
    assert "Node By" not in plan and "All Node Scan" not in plan, plan

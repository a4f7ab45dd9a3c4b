"""The GraphStore contract, run against every configured store (FalkorDB always, Neo4j when
KGP_TEST_NEO4J_URI is set). Each test checks effects: counts, contents, orders."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from kgp.access import Caller
from kgp.errors import AccessDeniedError, ConfigurationError, DocumentError
from kgp.stores import EdgeKind, GraphStore, search
from kgp.stores.coverage import reads_all
from kgp.stores.model import (
    DocumentGraph,
    PassageRecord,
    neighbour_rows,
    passage_id,
)
from kgp.stores.rows import document_rows, documents_rows

from tests.graphs import DIM, document_graphs, make_document


def expected_dump(
    graphs: list[DocumentGraph], store: GraphStore
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The canonical dump ``store`` must hold after writing ``graphs`` (computed without it; its
    passages' full-text terms where its index holds them: tests/test_index_terms.py)."""
    nodes: dict[tuple[str, str], dict[str, Any]] = {}
    rels: list[dict[str, Any]] = []
    keyword_users: dict[str, int] = {}
    for graph in graphs:
        rows = document_rows(graph, with_terms=store.terms_indexed)
        doc = rows["doc"]
        nodes[("Document", doc["id"])] = dict(doc)
        for page in rows["pages"]:
            nodes[("Page", page["id"])] = dict(page)
            rels.append(
                {"type": "HAS_PAGE", "source": doc["id"], "target": page["id"], "props": {}}
            )
        for table in rows["tables"]:
            nodes[("Table", table["props"]["id"])] = dict(table["props"])
            rels.append(
                {
                    "type": "CONTAINS",
                    "source": table["page_id"],
                    "target": table["props"]["id"],
                    "props": {},
                }
            )
        for passage in [*rows["passages"], *rows["table_passages"]]:
            nodes[("Passage", passage["id"])] = dict(passage["props"])
            rels.append(
                {"type": "HAS_PASSAGE", "source": doc["id"], "target": passage["id"], "props": {}}
            )
            rels.append(
                {
                    "type": "CONTAINS",
                    "source": passage["table_id"] or passage["page_id"],
                    "target": passage["id"],
                    "props": {},
                }
            )
        for edge in rows["next"]:
            rels.append({"type": "NEXT", **edge, "props": {}})
        for link in rows["keywords"]:
            keyword_users[link["term"]] = keyword_users.get(link["term"], 0) + 1
            rels.append(
                {
                    "type": "HAS_KEYWORD",
                    "source": link["passage"],
                    "target": link["term"],
                    "props": {},
                }
            )
        for edge in rows["similar"]:
            rels.append(
                {
                    "type": "SIMILAR",
                    "source": edge["source"],
                    "target": edge["target"],
                    "props": {"score": edge["score"], "method": edge["method"]},
                }
            )
    for term, df in keyword_users.items():
        nodes[("Keyword", term)] = {"term": term, "df": df}
    node_list = [
        {"label": label, "key": key, "props": props} for (label, key), props in nodes.items()
    ]
    node_list.sort(key=lambda n: (n["label"], str(n["key"])))
    rels.sort(
        key=lambda r: (r["type"], str(r["source"]), str(r["target"]), sorted(r["props"].items()))
    )
    return node_list, rels


def test_write_then_dump_is_exactly_the_document(store: GraphStore) -> None:
    graphs = [make_document("a.txt", 6, tables=2), make_document("b.txt", 4, seed=1)]
    for graph in graphs:
        store.write_documents([graph])
    assert store.upkeep.dump() == expected_dump(graphs, store)
    counts = store.counts()
    labels = {k: n for k, n in counts.labels.items() if k != "Meta"}  # (a store's bookkeeping)
    assert labels == {"Document": 2, "Keyword": 12, "Page": 4, "Passage": 10, "Table": 3}
    assert counts.relationships["NEXT"] == 5 + 3
    assert counts.relationships["HAS_KEYWORD"] == 10 * 3


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(first=document_graphs(), second=document_graphs(doc_id="other.md"))
def test_round_trip_of_generated_documents(
    store: GraphStore, first: DocumentGraph, second: DocumentGraph
) -> None:
    store.clear()
    graphs = [first, second] if first.document.id != "other.md" else [second]
    for graph in graphs:
        store.write_documents([graph])
    assert store.upkeep.dump() == expected_dump(graphs, store)
    fetched = store.fetch_nodes([passage_id(first.document.id, p.ordinal) for p in first.passages])
    if first in graphs:
        assert {v["text"] for v in fetched.values()} == {p.text for p in first.passages}


def test_replace_leaves_no_orphans(store: GraphStore) -> None:
    store.write_documents([make_document("keep.txt", 3, keywords=("shared",), seed=3)])
    store.write_documents([make_document("x.txt", 8, keywords=("shared", "gone"), tables=3)])
    replacement = make_document("x.txt", 2, keywords=("shared", "fresh"), tables=0, seed=9)
    store.write_documents([replacement])
    expected = expected_dump(
        [make_document("keep.txt", 3, keywords=("shared",), seed=3), replacement], store
    )
    assert store.upkeep.dump() == expected
    assert "gone" not in {n["key"] for n in store.upkeep.dump()[0]}


def test_delete_removes_document_and_unused_keywords(store: GraphStore) -> None:
    keep = make_document("keep.txt", 3, keywords=("shared",), seed=3)
    store.write_documents([keep])
    store.write_documents(
        [
            make_document(
                "x.txt", 4, keywords=("shared", "only-x"), similar_to=(passage_id("keep.txt", 1),)
            )
        ]
    )
    assert store.delete_document("x.txt") is True
    assert store.upkeep.dump() == expected_dump([keep], store)
    assert store.delete_document("x.txt") is False


def test_writing_same_document_twice_is_idempotent(store: GraphStore) -> None:
    graph = make_document("same.txt", 5)
    store.write_documents([graph])
    once = store.upkeep.dump()
    store.write_documents([graph])
    assert store.upkeep.dump() == once


def test_documents_written_together_equal_documents_written_one_by_one(
    store: GraphStore,
) -> None:
    """One query for many documents (how a sync writes): the same graph as a query each,
    replacements included. The older passages that pointed into a replaced document are
    flagged, the replaced documents' own are not (they are gone)."""

    def older() -> None:
        store.clear()
        store.write_documents([make_document("a.txt", 4, keywords=("shared", "a-old"), tables=2)])
        store.write_documents([make_document("b.txt", 3, seed=1, similar_to=("a.txt#passage=1",))])
        store.write_documents(
            [
                make_document(
                    "c.txt", 3, seed=2, keywords=("shared",), similar_to=("a.txt#passage=2",)
                )
            ]
        )

    newer = [
        make_document("a.txt", 2, keywords=("shared", "a-new"), seed=7, tables=0),
        make_document("b.txt", 5, seed=8, similar_to=("a.txt#passage=0", "c.txt#passage=1")),
        make_document("d.txt", 1, seed=9, keywords=("d-only",), similar_to=("b.txt#passage=4",)),
    ]
    older()
    for graph in newer:
        store.write_documents([graph])
    one_by_one = store.upkeep.dump()
    older()
    store.write_documents(newer)
    together = store.upkeep.dump()
    assert together == one_by_one
    flagged = {r["source"] for r in together[1] if r["type"] == "NEEDS_KNN"}
    assert flagged == {"c.txt#passage=0"}  # it pointed into a.txt, which was replaced
    keywords = {n["key"]: n["props"]["df"] for n in together[0] if n["label"] == "Keyword"}
    assert "a-old" not in keywords and keywords["shared"] == 2 + 3


def on_a_missing_page(doc_id: str) -> DocumentGraph:
    """A document with a passage on a page it does not have."""
    made = make_document(doc_id)
    extra = PassageRecord(page=9, ordinal=99, text="x", embedding=(0.0,) * DIM)
    return DocumentGraph(document=made.document, passages=(*made.passages, extra))


def test_a_bad_document_keeps_its_whole_batch_out(store: GraphStore) -> None:
    store.write_documents([make_document("ok.txt")])
    before = store.upkeep.dump()
    with pytest.raises(DocumentError, match=r"bad.txt.*page 9"):
        store.write_documents([make_document("fine.txt", seed=3), on_a_missing_page("bad.txt")])
    with pytest.raises(DocumentError, match=r"fine\.txt: given twice"):
        store.write_documents([make_document("fine.txt"), make_document("fine.txt", seed=3)])
    rows = documents_rows([make_document("fine.txt", seed=3), make_document("ok.txt", 3)], DIM)
    rows["passages"][-1]["embedding"] = ["not a number"] * DIM  # fails inside the query
    with pytest.raises(Exception) as raised:
        store.run("write_documents", rows, write=True)
    assert type(raised.value).__module__.startswith("kgp")
    assert store.upkeep.dump() == before


def test_list_documents(store: GraphStore) -> None:
    a, b = make_document("b/2.txt"), make_document("a/1.txt", seed=4)
    store.write_documents([a])
    store.write_documents([b])
    listed = store.list_documents()
    assert [d.id for d in listed] == ["a/1.txt", "b/2.txt"]
    assert listed[1].sha256 == a.document.sha256


def test_inconsistent_document_is_refused_before_anything_is_written(store: GraphStore) -> None:
    store.write_documents([make_document("ok.txt")])
    before = store.upkeep.dump()
    bad = make_document("bad.txt")
    broken = on_a_missing_page("bad.txt")
    with pytest.raises(DocumentError, match=r"bad.txt.*page 9"):
        store.write_documents([broken])
    wrong_dim = DocumentGraph(
        document=bad.document,
        passages=(PassageRecord(page=1, ordinal=0, text="x", embedding=(0.0,) * 3),),
    )
    with pytest.raises(DocumentError, match="3-dimension"):
        store.write_documents([wrong_dim])
    assert store.upkeep.dump() == before


def test_failing_write_changes_nothing(store: GraphStore) -> None:
    """A query that fails half-way (deletes done, passages being created) is rolled back whole."""
    store.write_documents([make_document("first.txt", 3)])
    store.write_documents([make_document("second.txt", 2, seed=5)])
    before = store.upkeep.dump()
    rows = documents_rows([make_document("second.txt", 3)], DIM)
    rows["passages"][2]["embedding"] = ["not a number"] * DIM  # fails inside the query
    with pytest.raises(Exception) as raised:
        store.run("write_documents", rows, write=True)
    assert type(raised.value).__module__.startswith("kgp")
    assert store.upkeep.dump() == before


def test_vector_search_returns_true_nearest_neighbours(fresh_store: GraphStore) -> None:
    """Exact on a fresh index. (FalkorDB's HNSW index loses recall after many deletions.)"""
    store = fresh_store
    rng = np.random.default_rng(7)
    graphs = [make_document(f"v{i}.txt", 50, seed=100 + i, tables=0) for i in range(6)]
    for graph in graphs:
        store.write_documents([graph])
    ids = [passage_id(g.document.id, p.ordinal) for g in graphs for p in g.passages]
    matrix = np.array([p.embedding for g in graphs for p in g.passages])
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    for _ in range(30):
        query = rng.standard_normal(DIM)
        cosine = matrix @ (query / np.linalg.norm(query))
        truth = [ids[i] for i in np.argsort(-cosine)[:10]]
        hits = store.vector_search(query.tolist(), 10)
        assert [h.id for h in hits] == truth
        np.testing.assert_allclose([h.score for h in hits], np.sort(cosine)[::-1][:10], atol=1e-4)


def test_vector_search_rejects_wrong_dimension(store: GraphStore) -> None:
    with pytest.raises(ConfigurationError, match="3 dimensions"):
        store.vector_search([0.1, 0.2, 0.3], 5)


def test_fulltext_search_finds_words_and_ignores_syntax(store: GraphStore) -> None:
    store.write_documents([make_document("zoo.txt", 4, text="the zebra number {j} eats grass")])
    store.write_documents([make_document("farm.txt", 4, text="a cow number {j} eats hay", seed=2)])
    hits = store.fulltext_search("zebra", 10)
    assert {h.id for h in hits} == {passage_id("zoo.txt", j) for j in range(4)}
    both = {h.id for h in store.fulltext_search("zebra OR cow", 20)}
    assert len(both) == 8
    store.fulltext_search("') DETACH DELETE n //", 5)
    assert store.counts().labels["Passage"] == 8
    assert store.fulltext_search("  ", 5) == []
    assert store.fulltext_search('"hay" AND (grass', 10)  # stray syntax is not an error


def test_fulltext_ranks_rare_words_above_common_ones(store: GraphStore) -> None:
    # BM25's inverse document frequency: FalkorDB's own full-text score ignored it, and a
    # passage repeating a common word outranked the one naming the rare thing asked about
    store.write_documents(
        [make_document("common.txt", 12, text="number {j}: pump station valve, pump station valve")]
    )
    store.write_documents([make_document("z.txt", 1, text="a zeppelin", seed=3)])
    hits = store.fulltext_search("which pump station valve has a zeppelin?", 5)
    assert hits[0].id == passage_id("z.txt", 0)
    assert len(hits) == 5 and hits[0].score > hits[1].score


def test_a_term_over_the_cap_counts_for_none_and_the_cap_counts_readable_passages(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each term is one query that stops past the cap: a common word costs the same at any size
    monkeypatch.setattr(search, "FULLTEXT_CAP", 3)
    store.write_documents([make_document("open.txt", 2, text="pump number {j}")])
    store.write_documents([make_document("hr.txt", 3, text="pump salary {j}", seed=1)])
    store.write_documents([make_document("z.txt", 1, text="a zeppelin", seed=3)])
    store.set_document_groups({"hr.txt": ["hr"]})
    z0, opened = passage_id("z.txt", 0), {passage_id("open.txt", j) for j in range(2)}
    # the admin reads five passages with "pump": more than the cap, so only the zeppelin counts
    assert [h.id for h in store.fulltext_search("pump zeppelin", 3)] == [z0]
    with store.reading_as(Caller(("public",))):  # two: under the cap, so "pump" counts
        hits = [h.id for h in store.fulltext_search("pump zeppelin", 3)]
    assert hits[0] == z0 and set(hits[1:]) == opened


def test_readable_passages_counts_each_readable_documents_passages_tables_rows_too(
    store: GraphStore,
) -> None:
    # BM25's n, counted from the documents' HAS_PASSAGE degrees (FalkorDB): table rows are
    # passages, a document with no group is read by the admin alone, and a removal counts at once
    store.write_documents([make_document("open.txt", 4, table_rows=3)])
    store.write_documents([make_document("hr.txt", 2, seed=1)])
    store.write_documents([make_document("none.txt", 5, seed=2)])
    store.set_document_groups({"open.txt": ["public"], "hr.txt": ["hr"], "none.txt": []})
    n = {d: len(store.document_passages([d])) for d in ("open.txt", "hr.txt", "none.txt")}
    assert any(p.table_id for p in store.document_passages(["open.txt"]))  # rows count too
    assert store.readable_passages() == store.links.count_passages() == sum(n.values())
    with store.reading_as(Caller(("public",))):
        assert store.readable_passages() == n["open.txt"]
    with store.reading_as(Caller(("hr", "public"))):
        assert store.readable_passages() == n["open.txt"] + n["hr.txt"]
    with store.reading_as(Caller(("nobody",))):
        assert store.readable_passages() == 0
    store.delete_document("open.txt")
    with store.reading_as(Caller(("hr", "public"))):
        assert store.readable_passages() == n["hr.txt"]


def test_the_admins_full_text_checks_no_document_and_finds_what_a_reader_of_all_finds(
    store: GraphStore,
) -> None:
    # the admin reads every passage, so its term query skips the documents' groups (5x faster
    # at 1M passages); a caller reading every group gets the same ranking through the check
    store.write_documents([make_document("open.txt", 4, text="pump station number {j}")])
    store.write_documents([make_document("hr.txt", 3, text="pump salary {j}", seed=1)])
    store.set_document_groups({"hr.txt": ["hr"]})
    names: list[str] = []
    store.tracer = lambda event: names.append(event.name)
    admin = store.fulltext_search("pump salary station", 7)
    assert set(names) >= {"fulltext_term_all"} and "fulltext_term" not in names
    names.clear()
    with store.reading_as(Caller(("public", "hr"))):
        assert store.fulltext_search("pump salary station", 7) == admin
        assert "fulltext_term" in names and "fulltext_term_all" not in names
    assert {h.id for h in admin} == {
        passage_id(d, j) for d, n in (("open.txt", 4), ("hr.txt", 3)) for j in range(n)
    }
    with store.reading_as(Caller(("public",))), pytest.raises(AccessDeniedError):
        store.run("fulltext_term_all", {"term": "salary", "limit": 10})


def test_the_admins_vector_search_checks_no_document_and_finds_what_a_reader_of_all_finds(
    store: GraphStore,
) -> None:
    store.write_documents([make_document("open.txt", 6, seed=2)])
    store.write_documents([make_document("hr.txt", 5, seed=3)])
    store.set_document_groups({"hr.txt": ["hr"]})
    vectors = [p.embedding for p in store.passage_vectors([passage_id("hr.txt", 0)]).values()]
    names: list[str] = []
    store.tracer = lambda event: names.append(event.name)
    # (the embedded store searches its index beside the graph, then reads the passages back)
    every, checked = ("knn_candidates_all", "knn_passages_all"), ("knn_candidates", "knn_passages")
    admin = store.nearest(vectors, want=8, floor=0.0)
    assert set(names) & set(every) and not set(names) & set(checked)
    names.clear()
    with store.reading_as(Caller(("public", "hr"))):
        assert store.nearest(vectors, want=8, floor=0.0) == admin
        assert set(names) & set(checked) and not set(names) & set(every)
    with store.reading_as(Caller(("public",))):
        (hits,) = store.nearest(vectors, want=8)
        assert hits and not any(pid.startswith("hr.txt") for pid, _ in hits)
        for name in every:
            with pytest.raises(AccessDeniedError):
                store.run(name, {"rows": [], "keys": []})
    assert len(admin[0]) >= 8


def test_batched_neighbours_by_kind(store: GraphStore) -> None:
    store.write_documents([make_document("a.txt", 4, keywords=("common",))])
    store.write_documents(
        [
            make_document(
                "b.txt",
                3,
                keywords=("common",),
                seed=1,
                similar_to=(passage_id("a.txt", 2), passage_id("a.txt", 3)),
            )
        ]
    )
    a0, a1, b0 = passage_id("a.txt", 0), passage_id("a.txt", 1), passage_id("b.txt", 0)
    found = store.neighbours([a1, b0], [EdgeKind.NEXT, EdgeKind.SIMILAR])
    by = {
        (n.source, n.kind): sorted(
            x.target for x in found if x.source == n.source and x.kind == n.kind
        )
        for n in found
    }
    assert by[(a1, EdgeKind.NEXT)] == [a0, passage_id("a.txt", 2)]
    assert by[(b0, EdgeKind.NEXT)] == [passage_id("b.txt", 1)]
    assert by[(b0, EdgeKind.SIMILAR)] == [passage_id("a.txt", 2), passage_id("a.txt", 3)]
    # SIMILAR is followed both ways
    back = store.neighbours([passage_id("a.txt", 3)], [EdgeKind.SIMILAR])
    assert [n.target for n in back] == [b0]

    keyword = store.neighbours([a0], [EdgeKind.KEYWORD], limit=100)
    assert len(keyword) == 6  # every other passage shares "common"
    assert all(n.weight == 1.0 for n in keyword)
    assert len(store.neighbours([a0], [EdgeKind.KEYWORD], limit=2)) == 2
    assert store.neighbours([a0], [EdgeKind.KEYWORD], max_df=6) == []  # "common" has df 7
    assert store.neighbours([], [EdgeKind.NEXT]) == []


def test_neighbours_of_every_kind_in_one_query(store: GraphStore) -> None:
    from kgp.stores.tracer import TraceLog

    store.write_documents([make_document("a.txt", 30), make_document("b.txt", 8, seed=2)])
    ids = [passage_id("a.txt", j) for j in range(30)]
    log = TraceLog()
    store.tracer = log
    try:
        store.neighbours(ids, limit=4, max_df=20)
    finally:
        store.tracer = None
    # a caller reading every passage (the admin here) gets the query that checks no document,
    # and the same neighbours as the checking one
    assert reads_all(store, store.caller_now())
    assert log.names() == ["neighbours_all"]
    for max_df in (20, 50):  # the keywords (in all 38 passages) over the cap, then under it
        found = store.neighbours(ids, limit=4, max_df=max_df)
        params = {"ids": ids, "kinds": [k.value for k in EdgeKind], "limit": 4, "max_df": max_df}
        checked = neighbour_rows(store.run("neighbours", params))
        assert found and set(found) == set(checked) and len(found) == len(checked)
        assert (EdgeKind.KEYWORD in {n.kind for n in found}) == (max_df == 50)


def test_fetch_nodes_of_every_label(store: GraphStore) -> None:
    store.write_documents([make_document("f.txt", 2, tables=1)])
    nodes = store.fetch_nodes(
        ["f.txt", "f.txt#page=1", "f.txt#page=1&table=0", passage_id("f.txt", 1), "missing"]
    )
    assert {k: v["label"] for k, v in nodes.items()} == {
        "f.txt": "Document",
        "f.txt#page=1": "Page",
        "f.txt#page=1&table=0": "Table",
        passage_id("f.txt", 1): "Passage",
    }
    assert "embedding" not in nodes[passage_id("f.txt", 1)]
    assert nodes["f.txt#page=1&table=0"]["markdown"].startswith("| a | b |")


def test_cypher_fragments_are_data(store: GraphStore) -> None:
    evil = "') DETACH DELETE n // \" \\ $x {id: 1}"
    store.write_documents([make_document("safe.txt", 2)])
    text = evil.replace("{", "{{").replace("}", "}}") + " {j}"
    store.write_documents([make_document(evil, 2, text=text, keywords=(evil,))])
    assert store.counts().labels["Document"] == 2
    assert store.fetch_nodes([evil])[evil]["path"] == evil
    assert store.delete_document(evil)
    assert store.list_documents()[0].id == "safe.txt"


def test_schema_is_idempotent_and_checks_dimension(store: GraphStore) -> None:
    store.ensure_schema(DIM)
    with pytest.raises(ConfigurationError, match="16-dimension"):
        store.ensure_schema(DIM + 1)
    store.ensure_schema(DIM)


@pytest.mark.parametrize("doc_id", [" leading.txt", "\ttab.txt", "trailing.txt\n", "a\x01b.txt"])
def test_ids_the_index_cannot_find_are_refused(store: GraphStore, doc_id: str) -> None:
    with pytest.raises(DocumentError, match="control character or leading or trailing whitespace"):
        store.write_documents([make_document(doc_id)])
    assert store.counts().labels == {}


def test_table_rows_are_passages_of_their_table(store: GraphStore) -> None:
    graph = make_document("t.txt", 5, tables=1, table_rows=2, text="{doc} zanzibar row {j}")
    store.write_documents([graph])
    rows = [passage_id("t.txt", 3), passage_id("t.txt", 4)]
    _, rels = store.upkeep.dump()
    contains = {(r["source"], r["target"]) for r in rels if r["type"] == "CONTAINS"}
    assert {("t.txt#page=1&table=0", pid) for pid in rows} <= contains
    assert not {(s, t) for s, t in contains if t in rows and "table" not in s}, "not the page's"
    nexts = {(r["source"], r["target"]) for r in rels if r["type"] == "NEXT"}
    assert (rows[0], rows[1]) in nexts and (passage_id("t.txt", 2), rows[0]) not in nexts
    page = store.page_contents([1])[0]
    assert {x.id for x in page.passages}.isdisjoint(rows), "a page lists its prose"
    assert len(store.fulltext_search("zanzibar", 10)) == 5, "table rows are found like prose"
    assert store.passage_vectors(rows)[rows[0]].table_id == "t.txt#page=1&table=0"
    assert store.passage_vectors([passage_id("t.txt", 0)])[passage_id("t.txt", 0)].table_id is None


def test_document_groups_are_written_listed_and_changed_on_the_document_alone(
    store: GraphStore,
) -> None:
    from dataclasses import replace

    graph = make_document("hr.txt", 4)
    store.write_documents([replace(graph, document=replace(graph.document, groups=("hr",)))])
    store.write_documents([make_document("open.txt", 3, seed=1)])
    assert {d.id: d.groups for d in store.list_documents()} == {
        "hr.txt": ("hr",),
        "open.txt": ("public",),
    }
    passages = [n for n in store.upkeep.dump()[0] if n["label"] != "Document"]
    store.set_document_groups({"hr.txt": ["board", "hr"]})
    assert store.list_documents()[0].groups == ("board", "hr")
    assert [n for n in store.upkeep.dump()[0] if n["label"] != "Document"] == passages

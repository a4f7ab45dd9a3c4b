"""Vector search through the store: every live passage found, none that was removed or written
again, ties ordered by id, deeper rounds where the first depth is short; the index rebuilt and
cleared with the graph; old graphs are migrated."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest
from kgp.access import Caller
from kgp.errors import ConfigurationError
from kgp.stores import FalkorStore, GraphStore
from kgp.stores.coverage import coverage
from kgp.stores.maintenance import SCHEMA_VERSION
from kgp.stores.model import passage_id

from tests.graphs import DIM, make_document


def in_step(store: GraphStore) -> bool:
    """Whether the vector index holds exactly as many entries as the graph has passages."""
    return store.upkeep.vector_index_entries() == store.links.count_passages()


def own_vectors(store: GraphStore, doc_id: str, count: int) -> dict[str, list[float]]:
    ids = [passage_id(doc_id, j) for j in range(count)]
    return {pid: p.embedding for pid, p in store.passage_vectors(ids).items()}


def test_rewritten_passages_are_found_once(fresh_store: GraphStore) -> None:
    store = fresh_store
    store.write_documents([make_document("other.txt", 20, seed=1, tables=0)])
    for _ in range(6):  # each rewrite puts 30 passages at the very same places
        store.write_documents([make_document("same.txt", 30, seed=2, tables=0)])
    assert in_step(store)
    vectors = own_vectors(store, "same.txt", 30)
    for pid, vector in vectors.items():
        hits = store.vector_search(vector, 5)
        assert len(hits) == 5 and hits[0].id == pid
    (everything,) = store.nearest([vectors[passage_id("same.txt", 0)]], want=50)
    assert len(everything) == 50, "every live passage, each once"


def test_a_search_whose_first_depth_is_excluded_goes_deeper(fresh_store: GraphStore) -> None:
    """A document rewritten many times, then excluded: the search goes on past it."""
    store = fresh_store
    for _ in range(25):
        store.write_documents([make_document("busy.txt", 1, seed=3, tables=0)])
    store.write_documents([make_document("far.txt", 1, seed=4, tables=0)])
    vector = own_vectors(store, "busy.txt", 1)[passage_id("busy.txt", 0)]
    hits = store.vector_search(vector, 2)
    assert [h.id for h in hits] == [passage_id("busy.txt", 0), passage_id("far.txt", 0)]
    (alone,) = store.nearest([vector], want=2, exclude_docs=["busy.txt"])
    assert [pid for pid, _ in alone] == [passage_id("far.txt", 0)], "and stops when exhausted"


def test_ties_at_the_cut_are_returned_whole(fresh_store: GraphStore) -> None:
    """Identical vectors are ordered by id, whatever order the index holds them in."""
    store = fresh_store
    for name in ("d.txt", "b.txt", "e.txt", "a.txt", "c.txt"):
        store.write_documents([make_document(name, 1, seed=5, tables=0)])  # the same vector
    vector = own_vectors(store, "a.txt", 1)[passage_id("a.txt", 0)]
    hits = store.vector_search(vector, 2)
    assert [h.id for h in hits] == [passage_id("a.txt", 0), passage_id("b.txt", 0)]


def test_a_search_started_deeper_finds_the_same_passages(fresh_store: GraphStore) -> None:
    """``start`` (the linker's second search, for vectors known to need more than the first
    depth) returns every passage above the floor that a search from the first depth returns,
    a cap below ``start`` asks the first depth, as without ``start``."""
    store = fresh_store
    for seed in range(4):
        store.write_documents([make_document(f"d{seed}.txt", 40, seed=seed, tables=0)])
    store.write_documents([make_document("d0.txt", 40, seed=9, tables=0)])  # written again
    vectors = list(own_vectors(store, "d1.txt", 40).values())[:5]
    floor = -0.05
    plain = store.nearest(vectors, want=5, floor=floor, exclude_docs=["d1.txt"] * 5)
    started = store.nearest(vectors, want=5, floor=floor, exclude_docs=["d1.txt"] * 5, start=60)
    for before, after in zip(plain, started, strict=True):
        above = {pid for pid, sim in before if sim > floor}
        assert len(above) > 15, "the floor is below the first depth's answer"
        assert above == {pid for pid, sim in after if sim > floor}
        assert before[:5] == after[:5]
        assert not any(pid.startswith("d1.txt") for pid, _ in after)
    capped = store.nearest(vectors, want=5, depth_cap=10, start=60)
    assert capped == store.nearest(vectors, want=5, depth_cap=10)
    # ``above`` (a bar the 5 nearest are known to clear, as the linker's floor): the same
    # passages above it, and nothing below it comes back
    barred = store.nearest(
        vectors, want=5, floor=floor, exclude_docs=["d1.txt"] * 5, start=60, above=[floor] * 5
    )
    for before, after in zip(plain, barred, strict=True):
        assert after == [(pid, sim) for pid, sim in before if sim > floor]


def test_a_bar_above_a_vectors_nearest_is_dropped_for_it(fresh_store: GraphStore) -> None:
    """``above`` is what the caller thinks the ``want`` nearest clear (an added document's
    linker asks once, as deep as the index looks, with its floor): a vector with fewer than
    ``want`` above it is asked again without it, so every vector still gets its ``want``
    nearest, and everything above the floor."""
    store = fresh_store
    for seed in range(4):
        store.write_documents([make_document(f"d{seed}.txt", 40, seed=seed, tables=0)])
    store.write_documents([make_document("d0.txt", 40, seed=9, tables=0)])  # written again
    vectors = list(own_vectors(store, "d3.txt", 40).values())[:8]
    plain = store.nearest(vectors, want=5, exclude_docs=["d3.txt"] * 8)
    fifths = sorted(hits[4][1] for hits in plain)
    floor = (fifths[3] + fifths[4]) / 2  # above the 5th nearest of half the vectors
    floored = store.nearest(vectors, want=5, floor=floor, exclude_docs=["d3.txt"] * 8)
    hinted = store.nearest(
        vectors, want=5, floor=floor, exclude_docs=["d3.txt"] * 8, start=60, above=[floor] * 8
    )
    for before, after in zip(floored, hinted, strict=True):
        assert after[:5] == before[:5]
        assert {p for p, sim in after if sim > floor} == {p for p, sim in before if sim > floor}
    assert sum(hits[4][1] < floor for hits in hinted) == 4


def test_deeper_rounds_return_only_what_lies_above_the_bar(fresh_store: GraphStore) -> None:
    """Once a vector has its hits, a search asked again deeper (for ties at the cut, or for
    a floor) returns what lies above its ``want``-th less the tie margin, or the floor: the
    same passages above it as every entry, and fewer rows."""
    store = fresh_store
    for seed in range(4):
        store.write_documents([make_document(f"d{seed}.txt", 40, seed=seed, tables=0)])
    vectors = list(own_vectors(store, "d2.txt", 40).values())[:4]
    floor = 0.05
    asked: list[list[dict[str, object]]] = []
    original = store._knn_candidates

    def counted(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        answer = original(rows)
        asked.append(answer)
        return answer

    store._knn_candidates = counted  # type: ignore[method-assign]
    found = store.nearest(vectors, want=5, floor=floor)
    store._knn_candidates = original  # type: ignore[method-assign]
    everything = store.nearest(vectors, want=160)  # every passage, best first
    assert len(asked) > 1, "the floor lies past the first depth"
    for vector_hits, whole in zip(found, everything, strict=True):
        assert vector_hits == [(pid, sim) for pid, sim in whole if sim > floor]
    for row in (r for answer in asked[1:] for r in answer):
        assert all(sim > floor for _, sim in row["hits"])  # type: ignore[attr-defined]


def test_best_similarities_are_the_cosines_within_the_tie_margin(store: GraphStore) -> None:
    """The store's own float32 cosine of each passage with the nearest of a few vectors: what
    the linker trusts to skip a weakly linked passage's vector (within TIE of the exact)."""
    store.write_documents([make_document("b.txt", 6, seed=1)])
    vectors = own_vectors(store, "b.txt", 6)
    rng = np.random.default_rng(9)
    queries = rng.standard_normal((4, DIM)).astype(np.float32)
    queries[1] = np.asarray(vectors[passage_id("b.txt", 2)], dtype=np.float32)  # its own
    best = store.links.best_similarities([*vectors, "missing"], queries.tolist())
    assert set(best) == set(vectors)
    units = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    for pid, vector in vectors.items():
        row = np.asarray(vector, dtype=np.float64)
        exact = float((units.astype(np.float64) @ (row / np.linalg.norm(row))).max())
        assert abs(best[pid] - exact) < 1e-5
    assert best[passage_id("b.txt", 2)] > 1 - 1e-5
    assert store.links.best_similarities([], queries.tolist()) == {}


def test_flags_and_weakest_links(store: GraphStore) -> None:
    store.write_documents([make_document("b.txt", 2, seed=1)])
    store.write_documents([make_document("c.txt", 1, seed=2)])
    links = (passage_id("b.txt", 0), passage_id("b.txt", 1), passage_id("c.txt", 0))
    store.write_documents([make_document("a.txt", 2, seed=3, similar_to=links)])
    a0 = passage_id("a.txt", 0)
    assert store.links.weakest_links([a0]) == {a0: (3, 0.5, False)}
    assert store.links.weakest_links([a0, "missing"], flags=False) == {a0: (3, 0.5, False)}
    store.write_documents([make_document("b.txt", 1, seed=4)])  # a0 loses two neighbours
    assert store.links.weakest_links([a0, "missing"]) == {a0: (1, 0.5, True)}
    assert store.links.weakest_links([a0], flags=False) == {a0: (1, 0.5, False)}  # the flag unread
    assert [r.id for r in store.links.passages_needing_knn()] == [
        a0
    ] and store.links.knn_flags() == 1
    assert store.links.similar_edges([a0]) == {a0: [(passage_id("c.txt", 0), 0.5)]}
    assert store.links.weak_passages(0.5) == [a0] and store.links.weak_passages(0.4) == []
    assert store.links.count_weak_edges(1.0, 10) == 1
    assert store.links.pending_documents() == ["a.txt", "b.txt", "c.txt"]
    store.links.replace_similar([{"source": a0, "targets": []}], done=["a.txt", "b.txt"])
    assert store.links.passages_needing_knn() == [] and store.links.pending_documents() == ["c.txt"]
    assert store.links.knn_flags() == 0


def test_a_schema_3_graph_gets_its_flags_indexed(fresh_store: GraphStore) -> None:
    """Flags written before schema 4 have no flag property: the migration gives it to them, and
    the refill finds them (and only them)."""
    store = fresh_store
    store.write_documents([make_document("old.txt", 3, seed=12, tables=0)])
    store.run("set_graph_encoder", {"encoder": "all-MiniLM-L6-v2", "schema": 3}, write=True)
    old = passage_id("old.txt", 1)
    store._execute(f"MATCH (p:Passage {{id: '{old}'}}) MERGE (p)-[:NEEDS_KNN]->(p)", {}, write=True)
    assert store.links.knn_flags() == 1
    assert store.upkeep.migrate() == [
        "schema 4: NEEDS_KNN flags indexed",
        "schema 5: the group sets in use recorded",
    ]
    assert [r.id for r in store.links.passages_needing_knn()] == [old]
    assert store.run("graph_schema")[0]["schema"] == SCHEMA_VERSION and store.upkeep.migrate() == []


def test_a_graph_of_a_newer_schema_is_refused_and_left_as_it_is(fresh_store: GraphStore) -> None:
    """An older kgp would write records it does not know of wrongly (the group sets of covered
    reads): it refuses the graph in one line and changes nothing."""
    store = fresh_store
    store.write_documents([make_document("new.txt", 2, seed=13, tables=0)])
    newer = SCHEMA_VERSION + 1
    store.run("set_graph_encoder", {"encoder": "all-MiniLM-L6-v2", "schema": newer}, write=True)
    before = store.upkeep.dump()
    with pytest.raises(
        ConfigurationError, match=f"schema {newer}, written by a newer kgp"
    ) as raised:
        store.upkeep.migrate()
    assert "\n" not in str(raised.value) and store.upkeep.dump() == before


def test_rebuild_keeps_every_passage_and_every_index(fresh_store: GraphStore) -> None:
    store = fresh_store
    for _ in range(3):
        store.write_documents([make_document("r.txt", 10, seed=6, tables=0, text="river {j}")])
    store.upkeep.rebuild_vector_index()
    assert in_step(store)
    vectors = own_vectors(store, "r.txt", 10)
    for pid, vector in vectors.items():
        assert store.vector_search(vector, 1)[0].id == pid
    assert len(store.fulltext_search("river", 20)) == 10
    assert store.fetch_nodes([passage_id("r.txt", 3)])


def test_clear_leaves_an_index_of_what_is_written_after(fresh_store: GraphStore) -> None:
    store = fresh_store
    store.write_documents([make_document("x.txt", 12, seed=8, tables=0)])
    store.clear()
    store.ensure_schema(DIM)
    store.write_documents([make_document("y.txt", 3, seed=9, tables=0)])
    assert in_step(store)
    rng = np.random.default_rng(1)
    assert len(store.vector_search(rng.standard_normal(DIM).tolist(), 3)) == 3


def test_a_schema_1_graph_is_migrated(fresh_store: GraphStore) -> None:
    """A graph written before schema 2: needs_knn properties, no text hashes, edges that linked
    old passages only to what existed when they were written, and orphans from writes to
    passages. Migration flags every passage for an exact refill and rebuilds the index."""
    store = fresh_store
    store.write_documents([make_document("old.txt", 5, seed=11, tables=0)])
    store.run("set_graph_encoder", {"encoder": "all-MiniLM-L6-v2", "schema": 1}, write=True)
    old_writes = "MATCH (p:Passage) SET p.needs_knn = true REMOVE p.text_hash"
    store._execute(old_writes, {}, write=True)
    store._execute("MATCH (d:Document) REMOVE d.groups", {}, write=True)  # before access groups
    assert store.upkeep.migrate(("staff",)) == [
        "schema 2: NEEDS_KNN flags, text hashes, vector index rebuilt",
        "schema 3: access groups, staff where none",
        "schema 4: NEEDS_KNN flags indexed",
        "schema 5: the group sets in use recorded",
    ]
    assert [d.groups for d in store.list_documents()] == [("staff",)]
    for caller, reads_all in ((Caller(("staff",)), True), (Caller(("hr",)), False)):
        with store.reading_as(caller):  # the sets recorded after the groups were given
            assert coverage(store)[1] is reads_all
    assert len(store.links.passages_needing_knn()) == 5 == store.links.knn_flags()
    nodes = store.upkeep.dump()[0]
    passages = [n["props"] for n in nodes if n["label"] == "Passage"]
    assert all("needs_knn" not in p and len(p["text_hash"]) == 32 for p in passages)
    assert store.run("graph_schema")[0]["schema"] == SCHEMA_VERSION
    assert in_step(store)
    for pid, vector in own_vectors(store, "old.txt", 5).items():
        assert store.vector_search(vector, 1)[0].id == pid
    assert store.upkeep.migrate() == []


def test_a_kill_after_writes_leaves_an_index_equal_to_the_graph(data_dir: Path) -> None:
    """The server killed after writes its index file never saw: the next open replays the log
    and brings the index up to the graph (kgp.stores.falkordb.vectors), every passage found once."""
    store = FalkorStore(data_dir=data_dir).open()
    store.ensure_schema(DIM)
    store.upkeep.checkpoint()  # an index file of the empty graph
    for i in range(20):  # never compacted into a snapshot
        store.write_documents([make_document(f"w{i}.txt", 20, seed=i, tables=0)])
    vectors = own_vectors(store, "w7.txt", 20)
    os.kill(int(store.server.pid_file.read_text()), signal.SIGKILL)
    store.close()
    again = FalkorStore(data_dir=data_dir).open()
    try:
        assert in_step(again) and again.links.count_passages() == 400
        for pid, vector in vectors.items():
            assert again.vector_search(vector, 5)[0].id == pid
    finally:
        again.close()

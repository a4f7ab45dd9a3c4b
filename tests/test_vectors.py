"""The embedded store's vectors in an index beside the graph (kgp.stores.falkordb.vectors): it holds
exactly the graph's passages through writes, rewrites and removals, in this process and in
another, and an index file behind, ahead of, or missing from the graph is made equal to it at
the next open."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from kgp.access import ADMIN_CALLER
from kgp.ingest.builder import with_embeddings
from kgp.stores import FalkorStore
from kgp.stores.base import GraphStore
from kgp.stores.falkordb import vectors
from kgp.stores.falkordb.vectors import PassageVectors
from kgp.stores.model import DocumentGraph, passage_id, stored_vectors

from tests.graphs import DIM, make_document


def graph_keys(store: FalkorStore) -> set[int]:
    with store.reading_as(ADMIN_CALLER):
        return {int(k) for k in store.run("vector_keys")[0]["keys"]}


def vector_of(store: FalkorStore, pid: str) -> list[float]:
    """The vector the graph keeps (the store's own passage_vectors reads the index's copy)."""
    return list(GraphStore.passage_vectors(store, [pid])[pid].embedding)


def first_hit(store: FalkorStore, vector: list[float]) -> str:
    return store.vector_search(vector, 1)[0].id


def open_store(data_dir: Path) -> FalkorStore:
    store = FalkorStore(data_dir=data_dir).open()
    store.ensure_schema(DIM)
    return store


def test_the_index_holds_exactly_the_graphs_passages_through_writes_and_removals(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path / "kb") as store:
        store.write_documents([make_document("a.txt", 6), make_document("b.txt", 4, seed=1)])
        assert store.vectors.keys() == graph_keys(store) and len(store.vectors) == 10
        old = vector_of(store, passage_id("a.txt", 2))
        store.write_documents([make_document("a.txt", 3, seed=7)])  # rewritten: new vectors
        store.delete_document("b.txt")
        assert store.vectors.keys() == graph_keys(store) and len(store.vectors) == 3
        assert all(not hit.id.startswith("b.txt") for hit in store.vector_search(old, 10))
        new = vector_of(store, passage_id("a.txt", 1))
        assert first_hit(store, new) == passage_id("a.txt", 1)
        assert store.vector_search(new, 10)[0].score == pytest.approx(1.0, abs=1e-5)


def test_an_index_file_behind_ahead_of_or_missing_from_the_graph_is_made_equal_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = tmp_path / "kb"
    with open_store(kb) as store:
        store.write_documents([make_document("a.txt", 5), make_document("b.txt", 5, seed=1)])
        saved = store.vectors.path
    assert saved is not None and saved.exists()
    older = tmp_path / "older.usearch"
    shutil.copy(saved, older)
    with open_store(kb) as store, monkeypatch.context() as kill:
        kill.setattr(store.vectors, "save", lambda: None)  # as if killed before its save
        store.write_documents([make_document("c.txt", 4, seed=2)])
        store.delete_document("a.txt")
        c0 = vector_of(store, passage_id("c.txt", 0))
        a0 = vector_of(store, passage_id("b.txt", 0))
    for state in ("behind", "restored older", "deleted", "unreadable"):
        if state == "restored older":
            shutil.copy(older, saved)
        elif state == "deleted":
            saved.unlink()
        elif state == "unreadable":
            saved.write_bytes(b"not an index")
        with open_store(kb) as store:
            assert store.vectors.keys() == graph_keys(store), state
            assert len(store.vectors) == 9, state
            assert first_hit(store, c0) == passage_id("c.txt", 0), state
            assert first_hit(store, a0) == passage_id("b.txt", 0), state
            hits = store.vector_search(a0, 20)
            assert not any(hit.id.startswith("a.txt") for hit in hits), state


def test_a_process_sees_what_another_wrote_and_removed(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    with open_store(kb) as writer, FalkorStore(data_dir=kb).open() as reader:
        writer.write_documents([make_document("a.txt", 4)])
        vector = vector_of(writer, passage_id("a.txt", 3))
        assert first_hit(reader, vector) == passage_id("a.txt", 3)
        writer.write_documents([make_document("b.txt", 4, seed=3)])
        writer.delete_document("a.txt")
        assert all(hit.id.startswith("b.txt") for hit in reader.vector_search(vector, 10))
        # (keys another process removed stay in this one's index, never returned, until it opens)
        assert reader.vectors.keys() >= graph_keys(reader)
    with FalkorStore(data_dir=kb).open() as reader:
        assert reader.vectors.keys() == graph_keys(reader)


def test_passage_vectors_are_the_graphs_read_from_the_index_or_the_graph(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    with open_store(kb) as writer, FalkorStore(data_dir=kb).open() as reader:
        writer.write_documents([make_document("a.txt", 4)])
        ids = [passage_id("a.txt", j) for j in range(4)]
        names: list[str] = []
        reader.tracer = lambda event: names.append(event.name)
        # not in the reader's index yet (it catches up at its next search): read from the graph
        unseen = reader.passage_vectors(ids)
        assert "passage_vectors" in names
        reader.vector_search(vector_of(writer, ids[0]), 1)
        names.clear()
        held = reader.passage_vectors([*ids, "a.txt#passage=99"])
        assert names == ["passage_texts"]  # the vectors came from the index
        for found in (unseen, held):
            assert sorted(found) == ids
            for pid in ids:
                assert np.asarray(found[pid].embedding, dtype=np.float32).tolist() == vector_of(
                    writer, pid
                )
                assert found[pid].text == writer.passage_texts([pid])[pid].text
        assert held[ids[0]].doc_title == "Title of a.txt" and held[ids[0]].doc_path == "a.txt"


def as_stored(document: DocumentGraph) -> DocumentGraph:
    """``document`` with its vectors as a sync stores them (float16 values)."""
    vectors = np.asarray([p.embedding for p in document.passages])
    return with_embeddings(document, stored_vectors(vectors))


def test_stored_vectors_are_held_at_half_precision_and_others_widen_the_index(
    tmp_path: Path,
) -> None:
    """Vectors as a sync stores them make a half-precision index that holds each exactly; a
    vector float16 cannot hold (from a graph written before, or an import of its export) widens
    the index to single precision with what it held, in memory and in its file."""
    kb = tmp_path / "kb"
    a = [passage_id("a.txt", j) for j in range(6)]
    b = [passage_id("b.txt", j) for j in range(4)]
    with open_store(kb) as store:
        store.write_documents([as_stored(make_document("a.txt", 6))])
        assert store.vectors.half
        held = store.passage_vectors(a)
        assert [list(held[p].embedding) for p in a] == [vector_of(store, p) for p in a]
        store.write_documents([make_document("b.txt", 4, seed=1)])  # not float16 values
        assert not store.vectors.half and len(store.vectors) == 10
        assert store.vectors.keys() == graph_keys(store)
    with open_store(kb) as store:  # (the file was written again, wide)
        assert not store.vectors.half and store.vectors.keys() == graph_keys(store)
        held = store.passage_vectors(a + b)
        for pid in a + b:
            assert list(held[pid].embedding) == vector_of(store, pid)
            assert first_hit(store, vector_of(store, pid)) == pid


def test_onnxruntime_imported_after_the_index_library_does_not_crash() -> None:
    """PyMuPDF's layout reader imports onnxruntime when it first reads a PDF, after the store
    loaded usearch (2.26 crashed there)."""
    code = "import kgp.stores.falkordb.vectors, onnxruntime; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]


def test_an_index_loaded_from_its_file_searches_and_adds_as_one_built_here(tmp_path: Path) -> None:
    """The file keeps the graph of the index, not its candidates: one loaded searched and linked
    new entries with usearch's defaults (64 and 128)."""
    store = open_store(tmp_path / "kb")
    store.write_documents([make_document("a.txt", 30, seed=1, tables=0)])
    assert store.vectors._index is not None
    built = store.vectors._index.expansion_search, store.vectors._index.expansion_add
    store.close()
    again = FalkorStore(data_dir=tmp_path / "kb").open()
    try:
        assert again.vectors._index is not None
        loaded = again.vectors._index.expansion_search, again.vectors._index.expansion_add
        assert loaded == built == (vectors.EXPANSION_SEARCH, vectors.EXPANSION_ADD)
    finally:
        again.close()


def test_a_questions_search_of_a_larger_index_keeps_more_candidates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past SEARCH_GROWS_PAST entries a search of a few vectors (a question's) asks usearch for
    search_expansion(entries) results, which it keeps as candidates, and returns the depth asked;
    a sync's search of many vectors asks for its depth (the index keeps EXPANSION_SEARCH)."""
    monkeypatch.setattr(vectors, "SEARCH_GROWS_PAST", 100)
    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)
    monkeypatch.setattr(vectors, "EXACT_BELOW_SINGLE", 0)
    kept = PassageVectors(lambda *_: [], None)
    rng = np.random.default_rng(3)
    kept.added({k: rng.standard_normal(8) for k in range(1, 2001)}, 1, 2001)
    assert kept._index is not None
    asked: list[int] = []
    search = kept._index.search

    def counted(queries: np.ndarray, count: int, **options: object) -> object:
        asked.append(count)
        return search(queries, count, **options)

    monkeypatch.setattr(kept._index, "search", counted)
    one = kept.search([rng.standard_normal(8)], 10)
    many = kept.search(list(rng.standard_normal((vectors.MANY, 8))), 10)
    grown = vectors.search_expansion(2000)
    assert asked == [grown, 10] and grown > vectors.EXPANSION_SEARCH
    assert [len(hits) for hits in one + many] == [10] * (1 + vectors.MANY)
    assert vectors.search_expansion(10**6) > vectors.search_expansion(10**5)


def test_the_file_is_written_once_enough_changed_and_what_it_lacks_is_read_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint or a close writes the file once the changes since it was written reach
    1/SAVE_SHARE of the index, a forced checkpoint whatever changed; what a file lacks (a small
    write left unsaved, or a kill) the next open reads from the graph."""
    monkeypatch.setattr(vectors, "SAVE_SHARE", 4)  # (of 40 entries: 10 changed)
    kb = tmp_path / "kb"
    with open_store(kb) as store:
        store.write_documents([make_document(f"d{i}.txt", 10, seed=i) for i in range(4)])
        store.upkeep.checkpoint()
        path = store.vectors.path
        assert path is not None and path.exists()
        saved = path.read_bytes()
        store.write_documents([make_document("e.txt", 4, seed=9)])  # 4 of 44: not yet
        assert store.vectors.due() is False
        store.upkeep.checkpoint()
        assert path.read_bytes() == saved
        store.delete_document("d0.txt")  # 14 of 34
        assert store.vectors.due() is True
        store.upkeep.checkpoint()
        assert path.read_bytes() != saved
        saved = path.read_bytes()
        store.write_documents([make_document("f.txt", 2, seed=8)])
        store.upkeep.checkpoint(force=True)
        assert path.read_bytes() != saved
        saved = path.read_bytes()
        store.write_documents([make_document("g.txt", 2, seed=7)])  # 2 of 38: left to the open
        g0 = vector_of(store, passage_id("g.txt", 0))
    assert path.read_bytes() == saved
    with open_store(kb) as store:
        assert store.vectors.keys() == graph_keys(store) and len(store.vectors) == 38
        assert first_hit(store, g0) == passage_id("g.txt", 0)
        for i in range(1, 4):
            store.delete_document(f"d{i}.txt")  # 30 of 8
    assert path.read_bytes() != saved  # written by the close
    with open_store(kb) as store:
        assert store.vectors.keys() == graph_keys(store) and len(store.vectors) == 8


def test_a_save_its_process_did_not_finish_is_deleted_at_the_next_open(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    with open_store(kb) as store:
        store.write_documents([make_document("a.txt", 3)])
        path = store.vectors.path
    assert path is not None
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    left = path.with_name(f"{path.name}.{dead}-0123abcd.tmp")
    mine = path.with_name(f"{path.name}.{os.getpid()}-4567ef01.tmp")  # (a save in progress)
    for file in (left, mine):
        file.write_bytes(b"part of an index")
    with open_store(kb) as store:
        assert store.vectors.keys() == graph_keys(store)
    assert not left.exists() and mine.exists()


def test_searches_while_another_thread_adds_and_removes_see_no_error_and_lose_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many threads search the index while one adds and removes: no search fails, and the index
    ends holding exactly what was added and not removed."""
    monkeypatch.setattr(vectors, "EXACT_BELOW", 0)  # (the graph search, not the exact one)
    monkeypatch.setattr(vectors, "EXACT_BELOW_SINGLE", 0)
    rng = np.random.default_rng(4)
    data = rng.normal(size=(6001, DIM)).astype(np.float32)
    index = vectors.PassageVectors(lambda *_: [], None)
    index.added({k: data[k] for k in range(1, 1001)}, 1, 1001)
    failures: list[BaseException] = []
    searched: list[int] = []  # searches made while the writes went on
    writing = threading.Event()

    def search() -> None:
        try:
            while writing.is_set():
                for hits in index.search(data[rng.integers(1, 1000, 8)].tolist(), 5):
                    assert len(hits) == 5
                searched.append(1)
        except BaseException as exc:  # (reported by the main thread)
            failures.append(exc)

    writing.set()
    readers = [threading.Thread(target=search) for _ in range(4)]
    for reader in readers:
        reader.start()
    for first in range(1001, 6000, 500):
        before = len(searched)
        index.added({k: data[k] for k in range(first, first + 500)}, first, first + 500)
        index.removed(range(first, first + 50))
        deadline = time.monotonic() + 30  # a search between this change and the next
        while len(searched) == before and time.monotonic() < deadline:
            time.sleep(0.001)
    writing.clear()
    for reader in readers:
        reader.join()
    assert not failures and len(searched) >= 10
    assert index.keys() == set(range(1, 1001)) | {
        k for first in range(1001, 6000, 500) for k in range(first + 50, first + 500)
    }
    assert [hits[0][0] for hits in index.search(data[[5, 2000, 5999]].tolist(), 1)] == [
        5,
        2000,
        5999,
    ]

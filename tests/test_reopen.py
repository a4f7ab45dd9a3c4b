"""The vector index off the open path: FalkorDB 4.16 rebuilds an HNSW index entry by entry while
it loads a snapshot holding one, before it answers anything (37 s at 50,000 passages). The last
user to stop the server drops the index and leaves a snapshot without it; a start loads the graph
without it and builds it in the background. Meanwhile searches are exact and writes wait."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp import cypher
from kgp.access import ADMIN_CALLER
from kgp.stores import FalkorStore
from kgp.stores.falkordb.indexes import WRITE_INDEXES
from kgp.stores.falkordb.processes import pid_alive
from kgp.stores.falkordb.server import EmbeddedServer

from tests.bench.scale_bench import StandInEncoder
from tests.graphs import DIM, make_document, random_documents


def written(data_dir: Path, documents: int = 6) -> list[list[float]]:
    """A graph of a few documents, closed; some of its vectors to search with."""
    with FalkorStore(data_dir=data_dir) as store:
        store.ensure_schema(DIM)
        for i in range(documents):
            store.write_documents([make_document(f"d{i}.txt", 12, seed=i, tables=0)])
        found = store.passage_vectors([f"d{i}.txt#passage=3" for i in range(3)])
        return [found[f"d{i}.txt#passage=3"].embedding for i in range(3)]


def snapshot_indexes(data_dir: Path, graph: str = "kgp") -> dict[str, list[str]]:
    """The indexes of ``graph`` a bare start of the server loads (no kgp store, which would
    build the vector index again): {label: index kinds}."""
    server = EmbeddedServer(data_dir=data_dir)
    server.start()
    try:
        with server.client() as conn:
            query = "CALL db.indexes() YIELD label, types RETURN label, types"
            rows = conn.execute_command("GRAPH.RO_QUERY", graph, query)
        found: dict[str, list[str]] = {}
        for label, types in rows[1]:
            kinds = str(types)
            found[label.decode() if isinstance(label, bytes) else str(label)] = [
                kind for kind in ("RANGE", "FULLTEXT", "VECTOR") if kind in kinds
            ]
        return found
    finally:
        server.stop()


def write_indexes_in(loaded: dict[str, list[str]]) -> list[str]:
    """The labels in ``snapshot_indexes`` whose index only writes use is there."""
    return [label for label, _, _, _ in WRITE_INDEXES if "RANGE" in loaded.get(label, [])]


def search(store: FalkorStore, vectors: list[list[float]], **options: Any) -> list[Any]:
    return store.nearest(vectors, want=5, **options)


def test_no_start_builds_a_vector_index_and_the_graph_holds_none(data_dir: Path) -> None:
    """The vectors are searched in the index beside the graph
    (kgp.stores.falkordb.vectors): FalkorDB
    holds no vector index, in the snapshot or after a start, and searches answer at once."""
    vectors = written(data_dir)
    indexes = snapshot_indexes(data_dir)
    assert "VECTOR" not in indexes["Passage"] and "RANGE" in indexes["Passage"]
    with FalkorStore(data_dir=data_dir) as store:
        assert store.vector_dimension() == DIM
        assert all(i != ("Passage", "embedding", "VECTOR") for i in store._indexes())
        assert [hits[0][1] for hits in search(store, vectors)] == pytest.approx([1.0] * 3)


def log_files(data_dir: Path) -> dict[str, bytes]:
    """The append-only file's parts (the manifest without the replication offsets redis 8
    counts in it at each stop)."""
    folder = data_dir / "falkordb" / "appendonlydir"
    files = {path.name: path.read_bytes() for path in sorted(folder.iterdir())}
    manifest = files["appendonly.aof.manifest"].decode()
    files["appendonly.aof.manifest"] = re.sub(r" (start|end)offset \d+", "", manifest).encode()
    return files


def test_a_session_that_only_reads_leaves_the_log_as_it_was(data_dir: Path) -> None:
    """A start writes nothing (no index is built again), so a session that only read leaves
    the log as it found it; a write is kept."""
    vectors = written(data_dir)
    before = log_files(data_dir)
    for _ in range(2):
        with FalkorStore(data_dir=data_dir) as store:
            assert search(store, vectors)
        assert log_files(data_dir) == before
    with FalkorStore(data_dir=data_dir) as store:  # a write: kept
        store.write_documents([make_document("new.txt", 4, seed=9, tables=0)])
    assert log_files(data_dir) != before
    with FalkorStore(data_dir=data_dir) as store:
        assert store.fetch_nodes(["new.txt"])


def test_the_indexes_only_writes_use_are_set_aside_and_built_again(data_dir: Path) -> None:
    """The last stop leaves them out of the snapshot (a start loads every index it holds
    before answering); a write's preparation builds them again, and queries use them."""
    written(data_dir)
    loaded = snapshot_indexes(data_dir)
    assert not write_indexes_in(loaded), loaded
    assert "RANGE" in loaded["Passage"] and "FULLTEXT" in loaded["Passage"]
    with FalkorStore(data_dir=data_dir) as store:
        store.upkeep.prepare_writes()
        indexed = store._indexes()
        assert all((label, prop, "RANGE") in indexed for label, prop, _, _ in WRITE_INDEXES)
        compacted(store)
        size = store.server.log.size()
        store.upkeep.prepare_writes()  # built once
        assert store.server.log.size() == size
        store.write_documents([make_document("again.txt", 4, seed=8, tables=0)])
    loaded = snapshot_indexes(data_dir)
    assert not write_indexes_in(loaded), loaded


def test_a_failure_while_setting_the_index_aside_still_stops_the_server(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The close holds the data directory's lock: a failed write there must not reload the
    server (which takes the lock: a deadlock), only be logged; the next start still works."""
    vectors = written(data_dir)
    store = FalkorStore(data_dir=data_dir).open()
    indexed = search(store, vectors)
    store.upkeep.prepare_writes()  # the write indexes built again: to set aside at close
    store.write_documents([make_document("late.txt", 4, seed=40, tables=0)])
    indexed = search(store, vectors)
    real = cypher.load
    monkeypatch.setattr(
        cypher,
        "load",
        lambda d, n: "DROP INDEX nonsense" if n == "drop_index_keyword" else real(d, n),
    )
    pid = int(store.server.pid_file.read_text())
    store.close()
    assert "cannot set an index aside" in caplog.text
    assert not pid_alive(pid)
    monkeypatch.undo()
    with FalkorStore(data_dir=data_dir) as again:
        assert search(again, vectors) == indexed


def compacted(store: FalkorStore) -> None:
    """Wait for a compaction the store began without waiting (a seal's)."""
    deadline = time.monotonic() + 60.0
    with store.server.log.client(timeout=30.0) as conn:
        while conn.info("persistence").get("aof_rewrite_in_progress"):
            assert time.monotonic() < deadline, "the compaction did not finish in 60 s"
            time.sleep(0.05)


def log_writes(data_dir: Path) -> bytes:
    """The writes in the log after its snapshot (what a start after a crash replays)."""
    parts = log_files(data_dir)
    return b"".join(body for name, body in parts.items() if name.endswith(".incr.aof"))


def test_indexes_are_made_in_the_snapshot_before_writes_use_them(data_dir: Path) -> None:
    """FalkorDB 4.16 replays an index created in the log without using it for the rest of the
    replay: every later write's lookup scans its label (a server killed 9,000 passages into a new
    graph's first sync took 257 s to start again, 3.5 s with the indexes in the snapshot). So
    each schema write is followed by a compaction: a new graph's, and a write session's rebuild
    of the indexes the last close set aside."""
    with FalkorStore(data_dir=data_dir) as store:
        store.ensure_schema(DIM)
        compacted(store)
        assert b"INDEX" not in log_writes(data_dir)
        store.write_documents([make_document("first.txt", 6, seed=1, tables=0)])
        assert b"first.txt" in log_writes(data_dir)
    with FalkorStore(data_dir=data_dir) as store:  # the close set indexes aside
        store.upkeep.prepare_writes()
        store.write_documents([make_document("second.txt", 6, seed=2, tables=0)])
        compacted(store)  # (the write went on while the indexes were compacted)
        assert b"INDEX" not in log_writes(data_dir)
        store.upkeep.prepare_writes()  # nothing to build: no compaction
        assert b"second.txt" in log_writes(data_dir)
    with FalkorStore(data_dir=data_dir) as store:
        assert store.fetch_nodes(["first.txt", "second.txt"])


def test_a_first_sync_leaves_a_snapshot_without_the_indexes_a_start_need_not_load(
    tmp_path: Path,
) -> None:
    """A first sync compacts its log (the snapshot then holds the indexes only writes use); its
    close sets them aside, and a session that only reads keeps the snapshot so."""
    folder = random_documents(tmp_path / "docs", seed=5, documents=6, sentences=5)
    data_dir = tmp_path / "kb"
    with kgp.open(data_dir=data_dir, loaded_encoder=StandInEncoder()) as kg:
        kg.sync(folder)
        passages = kg.stats().labels["Passage"]
    for _ in range(2):  # and a session that only read keeps it so
        loaded = snapshot_indexes(data_dir)
        assert "VECTOR" not in loaded["Passage"] and "FULLTEXT" in loaded["Passage"]
        assert not write_indexes_in(loaded), loaded
        with kgp.open(data_dir=data_dir, loaded_encoder=StandInEncoder()) as kg:
            assert kg.retrieve("w1 w2 item 3", 5).passages
            with kg.store.reading_as(ADMIN_CALLER):
                assert kg.store.upkeep.vector_index_entries() == passages

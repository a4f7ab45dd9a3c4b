"""The whole matrix saved beside the graph (:mod:`kgp.ingest.whole_file`): the process that holds
every vector when it stops the server saves it, the next one restores it and links its adds by
it, and a file the graph has moved on from, by any write, a crash, or a file that is not whole,
is never used: each graph ends with exactly its k nearest per passage, as linking by the index
gives."""

from __future__ import annotations

import json
import os
import signal
import stat
from pathlib import Path
from typing import Any

import kgp
import numpy as np
import pytest
from kgp.ingest import prepare, whole_file
from kgp.ingest.memory import Memory
from kgp.ingest.whole import Whole
from kgp.stores.falkor import FalkorStore
from kgp.stores.tracer import QueryEvent

from tests.bench.scale_bench import StandInEncoder
from tests.graphs import DIM, make_document
from tests.test_kept_linker import extra_documents
from tests.test_linker import lists_and_exact
from tests.test_whole import random_documents


def opened(data_dir: Path, **overrides: Any) -> Any:
    return kgp.open(data_dir=data_dir, loaded_encoder=StandInEncoder(), **overrides)


def saved_file(data_dir: Path) -> Path:
    (path,) = (data_dir / "falkordb").glob(f"{whole_file.NAME}-*")
    return path


def header(path: Path) -> dict[str, Any]:
    """A saved matrix's header."""
    with path.open("rb") as handle:
        found = whole_file.read_header(handle)
    assert found is not None, path
    return found


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each look for a saved matrix restored one, in order."""
    looks: list[bool] = []
    original = Memory.restore_saved

    def restore(self: Memory) -> bool:
        looks.append(original(self))
        return looks[-1]

    monkeypatch.setattr(Memory, "restore_saved", restore)
    return looks


@pytest.fixture
def awaited(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The graphs whose vector index a write waited for, in order."""
    waits: list[str] = []
    original = FalkorStore.await_vector_index

    def wait(self: FalkorStore) -> None:
        waits.append(self.graph_name)
        original(self)

    monkeypatch.setattr(FalkorStore, "await_vector_index", wait)
    return waits


def index_searches(kg: Any) -> list[str]:
    """The store's vector searches from now on (a list that grows)."""
    names: list[str] = []

    def record(event: QueryEvent) -> None:
        if event.name.startswith("knn_candidates") or event.name == "knn_exact":
            names.append(event.name)

    kg.store.tracer = record
    return names


def test_a_stores_stamp_is_the_logs_at_its_stop_while_the_graph_is_the_one_it_loaded(
    data_dir: Path,
) -> None:
    """The log's stamp, as the last user's stop leaves it, is the stamp a store that starts the
    server next reads; it holds over that store's start (its index builds), reads and
    compactions, and no longer once it or another store writes (an index rebuild counts); a
    store that joined a running server has none; the stop's save is made only by the last
    user, and only if no one else wrote."""
    saved: list[str] = []
    store = FalkorStore(data_dir=data_dir).open()
    store.ensure_schema(DIM)
    store.write_document(make_document("a.txt", 5, seed=1))
    assert store.log_stamp() is None  # (it wrote)
    store.on_last_stop(store.writes_era(), saved.append)
    store.close()
    assert saved == [store.server.log.stamp()]
    for _ in range(2):  # a read-only session's close cuts its start's writes back: the same
        store.open()
        assert store.log_stamp() == saved[0]
        store.list_documents()
        store.close()
    store.open()
    store.checkpoint(force=True)  # the same graph: the stamp it loaded holds
    assert store.log_stamp() == saved[0]
    store.close()
    store.open()  # (but a compacted log has another stamp: a file saved before is not used)
    assert store.log_stamp() not in (None, saved[0])
    store.rebuild_vector_index()  # (kgp maintain's: counted as a write, to be safe)
    assert store.log_stamp() is None
    store.close()
    store.open()
    other = FalkorStore(data_dir=data_dir).open()  # (it joins: no stamp of its own)
    assert other.log_stamp() is None
    store.on_last_stop(store.writes_era(), saved.append)
    store.close()  # not the last user: no save
    store.open()
    store.on_last_stop(store.writes_era(), saved.append)
    other.write_document(make_document("b.txt", 3, seed=2))
    assert store.log_stamp() is None
    other.close()
    store.close()  # the last user, but another wrote since the era it planned the save in
    assert len(saved) == 1


def test_the_next_process_links_its_adds_by_the_matrix_the_last_holder_saved(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    scanned: list[int],
    restored: list[bool],
    awaited: list[str],
) -> None:
    """A first sync holds every vector and saves them at its close (owner-only, beside the
    graph); a new process's add restores them and links by their product, asking the vector
    index nothing and not waiting for the build its start began (at a million passages 40
    minutes; tests/test_reopen.py: writes go in during it); its close saves them again with
    its add, for the process after it. Every passage ends with exactly its k nearest."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    data = tmp_path / "kb"
    folder = random_documents(tmp_path / "docs", seed=21, documents=8, sentences=6)
    extra = extra_documents(tmp_path / "extra", seed=22, documents=2)
    with opened(data) as writer:
        writer.sync(folder)
    path = saved_file(data)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.stat().st_mtime_ns
    scanned.clear()
    for name in ("e00.md", "e01.md"):
        with opened(data) as kg:
            searches = index_searches(kg)
            awaited.clear()
            kg.add(extra / name, root=extra)
            assert restored[-1] and scanned == [6] and searches == [] and awaited == []
            stored, expected = lists_and_exact(kg)
            assert stored == expected
        scanned.clear()
        assert path.stat().st_mtime_ns != first  # saved again, with the add
        first = path.stat().st_mtime_ns
    with opened(data) as kg:  # a removal, then an add: by the matrix still
        searches = index_searches(kg)
        kg.remove("e00.md")  # (its refill asks the index, which it waits for)
        assert awaited
        searches.clear()
        kg.add(extra / "e00.md", root=extra)
        assert scanned == [6] and searches == []
        stored, expected = lists_and_exact(kg)
        assert stored == expected


def test_a_saved_matrix_the_graph_moved_on_from_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int], restored: list[bool]
) -> None:
    """After a save: a process that saves nothing writes (KGP_SAVE_VECTORS=0); another
    process writes while one whose server loaded the saved graph is open; the server is killed
    after a write; another k is asked for. Each time the next add links by the index, not by the
    stale file, and every passage ends with exactly its k nearest."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    data = tmp_path / "kb"
    folder = random_documents(tmp_path / "docs", seed=23, documents=8, sentences=6)
    extra = extra_documents(tmp_path / "extra", seed=24, documents=8)

    def add_by_the_index(name: str) -> None:
        restored.clear()
        scanned.clear()
        with opened(data) as kg:
            searches = index_searches(kg)
            kg.add(extra / name, root=extra)
            assert not any(restored) and searches and scanned == []
            stored, expected = lists_and_exact(kg)
            assert stored == expected

    with opened(data) as writer:
        writer.sync(folder)
    with opened(data, save_vectors=False) as kg:  # a write the saved matrix does not hold
        kg.add(extra / "e00.md", root=extra)
    add_by_the_index("e01.md")  # (and holding nothing whole, it saved nothing)

    with opened(data) as kg:  # saved again (by a holder), then another process writes
        assert kg.hold_vectors()
    restored.clear()
    scanned.clear()
    with opened(data) as kg:
        searches = index_searches(kg)
        with opened(data) as other:  # (it joins the server: it restores nothing)
            other.add(extra / "e03.md", root=extra)
        kg.add(extra / "e04.md", root=extra)
        assert not any(restored) and searches and scanned == []
        stored, expected = lists_and_exact(kg)
        assert stored == expected

    with opened(data) as kg:  # saved again, then a write and a killed server
        assert kg.hold_vectors()
    restored.clear()
    scanned.clear()
    with opened(data) as kg:
        kg.add(extra / "e05.md", root=extra)
        assert restored == [True] and scanned == [6]
        pid = kg.store.server.server_pid()
        os.kill(pid, signal.SIGKILL)
    restored.clear()
    add_by_the_index("e06.md")

    with opened(data) as kg:
        assert kg.hold_vectors()
    restored.clear()
    scanned.clear()
    with opened(data, knn_k=4) as kg:  # lists of another k: the saved summaries do not hold
        kg.add(extra / "e07.md", root=extra)
        assert not any(restored) and scanned == []


@pytest.mark.parametrize(
    "spoil",
    [
        lambda path: path.write_bytes(b"not a matrix"),
        lambda path: os.truncate(path, 100),
        lambda path: os.truncate(path, header(path)["matrix"] + 4 * 384),
    ],
    ids=["another file", "cut in the header", "cut in the vectors"],
)
def test_a_saved_matrix_that_is_not_whole_is_not_used(
    tmp_path: Path, spoil: Any, scanned: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    """A file that is not a saved matrix, or one cut short, is passed over with a warning that
    names it, and the add links by the index."""
    data = tmp_path / "kb"
    folder = random_documents(tmp_path / "docs", seed=25, documents=6, sentences=6)
    extra = extra_documents(tmp_path / "extra", seed=26, documents=1)
    with opened(data) as writer:
        writer.sync(folder)
    path = saved_file(data)
    spoil(path)
    scanned.clear()
    with opened(data) as kg:
        kg.add(extra / "e00.md", root=extra)
        assert scanned == []
        stored, expected = lists_and_exact(kg)
        assert stored == expected
    assert str(path) in caplog.text and "not used" in caplog.text


def test_a_whole_matrix_is_restored_as_it_was_saved(tmp_path: Path) -> None:
    """Ids, vectors, degrees and weakest scores (None kept as None, scores to the last bit)
    come back as saved, and the restored matrix scans as the saved one did; it takes new rows
    without touching the file."""
    rng = np.random.default_rng(5)
    whole = Whole(3)
    whole.start()
    ids = [f"d{n // 4}.md#passage={n % 4}" for n in range(40)]
    vectors = rng.normal(size=(40, 8)).astype(np.float32)
    many = [
        f"folder/a longer name of a document {n // 3:05d}.md#passage={n % 3}" for n in range(9000)
    ]
    whole.add(many, rng.normal(size=(9000, 8)).astype(np.float32))  # (3,000 documents)
    whole.add(ids, vectors)
    whole.drop("d2.md")  # (dead rows are not saved)
    for n, pid in enumerate(ids):
        if not pid.startswith(("d2.md", "d3.md")):
            whole.note(pid, 3, 0.1 + n / 97)
    whole.note("d3.md#passage=0", 1, None)
    path = tmp_path / "vectors-test"
    whole_file.save(path, whole, "stamp-1")
    assert whole_file.restore(path, "stamp-2", 3) is None  # another stamp
    assert whole_file.restore(path, "stamp-1", 4) is None  # another k
    back = whole_file.restore(path, "stamp-1", 3)
    assert back is not None and back.known and back.count == whole.count == 9036
    assert back.noted_lists() == whole.noted_lists()
    assert back.noted_lists()["d3.md#passage=0"] == (1, None)
    for pid in ids[:8] + ids[12:]:
        vector = back.vector(pid)
        assert vector is not None and np.array_equal(vector, whole.vector(pid))
    queries = rng.normal(size=(5, 8)).astype(np.float32)
    (found, gaining), (expected, weak) = back.scan(queries), whole.scan(queries)
    assert found == expected and sorted(gaining) == sorted(weak)  # (rows in another order)
    before = path.read_bytes()
    back.add(["new.md#passage=0"], queries[:1])
    back.drop("d1.md")
    assert back.count == 9033 and path.read_bytes() == before  # (copy-on-write)
    back.drop(many[0].split("#")[0])
    assert back.vector(many[0]) is None and back.vector(many[3]) is not None


def test_stats_say_whether_the_saved_matrix_is_the_graphs(tmp_path: Path) -> None:
    """``kgp stats`` (for those who see every document) names the saved matrix's passages and
    size and whether the next write restores it: current after the close that saved it,
    unknown to a process that joined the running server, stale once another process wrote
    without saving, unreadable when the file is not one."""
    from tests.test_cli import kgp as kgp_command

    folder = random_documents(tmp_path / "docs", seed=31, documents=4, sentences=5)
    extra = extra_documents(tmp_path / "extra", seed=32, documents=1)
    data = tmp_path / "kb"
    with opened(data) as writer:
        writer.sync(folder)
        passages = writer.stats().labels["Passage"]
    with opened(data) as kg:
        state = whole_file.saved_state(kg.store)
        assert state is not None and state["state"] == "current"
        assert state["passages"] == passages and float(str(state["disk_mb"])) > 0
        with opened(data) as joined:
            assert (whole_file.saved_state(joined.store) or {}).get("state") == "unknown"
    done = kgp_command("--data-dir", str(data), "stats")
    assert done.returncode == 0, done.stderr
    assert f"saved matrix: {passages:,} passages" in done.stdout
    assert "the next write restores it" in done.stdout
    with opened(data, save_vectors=False) as kg:  # a write that saves nothing
        kg.add(extra / "e00.md", root=extra)
    done = kgp_command("--data-dir", str(data), "stats", "--json")
    assert json.loads(done.stdout)["saved_matrix"]["state"] == "stale"
    saved_file(data).write_bytes(b"not a matrix")
    with opened(data) as kg:
        assert (whole_file.saved_state(kg.store) or {}).get("state") == "unreadable"


@pytest.mark.slow
def test_an_add_during_a_starts_index_build_reads_the_matrix_rather_than_wait(
    tmp_path: Path, awaited: list[str]
) -> None:
    """No saved matrix (a killed holder's, or none), and the start's HNSW build going on: the add
    reads every vector and links by them rather than wait for the build (at a million passages
    about 150 s against 40 minutes), its writes going in between the build's batches; where the
    build's rate says it ends sooner than the read, or the process may hold no matrix
    (``KGP_HOLD_VECTORS=0``), it waits. Either way each passage ends with exactly its k nearest,
    and the index built holds every passage."""
    folder = random_documents(tmp_path / "docs", seed=11, documents=160, sentences=25)
    options = {"save_vectors": False, "vector_m": 64}  # (a slower build: 4,000 passages)
    with opened(tmp_path / "kb", **options) as kg:
        kg.sync(folder)
    awaited.clear()  # (the first sync's, into an empty graph)
    extra = sorted(extra_documents(tmp_path / "more", seed=12, documents=3).glob("*.md"))
    with opened(tmp_path / "kb", **options) as kg:
        seen: list[tuple[int, float | None]] = []
        build = kg.store.vector_index_build

        def watched() -> tuple[int, float | None]:
            seen.append(build())
            return seen[-1]

        kg.store.vector_index_build = watched  # type: ignore[method-assign]
        searches = index_searches(kg)
        kg.add(extra[0])
        assert seen and seen[0][0] > 0  # the build had entries left when the add began
        assert awaited == [] and searches == []  # linked by the matrix it read, no search
        assert kg.held_vectors() == 4000 + 6
        kg.store.vector_index_build = lambda: (100, 0.001)  # type: ignore[method-assign]
        kg._kept.memory.release()  # (as a new process: it holds nothing)
        kg.add(extra[1])  # the build ends sooner than a read would: it waits
        assert awaited == [kg.store.graph_name]
    awaited.clear()
    with opened(tmp_path / "kb", hold_vectors=False, **options) as kg:
        kg.add(extra[2])  # told to hold no matrix: it waits
        assert awaited == [kg.store.graph_name] and kg.held_vectors() is None
        stored, expected = lists_and_exact(kg)
        with kg.store.reading_as(kgp.access.ADMIN_CALLER):
            assert kg.store.vector_index_entries()[0] == 4000 + 18
    assert stored == expected

"""What a client keeps of the graph between its syncs (the k-NN linker's whole matrix and
neighbour-list summaries), and the store's word that no one else wrote meanwhile
(``writes_era``): a long-lived process links added documents by the matrix, and drops it at the
first write of another, even one that no count shows."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp.errors import AccessDeniedError
from kgp.ingest import prepare
from kgp.ingest.whole import Whole
from kgp.stores.falkor import FalkorStore
from kgp.stores.own_writes import OwnWrites, _stepped

from tests.bench.scale_bench import StandInEncoder
from tests.graphs import DIM, make_document
from tests.test_falkor_server import crash
from tests.test_linker import lists_and_exact
from tests.test_whole import random_documents


def until(happened: Callable[[], object], timeout: float = 60.0) -> None:
    """Wait until ``happened()`` is true (a background thread's doing)."""
    deadline = time.monotonic() + timeout
    while not happened():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def extra_documents(into: Path, *, seed: int, documents: int) -> Path:
    """Documents e00.md, e01.md, ... written into ``into``, a folder of random_documents'
    (whose are d00.md, ...), to be added one by one."""
    into.mkdir(exist_ok=True)
    made = random_documents(
        into.parent / f"extra-{seed}", seed=seed, documents=documents, sentences=6
    )
    for path in sorted(made.glob("d*.md")):
        path.rename(into / f"e{path.name[1:]}")
    return into


def test_a_step_is_the_changes_a_write_made_on_the_same_server_since_the_same_snapshot() -> None:
    assert _stepped(("r", 5, 100), ("r", 5, 100), 0)  # a write that changed nothing
    assert _stepped(("r", 5, 100), ("r", 6, 100), 1)
    assert not _stepped(("r", 5, 100), ("r", 6, 100), 0)  # another's, beside one of nothing
    assert not _stepped(("r", 5, 100), ("r", 7, 100), 1)  # another write meanwhile
    assert not _stepped(("r", 5, 100), ("s", 6, 100), 1)  # another server (a restart)
    assert not _stepped(("r", 5, 100), ("r", 0, 200), 1)  # a snapshot since
    assert not _stepped(("r", 5, 100), None, 1)  # the server did not answer
    assert not _stepped(("r", 5, 100), ("r", 6, 100), None)  # a write that failed


class Result:
    """A write's statistics, as FalkorDB's result gives them."""

    def __init__(self, changed: int) -> None:
        self.nodes_created = changed


def test_an_era_lasts_while_every_change_is_the_stores_own() -> None:
    """A counter stands in for the server's: the era holds across the store's own writes, as
    many changes as each says it made, and moves at a change between them, one beside a write
    (a write that changed nothing included), a failed write, or a count that cannot be read."""
    count: list[Any] = [("r", 0, 1)]
    own = OwnWrites(lambda: count[0])

    def write(changes: int = 1, says: int | None = None) -> None:
        with own.around() as made:
            run, seen, saved = count[0]
            count[0] = (run, seen + changes, saved)
            made(Result(changes if says is None else says))

    era = own.now()
    write()
    write(0)
    assert own.now() == era
    count[0] = ("r", 3, 1)  # another's write while none of the store's ran
    assert own.now() != era
    for changes, says in ((2, 1), (1, 0)):  # another's write before or beside the store's own
        era = own.now()
        write(changes, says)
        assert own.now() != era
    era = own.now()
    with pytest.raises(RuntimeError), own.around():
        raise RuntimeError("rejected")
    assert own.now() != era
    era = own.now()
    count[0] = None
    assert own.now() != era


def test_a_stores_era_moves_when_another_store_writes_and_only_then(data_dir: Path) -> None:
    """On the embedded server: a store's own writes, reads and compactions keep its era;
    another store's write (as another process's would) moves it, a write that replaces a
    document by one of as many passages too, and so does a restart after a crash."""
    mine = FalkorStore(data_dir=data_dir).open()
    other = FalkorStore(data_dir=data_dir).open()
    try:
        mine.ensure_schema(DIM)
        era = mine.writes_era()
        mine.write_document(make_document("a.txt", 5, seed=1))
        mine.write_documents([make_document("b.txt", 5, seed=2), make_document("c.txt", 3)])
        mine.delete_document("c.txt")
        mine.delete_document("never.txt")  # a write that changes nothing
        mine.set_document_groups({"a.txt": ["hr"]})
        mine.list_documents()
        mine.checkpoint(force=True)
        assert mine.writes_era() == era
        other.write_document(make_document("a.txt", 5, seed=9))  # as many passages as before
        assert mine.writes_era() != era
        era = mine.writes_era()
        mine.write_document(make_document("d.txt", 2))
        assert mine.writes_era() == era
        crash(mine)
        mine.list_documents()  # started again from its log
        assert mine.writes_era() != era
    finally:
        other.close()
        mine.close()


def test_a_client_links_what_it_adds_after_its_sync_by_the_matrix_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """A client that synced a folder into an empty graph keeps every vector: each document
    added or changed later (``kg.add``, ``kg.sync``) is linked by the matrix, also after a
    removal's refill, and every passage ends with exactly its k nearest."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=3, documents=9, sentences=6)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        kg.sync(folder)
        assert len(scanned) == 3
        extra = extra_documents(folder, seed=4, documents=3)
        kg.add(extra / "e00.md", root=extra)
        assert len(scanned) == 4
        (folder / "d03.md").unlink()
        report = kg.sync(folder)
        assert report.added == ["e01.md", "e02.md"] and report.removed == ["d03.md"]
        assert len(scanned) == 5 and report.refilled
        (folder / "d05.md").write_text("Another text of w1 w2 w3 item 5. And w7 w8 item 5.")
        assert kg.sync(folder).changed == ["d05.md"]  # after the refill
        assert len(scanned) == 6
        stored, expected = lists_and_exact(kg)
        assert len(stored) == kg.stats().labels["Passage"]
    assert stored == expected


def test_another_writers_rewrite_of_as_many_passages_ends_what_a_client_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """Another client of the same data directory (as another process would) writes a document
    again with as many passages but other vectors, which leaves every count as it was: the
    first client's next add goes by the index, not by its matrix, whose vectors of that
    document are stale, and every passage ends with exactly its k nearest."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=5, documents=9, sentences=6)
    rewritten = random_documents(tmp_path / "rewritten", seed=7, documents=4, sentences=6)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        kg.sync(folder)
        assert len(scanned) == 3
        extra = extra_documents(folder, seed=6, documents=2)
        with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as other:
            (folder / "d03.md").write_text((rewritten / "d03.md").read_text())
            passages = kg.stats().labels["Passage"]
            assert other.add(folder / "d03.md", root=folder).changed == ["d03.md"]
            assert kg.stats().labels["Passage"] == passages  # which the matrix checks
        kg.add(extra / "e00.md", root=extra)
        assert len(scanned) == 3  # by the index
        stored, expected = lists_and_exact(kg)
    assert stored == expected


def test_a_syncer_of_its_own_ends_what_the_client_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """A syncer asked of the client writes through the client's own store, which cannot tell
    its writes from the kept linker's: the client's next add goes by the index."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=8, documents=9, sentences=6)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        kg.sync(folder)
        extra = extra_documents(tmp_path / "extra", seed=9, documents=2)
        (folder / "d04.md").write_text((extra / "e01.md").read_text())  # as many passages
        passages = kg.stats().labels["Passage"]
        assert kg.syncer().sync_folder(folder).changed == ["d04.md"]  # by the index
        assert len(scanned) == 3 and kg.stats().labels["Passage"] == passages
        kg.add(extra / "e00.md", root=extra)
        assert len(scanned) == 3
        stored, expected = lists_and_exact(kg)
    assert stored == expected


def test_the_kept_linker_goes_to_one_sync_at_a_time_and_is_kept_after_one_that_ended_well(
    tmp_path: Path,
) -> None:
    """The client's syncs take the kept linker one at a time (another thread's waits); a sync
    within one (a callback's) gets one of its own, whose writes end what the kept one holds, as
    a syncer() of its own does; a failed sync ends it; a caller who may not write gets none,
    and nothing stays lent."""
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        with kg._lent_syncer() as first:
            pass
        order: list[str] = []
        with kg._lent_syncer() as again:
            assert again.linker is first.linker
            waiting = threading.Thread(target=lambda: lend_and_say(kg, order))
            waiting.start()
            waiting.join(timeout=0.5)
            order.append("first done")
            with kg._lent_syncer() as within:
                assert within.linker is not first.linker
                era = kg._kept_era()
                with within.guard():
                    pass
                assert kg._kept_era() != era  # a write of its own
        waiting.join(timeout=30)
        assert order == ["first done", "lent"]
        era = kg._kept_era()
        with kg.syncer().guard():
            pass
        assert kg._kept_era() != era
        with pytest.raises(RuntimeError), kg._lent_syncer():
            raise RuntimeError("stopped")
        with kg._lent_syncer() as fresh:
            assert fresh.linker is not first.linker
    with kgp.open(data_dir=tmp_path / "kb", groups="hr", loaded_encoder=StandInEncoder()) as kg:
        with pytest.raises(AccessDeniedError), kg._lent_syncer():
            pass
        assert not kg._lent


def lend_and_say(kg: Any, order: list[str]) -> None:
    with kg._lent_syncer():
        order.append("lent")


def test_a_client_on_a_graph_it_did_not_write_holds_every_vector_and_links_by_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """A long-lived process started on a graph another process wrote (``kgp serve``, ``kgp
    sync --watch``) reads every vector (``hold_vectors``): its adds, removals and changes then
    link by the whole matrix, and every passage ends with exactly its k nearest."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=12, documents=9, sentences=6)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as writer:
        writer.sync(folder)
    scanned.clear()
    extra = extra_documents(folder, seed=13, documents=3)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        passages = kg.stats().labels["Passage"]
        assert kg.hold_vectors()
        assert kg._kept is not None and kg._kept.memory.whole.count == passages
        assert kg.hold_vectors()  # (held already: nothing read again)
        kg.add(extra / "e00.md", root=extra)
        assert scanned == [6]
        (folder / "d02.md").unlink()
        (folder / "d06.md").write_text("Another text of w1 w2 w3 item 6. And w7 w8 item 6.")
        report = kg.sync(folder)
        assert report.removed == ["d02.md"] and report.refilled
        assert len(scanned) == 2  # the added, then the changed after the refill
        stored, expected = lists_and_exact(kg)
        assert len(stored) == kg.stats().labels["Passage"]
    assert stored == expected


def test_what_was_read_while_the_graph_took_a_write_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """Another process's write (or this client's own sync) while the vectors are read: that
    read is not kept; the next try is, and what it holds is exact; with one try, none is held
    and adds go by the index. A sync that writes nothing meanwhile (a watch's) does not count.
    A store that cannot tell other writers, a refill that waits, or a graph past the matrix's
    limit holds none."""
    from kgp.ingest import memory

    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=14, documents=6, sentences=6)
    extra = extra_documents(tmp_path / "extra", seed=15, documents=3)
    read = memory.read_whole
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as writer:
        writer.sync(folder)
        with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
            written = iter(["e00.md", "e01.md"])

            def read_then_another_writes(*args: Any, **kwargs: Any) -> Any:
                found = read(*args, **kwargs)
                name = next(written, None)
                if name is not None:
                    writer.add(extra / name, root=extra)
                return found

            def read_as_a_sync_writes_nothing(*args: Any, **kwargs: Any) -> Any:
                assert not kg.sync(folder).wrote  # (a watch's every few seconds)
                return read(*args, **kwargs)

            kg.sync(folder)  # (a watch's first: its schema checked once, a write)
            monkeypatch.setattr(memory, "read_whole", read_as_a_sync_writes_nothing)
            assert kg.hold_vectors(tries=1)
            kg._kept = None  # (start again: nothing held)
            monkeypatch.setattr(memory, "read_whole", read_then_another_writes)
            assert not kg.hold_vectors(tries=1)
            assert kg._kept is not None and not kg._kept.memory.whole.known
            assert kg.hold_vectors(tries=2)  # (the second try read after e01.md)
            assert kg._kept.memory.whole.count == kg.stats().labels["Passage"]
            scanned.clear()
            kg.add(extra / "e02.md", root=extra)
            assert scanned == [6]
            stored, expected = lists_and_exact(kg)
            assert stored == expected
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        monkeypatch.setattr(kg.store, "knn_flags", lambda: 1)
        assert not kg.hold_vectors()
        monkeypatch.setattr(kg.store, "knn_flags", lambda: 0)
        monkeypatch.setattr(kg.store, "writes_era", lambda: None)  # as Neo4j's
        assert not kg.hold_vectors()
        monkeypatch.undo()
    monkeypatch.setattr(memory, "Whole", lambda k: Whole(k, limit=10))  # past its limit
    monkeypatch.setattr(memory, "read_whole", lambda *a, **k: pytest.fail("read"))
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        assert not kg.hold_vectors()  # (told by the count: nothing read)


def test_a_long_lived_process_says_whether_it_holds_the_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``holding_vectors`` (what kgp serve and kgp sync --watch start) reads in the background
    and says so in one line; the setting turns it off; a close during the read ends it
    quietly."""
    folder = random_documents(tmp_path / "docs", seed=16, documents=4, sentences=6)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as writer:
        writer.sync(folder)
    said: list[str] = []
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        thread = kg.holding_vectors(said.append)
        assert thread is not None
        until(lambda: said)
        passages = kg.stats().labels["Passage"]
    thread.join(timeout=60)  # (it keeps the matrix until the close)
    assert not thread.is_alive()
    assert len(said) == 1 and said[0].startswith(f"holding every passage's vector ({passages:,}")
    with kgp.open(
        data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder(), hold_vectors=False
    ) as kg:
        assert kg.holding_vectors(said.append) is None
    with kgp.open(data_dir=tmp_path / "new", loaded_encoder=StandInEncoder()) as kg:
        assert kg.hold_vectors()  # no graph yet (kgp serve on a new data directory)
        assert kg._kept is not None and kg._kept.memory.whole.count == 0
    from kgp.ingest import memory  # a close during the read: it ends, and says nothing

    read, closed = memory.read_whole, threading.Event()
    monkeypatch.setattr(memory, "read_whole", lambda *a, **k: closed.wait(30) and read(*a, **k))
    with kgp.open(  # (not the matrix the last holder saved: that one would be read at once)
        data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder(), save_vectors=False
    ) as kg:
        thread = kg.holding_vectors(said.append)
    closed.set()
    assert thread is not None
    thread.join(timeout=60)
    assert not thread.is_alive() and len(said) == 1


def test_a_long_lived_process_reads_the_vectors_once_the_index_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background read waits while FalkorDB builds the vector index after a start (writes
    wait for the build anyway, and a read beside it slowed both: unfinished in 14 minutes at
    1M passages); a close during that wait ends it quietly, reading nothing."""
    from kgp import holding
    from kgp.ingest import memory
    from kgp.stores.health import IndexHealth

    folder = random_documents(tmp_path / "docs", seed=17, documents=3, sentences=5)
    with kgp.open(  # (no matrix saved: it would be restored, not read)
        data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder(), save_vectors=False
    ) as writer:
        writer.sync(folder)
    monkeypatch.setattr(holding, "HOLD_POLL_SECONDS", 0.01)
    events: list[str] = []
    read = memory.read_whole
    monkeypatch.setattr(
        memory, "read_whole", lambda *a, **k: events.append("read") or read(*a, **k)
    )
    said: list[str] = []
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        kg.store.await_vector_index()
        health = kg.store.index_health

        def building_twice(sample: int = 10) -> IndexHealth:
            found = (
                health(sample) if events.count("building") >= 2 else IndexHealth("building", 0, 0)
            )
            events.append(found.state)
            return found

        monkeypatch.setattr(kg.store, "index_health", building_twice)
        thread = kg.holding_vectors(said.append)
        assert thread is not None
        until(lambda: said)
        assert events == ["building", "building", "complete", "read"]
        assert len(said) == 1 and said[0].startswith("holding every passage's vector")
    events.clear()
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        monkeypatch.setattr(
            kg.store, "index_health", lambda sample=10: IndexHealth("building", 0, 0)
        )
        thread = kg.holding_vectors(said.append)
    assert thread is not None
    thread.join(timeout=60)
    assert not thread.is_alive() and events == [] and len(said) == 1


def test_a_long_lived_process_holds_the_vectors_again_after_another_writer_or_a_failed_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """Another process's write ends the matrix a long-lived process holds, and so does a sync
    of its own that failed: the keeper reads every vector again once a look sees no new write,
    says so, and the next add links by the matrix again, each passage ending with exactly its
    k nearest. After a read it could not keep (a refill waited), it reads only once a write
    came; where the store cannot tell other writers, it holds nothing and ends."""
    from kgp import holding

    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    monkeypatch.setattr(holding, "REHOLD_SECONDS", 0.05)
    folder = random_documents(tmp_path / "docs", seed=18, documents=6, sentences=6)
    extra = extra_documents(tmp_path / "extra", seed=19, documents=4)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as writer:
        writer.sync(folder)
    said: list[str] = []

    def held_again(times: int) -> bool:  # (a snapshot of the server's, as after another
        # process's write, may start a new era once more: then it reads once more)
        again = [line for line in said if line.startswith("holding every passage's vector again")]
        return len(again) >= times and kg.held_vectors() == kg.stats().labels["Passage"]

    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        tries: list[int] = []
        hold = kg.hold_vectors
        monkeypatch.setattr(kg, "hold_vectors", lambda: tries.append(1) or hold())
        thread = kg.holding_vectors(said.append)
        assert thread is not None
        until(lambda: said)
        assert said[0].startswith("holding every passage's vector (")
        assert kg.held_vectors() == kg.stats().labels["Passage"]
        with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as other:
            other.add(extra / "e00.md", root=extra)  # (another process's write)
        until(lambda: held_again(1))
        scanned.clear()
        kg.add(extra / "e01.md", root=extra)
        assert scanned == [6]  # by the matrix read again
        encode = kg.encoder.encode
        monkeypatch.setattr(kg.encoder, "encode", lambda texts: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            kg.add(extra / "e02.md", root=extra)  # a sync of its own that failed
        monkeypatch.setattr(kg.encoder, "encode", encode)
        until(lambda: held_again(2))
        scanned.clear()
        kg.add(extra / "e02.md", root=extra)
        assert scanned == [6]
        stored, expected = lists_and_exact(kg)
        assert stored == expected
        monkeypatch.setattr(kg.store, "knn_flags", lambda: 1)  # a refill waits: not held
        with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as other:
            other.add(extra / "e03.md", root=extra)
        until(lambda: said[-1].startswith("every passage's vector not held"))
        time.sleep(0.2)  # (a snapshot's new era, if any, tried again meanwhile)
        count = len(tries)
        time.sleep(0.5)  # (ten looks: no write came, so no new try)
        assert len(tries) == count and thread.is_alive()
        monkeypatch.setattr(kg.store, "knn_flags", lambda: 0)
        kg.remove("e03.md")  # a write: it reads again
        until(lambda: held_again(3))
        lines = len(said)
    thread.join(timeout=60)
    assert not thread.is_alive() and len(said) == lines
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        monkeypatch.setattr(kg.store, "writes_era", lambda: None)  # as Neo4j's
        thread = kg.holding_vectors(said.append)
        assert thread is not None
        thread.join(timeout=60)
        assert not thread.is_alive() and said[-1].startswith("every passage's vector not held")

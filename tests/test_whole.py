"""The whole matrix (kgp.ingest.whole): a scan finds every stored passage that can be among a new
passage's k nearest and every one a new passage can enter, whatever the scores' closeness, dead
rows and skipped documents; and the linker uses it only while it holds every passage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kgp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kgp.access import ADMIN_CALLER
from kgp.ingest import memory, prepare
from kgp.ingest import whole as whole_module
from kgp.ingest.edges import EPS
from kgp.ingest.report import SyncReport
from kgp.ingest.scores import best_of, exact_scores
from kgp.ingest.sync import Syncer
from kgp.ingest.whole import Whole
from kgp.stores.falkor import FalkorStore

from tests.bench.scale_bench import StandInEncoder
from tests.test_linker import lists_and_exact, unit_rows


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    documents=st.integers(1, 12),
    per_document=st.integers(1, 9),
    new=st.integers(1, 20),
    k=st.integers(1, 6),
    duplicates=st.booleans(),
    chunk=st.sampled_from([3, 7, 64, 8192]),
    first=st.sampled_from([1, 2, 5, 1024]),
)
def test_a_scan_finds_every_neighbour_and_every_gain(
    seed: int,
    documents: int,
    per_document: int,
    new: int,
    k: int,
    duplicates: bool,
    chunk: int,
    first: int,
) -> None:
    """Against exact scores of every pair: each new passage's k best among the live, unskipped
    passages are among its candidates within EPS of its k-th (what the linker keeps), and every
    passage with a new one scoring at least its bar is listed as gaining; dead and skipped
    passages never appear."""
    rng = np.random.default_rng(seed)
    queries = unit_rows(rng, new)
    stored = unit_rows(rng, documents * per_document, queries if duplicates else None, 1e-5)
    ids = [f"d{n // per_document}.md#passage={n % per_document}" for n in range(len(stored))]
    whole = Whole(k)
    whole.start()
    for d in range(documents):
        rows = slice(d * per_document, (d + 1) * per_document)
        whole.add(ids[rows], stored[rows])
    exact = exact_scores(queries, stored)  # stored x new
    weakest = {}
    for n, pid in enumerate(ids):
        if rng.random() < 0.8:  # a full list whose weakest is anywhere, or at a new score
            value = float(rng.choice(exact[n])) if rng.random() < 0.5 else rng.uniform(-0.2, 0.4)
            weakest[pid] = float(value)
            whole.note(pid, k, float(value))
        else:
            whole.note(pid, k - 1, 0.9)  # fewer than k: always gaining
    dropped = {f"d{d}.md" for d in range(documents) if rng.random() < 0.2}
    skipped = {f"d{d}.md" for d in range(documents) if rng.random() < 0.2}
    for doc_id in dropped:
        whole.drop(doc_id)
    taking = [n for n, pid in enumerate(ids) if pid.split("#")[0] not in dropped | skipped]
    blocks = whole_module.CHUNK, whole_module.FIRST
    whole_module.CHUNK, whole_module.FIRST = chunk, first  # blocks of every size, in one scan
    try:
        candidates, gaining = whole.scan(queries, skip_docs=skipped)
    finally:
        whole_module.CHUNK, whole_module.FIRST = blocks
    live = [ids[n] for n in taking]
    for j in range(new):
        expected = best_of(exact[taking, j], live, k) if taking else []
        row = candidates[j]
        assert set(row) <= set(live)
        if row:
            kth = sorted(row.values(), reverse=True)[min(k, len(row)) - 1]
            kept = [pid for pid, value in row.items() if value >= kth - EPS]
            values = exact_scores(queries[j], stored[[ids.index(pid) for pid in kept]])
            assert best_of(values, kept, k) == expected
        else:
            assert expected == []
    must = {
        ids[n] for n in taking if ids[n] not in weakest or (exact[n] >= weakest[ids[n]] - EPS).any()
    }
    assert must <= set(gaining) <= set(live)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    share=st.sampled_from([0.0, 0.01, 0.3, 1.0]),
)
def test_entries_at_or_above_their_bar_are_found_in_order(
    seed: int, height: int, width: int, share: float
) -> None:
    """The scan's word-at-a-time search finds what ``np.nonzero`` finds, in its order, whatever
    the block's shape (the word boundaries) and however many entries pass, dead rows (-inf)
    never."""
    rng = np.random.default_rng(seed)
    block = rng.random((height, width), dtype=np.float32)
    block[rng.random(height) < 0.2] = -np.inf
    bar = np.where(rng.random(width) < share, np.float32(-2.0), np.float32(0.9))
    rows, columns = whole_module._at_or_above(block, bar.astype(np.float32))
    expected = np.nonzero(block >= bar)
    assert rows.tolist() == expected[0].tolist() and columns.tolist() == expected[1].tolist()


def test_rows_are_reused_and_compacted() -> None:
    """A passage written again keeps its row; dropping most documents compacts the matrix and
    the scan still sees exactly the live passages; past the limit, the matrix is let go."""
    rng = np.random.default_rng(1)
    whole = Whole(2, limit=3000)
    whole.start()
    vectors = unit_rows(rng, 2400)
    for d in range(240):
        whole.add([f"d{d}#passage={i}" for i in range(10)], vectors[d * 10 : d * 10 + 10])
    whole.add(["d0#passage=0"], vectors[5:6])
    assert whole.count == 2400
    assert np.array_equal(whole.vector("d0#passage=0"), vectors[5])
    for d in range(1, 200):
        whole.drop(f"d{d}")
    assert whole.count == 410 and len(whole._ids) < 2400  # compacted
    candidates, _ = whole.scan(vectors[2000:2001])
    assert (
        next(iter(sorted(candidates[0].items(), key=lambda kv: -kv[1])))
        == (
            "d200#passage=0",
            1.0,
        )
        or max(candidates[0].values()) > 0.999
    )
    assert all(int(pid.split("#")[0][1:]) in {0} | set(range(200, 240)) for pid in candidates[0])
    whole.add([f"e#passage={i}" for i in range(3000)], unit_rows(rng, 3000))
    assert not whole.known and whole.count == 0


def test_the_linker_links_by_the_whole_matrix_only_while_it_holds_every_passage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """A sync into an empty graph links by the matrix, group after group, and a rewrite's
    removal hands a group to the index until the refill; another writer's documents (a second
    syncer, as another process would be) end the matrix for good, and a linker that starts on a
    non-empty graph uses the index. Every passage ends with exactly its k nearest."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = tmp_path / "docs"
    folder.mkdir()
    rng = np.random.default_rng(5)
    words = [f"w{n}" for n in range(300)]

    def write(d: int, extra: str = "") -> Path:
        text = " ".join(
            f"{' '.join(rng.choice(words, 8))} item {d} {i} {extra}.".capitalize()
            for i in range(10)
        )
        path = folder / f"d{d:02d}.md"
        path.write_text(text)
        return path

    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        first = kg.syncer()
        paths = [write(d) for d in range(9)]
        first.sync_folder(folder)
        assert first.linker.memory.whole.known and len(scanned) == 3
        paths[2] = write(2, "again")  # a rewrite, then new documents: one group by the index
        paths += [write(d) for d in range(9, 15)]
        report = first.sync_folder(folder)
        assert report.changed == ["d02.md"] and report.refilled > 0
        assert first.linker.memory.whole.known and len(scanned) == 4
        second = kg.syncer()  # another writer
        extra = [write(d) for d in range(15, 18)]
        done = SyncReport()
        second.sync_candidates(second.candidates(extra, folder, done), done)
        assert not second.linker.memory.whole.known and len(scanned) == 4
        more = [write(d) for d in range(18, 21)]
        done = SyncReport()
        first.sync_candidates(first.candidates(more, folder, done), done)
        assert not first.linker.memory.whole.known and len(scanned) == 4
        stored, expected = lists_and_exact(kg)
    assert len(stored) == 21 * 10
    assert stored == expected


def test_a_long_sync_on_a_graph_it_did_not_write_loads_the_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: list[int]
) -> None:
    """A sync resumed on a graph another process wrote links by the index until that has cost
    as much as loading every vector would (here at once), then loads them and links the rest by
    the matrix, exactly; an added document (one group) never loads."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=7, documents=15, sentences=8)
    first = [folder / f"d{d:02d}.md" for d in range(6)]
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        report = SyncReport()
        kg.syncer().sync_candidates(kg.syncer().candidates(first, folder, report), report)
        assert len(scanned) == 2
        kg.add(folder / "d14.md")  # one group, by the index: no load at the default cost
        monkeypatch.setattr(memory, "LOAD_SECONDS", 0.0)
        resumed = kg.syncer()
        resumed.sync_folder(folder)  # 8 new documents: 3 groups, the first by the index
        assert resumed.linker.memory.whole.known
        assert resumed.linker.memory.whole.count == 15 * 8
        assert len(scanned) == 2 + 2
        stored, expected = lists_and_exact(kg)
    assert stored == expected


def test_a_first_sync_builds_the_vector_index_once_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync into an empty graph writes its passages with the vector index set aside (linked by
    the matrix, it needs none) and builds it once at its end, for every passage and with the
    efRuntime of the graph's size; a later sync keeps it, and a sync stopped before its end
    leaves it to the next writer, which builds it before writing."""
    seen: list[int | None] = []
    original = FalkorStore.write_documents

    def write_documents(self: FalkorStore, graphs: Any) -> Any:
        seen.append(self.vector_dimension())
        return original(self, graphs)

    monkeypatch.setattr(FalkorStore, "write_documents", write_documents)
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 3)
    folder = random_documents(tmp_path / "docs", seed=11, documents=9, sentences=6)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        kg.sync(folder)
        assert seen and set(seen) == {None}  # three groups, none with the index
        kg.store.await_vector_index()
        with kg.store.reading_as(ADMIN_CALLER):
            assert kg.store.vector_dimension() == StandInEncoder().dimension
            assert kg.store.search_breadth() == kg.store.vector_ef()
            assert kg.store.vector_index_entries() == (kg.stats().labels["Passage"], 0)
        assert kg.retrieve("w1 w2 item 3", 5).passages
        seen.clear()
        (folder / "d09.md").write_text("A tenth document, item 9 of w1 w2 w3.")
        kg.sync(folder)
        assert seen == [StandInEncoder().dimension]
    failing = tmp_path / "failing"
    monkeypatch.setattr(Syncer, "_finish", boom)
    with kgp.open(data_dir=failing, loaded_encoder=StandInEncoder()) as kg:
        with pytest.raises(RuntimeError):
            kg.sync(folder)
        with kg.store.reading_as(ADMIN_CALLER):
            assert kg.store.vector_dimension() is None  # set aside, not built: the sync stopped
        monkeypatch.undo()
        seen.clear()
        (folder / "d10.md").write_text("An eleventh, item 10 of w1 w2 w3. And w4 w5 w6 item 10.")
        kg.syncer().sync_folder(folder)  # another syncer, by the index: it builds it first
        kg.store.await_vector_index()
        with kg.store.reading_as(ADMIN_CALLER):
            assert kg.store.vector_dimension() == StandInEncoder().dimension
            assert kg.store.vector_index_entries() == (kg.stats().labels["Passage"], 0)
        stored, expected = lists_and_exact(kg)
    assert stored == expected


def boom(*_: Any, **__: Any) -> None:
    raise RuntimeError("stopped")


def random_documents(folder: Path, *, seed: int, documents: int, sentences: int) -> Path:
    """``documents`` files d00.md, d01.md, ... of ``sentences`` sentences of 8 words drawn from
    300, numbered so no two are alike."""
    folder.mkdir()
    rng = np.random.default_rng(seed)
    words = [f"w{n}" for n in range(300)]
    for d in range(documents):
        text = " ".join(
            f"{' '.join(rng.choice(words, 8))} item {d} {i}.".capitalize() for i in range(sentences)
        )
        (folder / f"d{d:02d}.md").write_text(text)
    return folder

"""Sync invariants with the real encoder and the embedded store."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp.errors import ConfigurationError, DocumentError, RemovalRefusedError
from kgp.ingest import prepare
from kgp.ingest.embedding import Encoder
from kgp.ingest.report import SyncReport
from kgp.ingest.sync import Syncer
from kgp.settings import load_settings
from kgp.stores import FalkorStore
from kgp.stores.falkordb import log as falkor_log
from kgp.stores.tracer import TraceLog

from tests.corpus_files import TEXTS, make_image_pdf, make_pdf, write_copies, write_corpus

WRITES = {"write_documents", "delete_document", "replace_similar"}


class Graph:
    """A data directory with an open store and a syncer."""

    def __init__(self, data_dir: Path, encoder: Encoder, **settings: Any) -> None:
        self.settings = load_settings(data_dir=data_dir, knn_k=3, **settings)
        self.log = TraceLog()
        self.store = FalkorStore(data_dir=data_dir, tracer=self.log).open()
        self.syncer = Syncer(store=self.store, settings=self.settings, encoder=encoder)

    def sync(self, folder: Path) -> SyncReport:
        return self.syncer.sync_folder(folder)

    def dump(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return canonical(self.store.upkeep.dump())


def canonical(dump: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> Any:
    """The dump without ingest times, SIMILAR scores rounded (embeddings of the same text in
    different batches differ in the last bits)."""
    nodes, rels = dump
    for node in nodes:
        node["props"].pop("ingested_at", None)
    for rel in rels:
        if "score" in rel["props"]:
            rel["props"]["score"] = round(rel["props"]["score"], 3)
    return nodes, rels


@pytest.fixture
def graphs(tmp_path: Path, encoder: Encoder) -> Iterator[Any]:
    made: list[Graph] = []

    def make(name: str, **settings: Any) -> Graph:
        graph = Graph(tmp_path / name, encoder, **settings)
        made.append(graph)
        return graph

    yield make
    for graph in made:
        graph.store.close()


def test_sync_builds_the_graph_and_second_sync_writes_nothing(tmp_path: Path, graphs: Any) -> None:
    folder = write_corpus(tmp_path / "docs")
    graph = graphs("kb")
    report = graph.sync(folder)
    assert sorted(report.added) == sorted(TEXTS)
    assert not report.partial
    counts = graph.store.counts()
    assert counts.labels["Document"] == 4
    assert counts.relationships["SIMILAR"] == 3 * counts.labels["Passage"]
    assert counts.relationships["HAS_PASSAGE"] == counts.labels["Passage"] == report.passages
    nodes = graph.store.fetch_nodes(["cities/nepal.md"])
    assert nodes["cities/nepal.md"]["title"] == "Kathmandu"

    graph.log.events.clear()
    again = graph.sync(folder)
    assert (again.added, again.changed, again.removed, again.unchanged) == ([], [], [], 4)
    assert not WRITES & set(graph.log.names())


def test_a_plus_b_minus_b_equals_a(tmp_path: Path, graphs: Any) -> None:
    a_names = ["rivers.txt", "cities/egypt.txt"]
    only_a = graphs("a")
    only_a.sync(write_corpus(tmp_path / "a", a_names))
    expected = only_a.dump()

    for order in ("a-first", "b-first"):
        folder = tmp_path / order
        both = graphs(f"ab-{order}")
        if order == "a-first":
            both.sync(write_corpus(folder, a_names))
            write_corpus(folder)
            both.sync(folder)
        else:
            write_corpus(folder, [n for n in TEXTS if n not in a_names])
            both.sync(folder)
            write_corpus(folder)
            both.sync(folder)
        for name in TEXTS:
            if name not in a_names:
                (folder / name).unlink()
        report = both.sync(folder)
        assert sorted(report.removed) == ["cities/nepal.md", "mountains.md"]
        assert both.dump() == expected, order


def test_small_windows_and_link_groups_give_the_same_graph(
    tmp_path: Path, graphs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents read and embedded a few at a time, and linked and written in even smaller
    groups, make the graph one window does; progress is reported after each window, and an
    unchanged re-sync still reports it (windows also close after a number of documents)."""
    folder = write_corpus(tmp_path / "docs")
    (folder / "empty.txt").write_text("")
    whole = graphs("whole")
    whole.sync(folder)

    from kgp.ingest import prepare

    monkeypatch.setattr(prepare, "WINDOW_TEXTS", 4)
    monkeypatch.setattr(prepare, "WINDOW_DOCUMENTS", 3)
    monkeypatch.setattr(prepare, "LINK_PASSAGES", 3)
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 1)
    pieces = graphs("pieces")
    seen: list[tuple[int, int, int]] = []
    pieces.syncer.on_progress = lambda p: seen.append((p.done, p.total, p.passages))
    report = pieces.sync(folder)
    assert pieces.dump() == whole.dump()
    assert [s.path for s in report.skipped] == ["empty.txt"]
    # windows close at 4 texts (3 + 3, then 0 + 4) or at 3 documents read, whichever first
    assert [(done, total) for done, total, _ in seen] == [(2, 5), (4, 5), (5, 5)]
    seen.clear()
    again = pieces.sync(folder)  # nothing to embed: the document cap alone closes windows
    assert again.unchanged == 4 and again.passages == 0
    assert [(done, total) for done, total, _ in seen] == [(3, 5), (5, 5)]


def test_changing_one_file_touches_only_its_document(tmp_path: Path, graphs: Any) -> None:
    folder = write_corpus(tmp_path / "docs")
    graph = graphs("kb")
    graph.sync(folder)
    before_nodes, before_rels = graph.dump()
    (folder / "rivers.txt").write_text(
        TEXTS["rivers.txt"] + " The Danube flows into the Black Sea."
    )
    graph.log.events.clear()
    embedded: list[str] = []
    encode = graph.syncer.encoder.encode

    def counting(texts: list[str]) -> Any:
        embedded.extend(texts)
        return encode(texts)

    graph.syncer.encoder.encode = counting  # type: ignore[method-assign]
    report = graph.sync(folder)
    graph.syncer.encoder.encode = encode  # type: ignore[method-assign]
    assert report.changed == ["rivers.txt"] and report.added == report.removed == []
    writes = [e for e in graph.log.events if e.name == "write_documents"]
    assert len(writes) == 1 and writes[0].parameters["doc_ids"] == ["rivers.txt"]
    after_nodes, after_rels = graph.dump()

    def other_nodes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            n
            for n in nodes
            if n["label"] != "Keyword" and not str(n["key"]).startswith("rivers.txt")
        ]

    def other_rels(rels: list[dict[str, Any]], refilled: set[str]) -> list[dict[str, Any]]:
        return [
            r
            for r in rels
            if not str(r["source"]).startswith("rivers.txt")
            and not str(r["target"]).startswith("rivers.txt")
            and r["type"] != "HAS_KEYWORD"
            and not (r["type"] == "SIMILAR" and r["source"] in refilled)
        ]

    refilled = {
        r["source"]
        for r in before_rels
        if r["type"] == "SIMILAR"
        and str(r["target"]).startswith("rivers.txt")
        and not str(r["source"]).startswith("rivers.txt")
    }
    assert other_nodes(after_nodes) == other_nodes(before_nodes)
    assert other_rels(after_rels, refilled) == other_rels(before_rels, refilled)
    assert report.refilled == len(refilled)
    # only the changed sentence was embedded; the others reused their stored vectors
    assert embedded == ["The Danube flows into the Black Sea."]


def test_removed_neighbours_are_refilled(tmp_path: Path, graphs: Any) -> None:
    folder = write_corpus(tmp_path / "docs")
    graph = graphs("kb")
    graph.sync(folder)
    (folder / "rivers.txt").unlink()
    report = graph.sync(folder)
    assert report.removed == ["rivers.txt"]
    assert report.refilled > 0
    counts = graph.store.counts()
    assert counts.relationships["SIMILAR"] == 3 * counts.labels["Passage"]
    assert graph.store.links.passages_needing_knn() == []


def test_bad_files_are_reported_and_the_rest_is_synced(tmp_path: Path, graphs: Any) -> None:
    folder = write_corpus(tmp_path / "docs", ["rivers.txt"])
    good_pdf = make_pdf(
        folder / "report.pdf", ["Rainfall in Egypt is very low.", "Aswan is dry."], table=True
    )
    make_pdf(folder / "locked.pdf", ["secret"], password="pw")
    make_image_pdf(folder / "scan.pdf")
    (folder / "corrupt.pdf").write_bytes(good_pdf.read_bytes()[:300])
    (folder / "empty.txt").write_bytes(b"")
    (folder / "junk.txt").write_bytes(os.urandom(2000))
    (folder / "latin1.txt").write_bytes("Caf\u00e9 cr\u00e8me".encode("latin-1"))
    outside = tmp_path / "outside.txt"
    outside.write_text("outside the folder")
    (folder / "link.txt").symlink_to(outside)
    (folder / "big.txt").write_text("word " * (3 * 1024 * 1024 // 5 + 10))
    (folder / "notes.odt").write_bytes(b"PK")
    graph = graphs("kb", max_file_mb=2)
    report = graph.sync(folder)
    reasons = {s.path: s.reason for s in report.skipped}
    assert sorted(report.added) == ["report.pdf", "rivers.txt"]
    assert "encrypted PDF" in reasons["locked.pdf"]
    assert "no extractable text" in reasons["scan.pdf"]
    assert "not a readable PDF" in reasons["corrupt.pdf"]
    assert "empty document" in reasons["empty.txt"]
    assert "binary data" in reasons["junk.txt"] or "not UTF-8" in reasons["junk.txt"]
    assert "not UTF-8" in reasons["latin1.txt"]
    assert "symlink points outside" in reasons["link.txt"]
    assert "over the 2 MB limit" in reasons["big.txt"]
    assert report.ignored == ["notes.odt"]
    assert report.partial
    tables = graph.store.counts().labels["Table"]
    assert tables == 2  # one ruled table on each of the two pages
    table = graph.store.fetch_nodes(["report.pdf#page=1&table=0"])["report.pdf#page=1&table=0"]
    assert "| Aswan | 1 mm |" in table["markdown"]
    passages = [n["props"] for n in graph.dump()[0] if n["label"] == "Passage"]
    prose = [p["text"] for p in passages if "table_id" not in p]
    rows = [p["text"] for p in passages if "table_id" in p]
    assert not any("25 mm" in t for t in prose), "a table's cells are not in its page's prose"
    assert sum("| Cairo | 25 mm |" in t for t in rows) == 2, "each table's rows: one passage"

    before = graph.dump()
    (folder / "empty.txt").write_text("still bad\x00")
    graph.sync(folder)
    assert graph.dump() == before, "a bad file changes nothing else"


def test_many_files_with_bad_ones_among_them(tmp_path: Path, graphs: Any) -> None:
    """600 files, one in twenty bad (corrupt, binary, empty), spread through the write batches
    (several documents per query): every good one is synced, every bad one reported, none of
    the good ones kept out by a bad neighbour in its batch."""
    folder = tmp_path / "many"
    bad: dict[str, bytes] = {}
    for i in range(600):
        name = f"part{i // 100}/note{i:03d}.txt"
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if i % 20 == 7:
            bad[name] = [b"", os.urandom(300), b"\x00\x01 nul"][i % 3]
            path.write_bytes(bad[name])
        else:
            path.write_text(f"Note {i} says station {i % 13} logged {i * 7 % 101} mm of rain.")
    graph = graphs("kb")
    report = graph.sync(folder)
    assert sorted(s.path for s in report.skipped) == sorted(bad)
    assert len(report.added) == 600 - len(bad) == graph.store.counts().labels["Document"]
    assert report.partial and report.passages == 600 - len(bad)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
def test_unreadable_file(tmp_path: Path, graphs: Any) -> None:
    folder = write_corpus(tmp_path / "docs", ["rivers.txt"])
    secret = folder / "secret.txt"
    secret.write_text("hidden")
    secret.chmod(0)
    report = graphs("kb").sync(folder)
    assert "no read permission" in {s.path: s.reason for s in report.skipped}["secret.txt"]


@pytest.mark.slow
def test_sigkill_during_sync_then_sync_equals_clean_sync(tmp_path: Path, graphs: Any) -> None:
    """Kill the syncing process at random points; the next sync repairs the graph."""
    folder = write_copies(tmp_path / "docs", 24)
    clean = graphs("clean")
    clean.sync(folder)
    expected = clean.dump()
    clean.store.close()

    data_dir = tmp_path / "killed"
    # a sync writes several documents per query; smaller batches here (one document per query
    # first), so that the kills land between writes as well as inside one and between a write
    # and its linking, however fast the writes are
    code = (
        "import sys; from pathlib import Path; import kgp; import kgp.ingest.builder as b\n"
        "b.WRITE_BATCH_ROWS = int(sys.argv[3])\n"
        "with kgp.open(data_dir=Path(sys.argv[1]), knn_k=3, device='cpu',\n"
        "              encoder='all-MiniLM-L6-v2') as kg:\n"
        "    kg.sync(Path(sys.argv[2]))\n"
    )
    watcher = FalkorStore(data_dir=data_dir).open()  # shares the server with the syncers
    rng = random.Random(11)
    interrupted = []
    try:
        for rows in (1, 8, 2):
            before = len(watcher.list_documents())
            command = [sys.executable, "-c", code, str(data_dir), str(folder), str(rows)]
            proc = subprocess.Popen(command)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if len(watcher.list_documents()) > before:  # it is writing now
                    break
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 0.4))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                interrupted.append(len(watcher.list_documents()))
            proc.wait()
    finally:
        watcher.close()
    assert interrupted and min(interrupted) < 96, "the kills should land during the sync"
    repaired = graphs("killed")
    repaired.sync(folder)
    assert repaired.dump() == expected
    shutil.rmtree(tmp_path / "docs")


# A syncing process that SIGKILLs itself right after its n-th write of a document or of links
# (n from argv; 0: never), so that each kill lands where a test chose, however fast the machine.
KILL_AT_WRITE = (
    "import os, signal, sys; from pathlib import Path; import kgp\n"
    "import kgp.ingest.builder as builder, kgp.ingest.prepare as prepare\n"
    "from kgp.stores.base import GraphStore\n"
    "builder.WRITE_BATCH_ROWS = 1  # a document per write query\n"
    "prepare.LINK_DOCUMENTS = int(sys.argv[3])  # several linked groups per sync\n"
    "kill_at, done, run = int(sys.argv[4]), [0], GraphStore.run\n"
    "def counted(self, name, parameters=None, *, write=False):\n"
    "    rows = run(self, name, parameters, write=write)\n"
    "    if name in ('write_documents', 'replace_similar'):\n"
    "        done[0] += 1\n"
    "        if done[0] == kill_at:\n"
    "            os.kill(os.getpid(), signal.SIGKILL)\n"
    "    return rows\n"
    "GraphStore.run = counted\n"
    "with kgp.open(data_dir=Path(sys.argv[1]), knn_k=3, device='cpu',\n"
    "              encoder='all-MiniLM-L6-v2') as kg:\n"
    "    kg.sync(Path(sys.argv[2]))\n"
)


@pytest.mark.slow
def test_sigkill_at_chosen_writes_then_sync_equals_clean_sync(tmp_path: Path, graphs: Any) -> None:
    """The timed kills above land wherever the machine's speed puts them; these land at chosen
    writes of syncs that link several small groups: right after the first document (pending
    alone, its passages linked only among themselves), after the next sync's recovery, a whole
    group and half the next one, and after a group's last document before its linking."""
    folder = write_copies(tmp_path / "docs", 6)
    clean = graphs("clean")
    clean.sync(folder)
    expected = clean.dump()
    clean.store.close()

    data_dir = tmp_path / "killed"
    watcher = FalkorStore(data_dir=data_dir).open()  # shares the server with the syncers
    pending = []
    try:
        # (documents per linked group, the write to die after): each sync first links what
        # the last one left pending (one write), then writes a group's documents one per query
        # and links them (one write)
        for group, kill_at in ((4, 1), (4, 8), (3, 4)):
            command = [sys.executable, "-c", KILL_AT_WRITE, str(data_dir), str(folder)]
            done = subprocess.run([*command, str(group), str(kill_at)], check=False)
            assert done.returncode == -signal.SIGKILL, "the kill should land during the sync"
            pending.append(len(watcher.links.pending_documents()))
    finally:
        watcher.close()
    assert pending == [1, 2, 3]
    repaired = graphs("killed")
    report = repaired.sync(folder)
    assert report.recovered == 3
    assert repaired.dump() == expected


def test_a_server_crash_during_a_sync_is_gone_through(tmp_path: Path, graphs: Any) -> None:
    """FalkorDB 4.16 crashes at times (a CI run lost its server in a sync's write): the store
    starts the server again from its log and the sync goes again, once, from what the graph
    holds; it reports every document once, the crash among its restarts, and the graph equals
    a clean sync's."""
    from tests.test_sync_properties import Crashing

    folder = write_copies(tmp_path / "docs", 3)
    clean = graphs("clean")
    clean_report = clean.sync(folder)
    expected = clean.dump()
    # the writes after the schema's (which makes itself again): the vector index set aside,
    # the documents' write, their links
    for kill_at in (12, 13, 14):
        graph = graphs(f"crashed-{kill_at}")
        with Crashing(graph.store, kill_at):
            report = graph.sync(folder)
        assert len(report.restarts) == 1 and "crashed by signal: 11" in report.restarts[0]
        assert sorted(report.added) == sorted(clean_report.added)
        assert (report.changed, report.unchanged, report.skipped) == ([], 0, [])
        assert graph.dump() == expected


def test_file_that_vanishes_changes_or_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader's checks, forced: root can read anything and files rarely change on cue."""
    import builtins

    from kgp.errors import DocumentError
    from kgp.ingest.sources import file_loader

    path = tmp_path / "a.txt"
    path.write_text("first version")
    load = file_loader(path)
    path.unlink()
    with pytest.raises(DocumentError, match="vanished during the sync"):
        load()

    path.write_text("first version")
    real_open = builtins.open

    def growing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, *args, **kwargs)
        if Path(file) == path:
            with real_open(path, "a") as more:
                more.write(" and more, written while kgp reads")
        return handle

    monkeypatch.setattr(builtins, "open", growing_open)
    with pytest.raises(DocumentError, match="changed during the sync"):
        file_loader(path)()

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(file) == path:
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    with pytest.raises(DocumentError, match="no read permission"):
        file_loader(path)()


def test_add_and_remove_one_file(tmp_path: Path, encoder: Encoder) -> None:
    import kgp

    folder = write_corpus(tmp_path / "docs", ["rivers.txt", "cities/egypt.txt"])
    with kgp.open(data_dir=tmp_path / "kb", knn_k=3) as kg:
        kg._encoder = encoder
        report = kg.add(folder / "cities" / "egypt.txt", root=folder)
        assert report.added == ["cities/egypt.txt"]
        assert kg.add(folder / "rivers.txt").added == ["rivers.txt"]  # id: the file name
        assert kg.add(folder / "rivers.txt").unchanged == 1
        assert sorted(d.id for d in kg.store.list_documents()) == ["cities/egypt.txt", "rivers.txt"]
        with pytest.raises(DocumentError, match="not inside"):
            kg.add(folder / "rivers.txt", root=folder / "cities")
        assert kg.remove("rivers.txt") is True
        assert kg.remove("rivers.txt") is False
        assert [d.id for d in kg.store.list_documents()] == ["cities/egypt.txt"]


def test_sync_with_another_encoder_is_refused(tmp_path: Path, encoder: Encoder) -> None:
    """Vectors of two encoders with the same dimension cannot be told apart by the store: the
    graph records its encoder and another one is refused before anything is written."""
    from kgp.ingest.encoder import resolve_encoder

    folder = write_corpus(tmp_path / "docs", ["rivers.txt"])
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        kg.sync(folder)
        assert kg.store.upkeep.graph_encoder() == "all-MiniLM-L6-v2"
        before = kg.store.upkeep.dump()
    (folder / "more.txt").write_text("The Ostra river floods in spring.")
    other = str(resolve_encoder("all-MiniLM-L6-v2"))  # the same weights under another name
    with kgp.open(data_dir=tmp_path / "kb", encoder=other, groups="*") as kg:
        with pytest.raises(ConfigurationError, match="was built with encoder 'all-MiniLM-L6-v2'"):
            kg.sync(folder)
        assert kg.store.upkeep.dump() == before, "nothing was written"


def test_a_sync_that_would_empty_the_graph_is_refused(tmp_path: Path, graphs: Any) -> None:
    folder = write_corpus(tmp_path / "docs")
    graph = graphs("kb")
    graph.sync(folder)
    before = graph.dump()
    empty = tmp_path / "empty"  # a typo, an unmounted share
    empty.mkdir()
    with pytest.raises(RemovalRefusedError, match=r"would remove every document \(4\)") as refused:
        graph.sync(empty)
    assert sorted(refused.value.would_remove) == sorted(TEXTS) and refused.value.stored == 4
    assert "--allow-removal" in str(refused.value)
    assert graph.dump() == before, "nothing was written"
    report = graph.syncer.sync_folder(empty, allow_removal=True)
    assert sorted(report.removed) == sorted(TEXTS)
    assert graph.store.counts().labels.get("Document", 0) == 0


def test_removing_more_than_the_share_is_refused(tmp_path: Path, graphs: Any) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    notes = {
        f"note{i:02d}.txt": f"Note {i} is about pumping station number {i}." for i in range(12)
    }
    for name, text in notes.items():
        (folder / name).write_text(text)
    graph = graphs("kb")
    graph.sync(folder)
    before = graph.dump()
    for name in list(notes)[:7]:
        (folder / name).unlink()
    with pytest.raises(RemovalRefusedError, match=r"7 of 12 documents, more than 50%"):
        graph.sync(folder)
    assert graph.dump() == before
    (folder / "note00.txt").write_text(notes["note00.txt"])  # 6 of 12 gone: half is allowed
    assert len(graph.sync(folder).removed) == 6
    for name in list(notes)[7:11]:  # 4 of the 6 left: fewer than 10 stored, only "all" counts
        (folder / name).unlink()
    assert len(graph.sync(folder).removed) == 4


def test_a_long_sync_compacts_its_log_as_it_grows(
    tmp_path: Path, graphs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the log has grown past its snapshot, the sync compacts it (a start after a crash
    replays the log: all of a long sync's writes otherwise); each snapshot is made whole, so
    the graph is the same. (Small windows and a small least log, for a small corpus.)"""
    monkeypatch.setattr(prepare, "WINDOW_DOCUMENTS", 4)
    monkeypatch.setattr(falkor_log, "COMPACT_MIN_BYTES", 16 * 1024)
    folder = write_copies(tmp_path / "docs", 12)
    graph = graphs("kb")
    manifest = graph.store.server.home / "appendonlydir" / "appendonly.aof.manifest"
    snapshots: list[str] = []

    def seen(progress: Any) -> None:
        snapshots.append(manifest.read_text().split()[1])  # the snapshot file's name

    graph.syncer.on_progress = seen
    report = graph.sync(folder)
    assert len(report.added) == 12 * len(TEXTS)
    assert len(set(snapshots)) > 2  # compacted while it wrote, more than once
    clean = graphs("clean")
    clean.sync(folder)
    assert graph.dump() == clean.dump()

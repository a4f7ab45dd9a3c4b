"""Backups: ``kgp backup`` of a data directory while ``kgp serve`` answers and another process
syncs, restored by ``kgp restore`` into a new data directory and compared by the canonical
dump; a backup killed at any point; a damaged, incomplete or foreign backup refused; the write
gate that pauses every process's writes for a snapshot's start."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp.access import ADMIN_CALLER
from kgp.backup import INCOMPLETE, MANIFEST, RESTORING, backup, restore
from kgp.errors import BackupError
from kgp.ingest import prepare
from kgp.locks import WriteGate
from kgp.settings import load_settings

from tests.graphs import random_documents
from tests.served import run_kgp, serving
from tests.test_sync import canonical

EXAMPLES = Path(__file__).parents[1] / "examples" / "documents"
QUESTION = {"question": "Which station recorded the most rain?", "k": 3}


def dump(data_dir: Path) -> Any:
    with kgp.open(data_dir=data_dir, groups="*") as kg, kg.store.reading_as(ADMIN_CALLER):
        return canonical(kg.store.upkeep.dump())


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("backup") / "kb"
    with kgp.open(data_dir=data_dir) as kg:
        kg.sync(EXAMPLES)
    return data_dir


def test_a_backup_taken_while_serving_restores_the_same_graph(synced: Path, tmp_path: Path) -> None:
    before = dump(synced)
    answers: list[int] = []
    with serving(synced) as server:
        stop = threading.Event()

        def ask() -> None:  # reads go on while the backup runs
            while not stop.is_set():
                answers.append(server.post("/retrieve", QUESTION).status_code)

        asking = threading.Thread(target=ask)
        asking.start()
        try:
            made = run_kgp("--data-dir", str(synced), "backup", str(tmp_path / "copy"), "--json")
        finally:
            stop.set()
            asking.join()
        assert made.returncode == 0, made.stderr
        expected = server.post("/retrieve", QUESTION).json()
    report = json.loads(made.stdout)
    assert report["documents"] == 4 and report["passages"] > 0
    assert answers and set(answers) == {200}
    assert not list(tmp_path.glob(f"*{INCOMPLETE}"))
    manifest = json.loads((tmp_path / "copy" / MANIFEST).read_text())
    assert {"graph.rdb", "audit/audit.log"} <= set(manifest["files"])
    assert oct((tmp_path / "copy" / "graph.rdb").stat().st_mode & 0o777) == "0o600"

    restored = tmp_path / "restored"
    done = run_kgp("--data-dir", str(restored), "restore", str(tmp_path / "copy"))
    assert done.returncode == 0, done.stderr
    assert f"restored 4 documents, {report['passages']} passages" in done.stdout
    assert dump(restored) == before
    assert (restored / "audit" / "audit.log").read_text() == (
        tmp_path / "copy" / "audit" / "audit.log"
    ).read_text()
    with serving(restored) as server:
        again = server.post("/retrieve", QUESTION).json()
    assert [p["id"] for p in again["passages"]] == [p["id"] for p in expected["passages"]]


@pytest.mark.slow
def test_a_backup_during_another_process_sync_holds_whole_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync writes sixty documents, two at a time, into a served data directory while
    ``kgp backup`` (another process) copies it: the copy, once its stopped sync is finished
    (kgp maintain, as after a crash), equals a clean sync of the documents it holds."""
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 2)
    folder = random_documents(tmp_path / "docs", seed=3, documents=60, sentences=4)
    source = tmp_path / "kb"
    with serving(source) as server, kgp.open(data_dir=source) as kg:
        write = kg.store.write_documents

        def slowly(graphs: Any) -> None:  # a write every 0.3 s at least, so the copy lands
            write(graphs)  # while the sync goes on, however slowly kgp backup starts
            time.sleep(0.3)

        monkeypatch.setattr(kg.store, "write_documents", slowly)
        syncing = threading.Thread(target=kg.sync, args=(folder,))
        syncing.start()
        deadline = time.monotonic() + 120
        while len(server.get("/documents").json()) < 3:
            assert syncing.is_alive() and time.monotonic() < deadline
            time.sleep(0.05)
        made = run_kgp("--data-dir", str(source), "backup", str(tmp_path / "copy"), "--json")
        syncing.join()
        assert made.returncode == 0, made.stderr
    report = json.loads(made.stdout)
    assert 3 <= report["documents"] < 60  # (taken while the sync went on)
    restored = tmp_path / "restored"
    assert run_kgp("--data-dir", str(restored), "restore", str(tmp_path / "copy")).returncode == 0
    assert run_kgp("--data-dir", str(restored), "maintain").returncode == 0
    with kgp.open(data_dir=restored, groups="*") as kg:
        held = sorted(d.id for d in kg.documents())
    assert len(held) >= 3
    clean_folder = tmp_path / "clean-docs"
    clean_folder.mkdir()
    for doc_id in held:
        shutil.copy(folder / doc_id, clean_folder / doc_id)
    clean = tmp_path / "clean"
    with kgp.open(data_dir=clean) as kg:
        kg.sync(clean_folder)
    assert dump(restored) == dump(clean)


@pytest.mark.slow
def test_a_killed_backup_leaves_the_source_whole_and_no_backup(
    synced: Path, tmp_path: Path
) -> None:
    """Killed (SIGKILL) at moments from its folder's appearing on: the source is as it was and
    still serves, the copy is named incomplete and refused, and the next backup succeeds."""
    before = dump(synced)
    with serving(synced) as server:
        for n, delay in enumerate((0.0, 0.05, 0.2, 0.5)):
            dest = tmp_path / f"copy{n}"
            process = subprocess.Popen(
                [sys.executable, "-m", "kgp", "--data-dir", str(synced), "backup", str(dest)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            partial = dest.with_name(dest.name + INCOMPLETE)
            deadline = time.monotonic() + 60
            while not partial.exists() and not dest.exists() and process.poll() is None:
                assert time.monotonic() < deadline
                time.sleep(0.002)
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            assert server.post("/retrieve", QUESTION).status_code == 200
            if dest.exists():  # it finished before the kill: a whole backup
                assert not partial.exists() and (dest / MANIFEST).is_file()
            else:
                refused = run_kgp("--data-dir", str(tmp_path / "r"), "restore", str(partial))
                assert refused.returncode == 1
                assert refused.stderr.startswith("kgp: error: ")
                assert "did not finish" in refused.stderr
                assert len(refused.stderr.strip().splitlines()) == 1
        again = run_kgp("--data-dir", str(synced), "backup", str(tmp_path / "again"))
        assert again.returncode == 0, again.stderr
    assert dump(synced) == before


def test_restore_checks_the_backup_and_the_target_before_writing(
    synced: Path, tmp_path: Path
) -> None:
    with kgp.open(data_dir=synced) as kg:
        backup(kg, tmp_path / "copy")
        with pytest.raises(BackupError, match="exists; give kgp backup a new folder"):
            backup(kg, tmp_path / "copy")
        with pytest.raises(BackupError, match="inside the data directory"):
            backup(kg, synced / "copy")
    damaged = tmp_path / "damaged"
    shutil.copytree(tmp_path / "copy", damaged)
    with open(damaged / "graph.rdb", "r+b") as rdb:
        rdb.seek(100)
        byte = rdb.read(1)
        rdb.seek(100)
        rdb.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(BackupError, match=r"graph\.rdb differs from the backup's record"):
        restore(load_settings(data_dir=tmp_path / "a"), damaged)
    assert not (tmp_path / "a").exists()
    with pytest.raises(BackupError, match="is not a kgp backup"):
        restore(load_settings(data_dir=tmp_path / "a"), synced)
    with pytest.raises(BackupError, match="not empty; restore into a new one"):
        restore(load_settings(data_dir=synced), tmp_path / "copy")
    with pytest.raises(BackupError, match="neo4j-admin"):
        restore(load_settings(store="neo4j", data_dir=tmp_path / "n"), tmp_path / "copy")
    # a restore killed part way leaves its mark: run again, it starts over
    half = tmp_path / "half"
    half.mkdir()
    (half / RESTORING).write_text("killed")
    (half / "falkordb.restoring").mkdir()
    report = restore(load_settings(data_dir=half), tmp_path / "copy")
    assert report.documents == 4 and not (half / RESTORING).exists()
    assert dump(half) == dump(synced)


def test_the_write_gate_pauses_writes_of_every_holder_and_lets_reads_be(tmp_path: Path) -> None:
    gate, other = WriteGate(tmp_path), WriteGate(tmp_path)  # (two processes' gates)
    writing, release, paused, after = threading.Event(), threading.Event(), [], []

    def write() -> None:
        with gate.writing(), gate.writing():  # reentrant
            writing.set()
            release.wait()

    writer = threading.Thread(target=write)
    writer.start()
    writing.wait()
    with pytest.raises(TimeoutError, match="did not pause"), other.paused(timeout=0.2):
        pass

    def pause() -> None:
        with other.paused(timeout=30):
            paused.append(True)
            late = threading.Thread(target=lambda: after.append(gate.writing().__enter__()))
            late.start()
            late.join(timeout=0.3)
            paused.append(late.is_alive())  # a write that starts meanwhile waits
        late.join()

    pausing = threading.Thread(target=pause)
    pausing.start()
    time.sleep(0.1)
    assert not paused  # the write in flight ends first
    release.set()
    writer.join()
    pausing.join()
    assert paused == [True, True] and len(after) == 1

"""Running out of disk during a write: the embedded server cannot append the write to its log
and stops (redis, with ``appendfsync always``); kgp says so in one line, every document is whole
or absent when the server starts again, and writing works once there is space. On a real small
file system (a 3 MB tmpfs), mounted for the test where this machine lets it (root). A watch
goes on after a sync the store failed, and finishes once there is space."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp import writing
from kgp.errors import ConfigurationError, KgpError, StoreError, StoreUnavailableError
from kgp.ingest.report import SyncReport
from kgp.stores import FalkorStore
from kgp.stores.model import DocumentGraph

from tests.bench.scale_bench import StandInEncoder
from tests.graphs import DIM, make_document, random_documents
from tests.test_sync import canonical

TEXT = "passage {j} of {doc} " + "filler " * 300


def document(i: int) -> DocumentGraph:
    return make_document(f"d{i:03d}.txt", 10, seed=i, tables=0, text=TEXT)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 3 MB tmpfs here ({done.stderr.strip()}): it needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_keeps_documents_whole_and_says_so(small_disk: Path, tmp_path: Path) -> None:
    store = FalkorStore(data_dir=small_disk / "kb").open()
    store.ensure_schema(DIM)
    written = 0
    with pytest.raises(StoreUnavailableError) as raised:
        for i in range(1000):
            store.write_documents([document(i)])
            written += 1
    message = str(raised.value)
    assert "\n" not in message and "is full" in message and "whole or absent" in message
    assert written > 10
    store.close()  # the server is gone; closing says nothing more

    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    again = FalkorStore(data_dir=small_disk / "kb").open()
    clean = FalkorStore(data_dir=tmp_path / "clean").open()
    try:
        listed = again.list_documents(counts=True)
        assert len(listed) in (written, written + 1)  # the failed write: absent (or whole)
        assert {d.passages for d in listed} == {10}
        clean.ensure_schema(DIM)
        for i in range(len(listed)):
            clean.write_documents([document(i)])
        assert again.upkeep.dump() == clean.upkeep.dump()  # whole: nodes, edges and keyword counts
        again.write_documents([document(999)])  # and it writes again
        assert len(again.list_documents()) == len(listed) + 1
    finally:
        clean.close()
        again.close()


class Pauses(threading.Event):
    """A watch's stop event that records each pause it is asked to wait and waits none."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.asked.append(float(timeout or 0.0))
        return self.is_set()


def test_a_watch_goes_on_after_syncs_the_store_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watched folder's sync that the store fails (a rejected write) is reported and tried
    again at the next change, after a pause that doubles each failure in a row and starts again
    after a sync that went through; a third rejection in a row ends the watch, and so does an
    error of another kind; a store that still answers is not started again."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(3):
        (folder / f"d{i}.md").write_text(f"Text {i} of the watched folder. Another line {i}.")
    monkeypatch.setattr(writing, "RETRY_FIRST_S", 2.0)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        write = kg.store.write_documents
        failures = [2, 1]  # fail twice, then once more after a sync that went through

        def flaky(graphs: Any) -> None:
            if failures and failures[0]:
                failures[0] -= 1
                raise StoreError("FalkorDB rejected a write (no space); nothing of it was kept")
            if failures:
                failures.pop(0)
            write(graphs)

        monkeypatch.setattr(kg.store, "write_documents", flaky)
        seen: list[Any] = []
        pauses = Pauses()

        def change_d0_after_first_report(item: Any) -> None:
            seen.append(item)
            if isinstance(item, SyncReport) and item.added:
                (folder / "d0.md").write_text("Changed text of the watched folder. Line 0.")

        kg.watch(folder, change_d0_after_first_report, changes=[{"e"}] * 5, stop=pauses)
        assert [type(item).__name__ for item in seen] == [
            "StoreError",
            "StoreError",
            "SyncReport",
            "StoreError",
            "SyncReport",
        ]
        assert pauses.asked == [2.0, 4.0, 2.0]
        assert seen[2].added == ["d0.md", "d1.md", "d2.md"] and seen[4].changed == ["d0.md"]

        def rejected(graphs: Any) -> None:
            raise StoreError("FalkorDB rejected a write (always); nothing of it was kept")

        monkeypatch.setattr(kg.store, "write_documents", rejected)  # tried three times in all
        (folder / "d2.md").write_text("Changed for good.")
        seen.clear()
        with pytest.raises(StoreError, match="always"):
            kg.watch(folder, seen.append, changes=[{"e"}] * 5, stop=Pauses())
        assert [type(item).__name__ for item in seen] == ["StoreError", "StoreError"]

        reopened: list[bool] = []
        monkeypatch.setattr(kg.store, "open", lambda: reopened.append(True))
        monkeypatch.setattr(kg.store, "write_documents", write)
        unsynced = iter([StoreUnavailableError("could not compact the log: the disk is full")])

        def compaction_fails_once() -> None:
            failure = next(unsynced, None)
            if failure is not None:
                raise failure

        monkeypatch.setattr(kg.store.upkeep, "checkpoint", lambda **_: compaction_fails_once())
        seen.clear()
        kg.watch(folder, seen.append, changes=[{"e"}] * 2, stop=Pauses())
        assert [type(item).__name__ for item in seen] == ["StoreUnavailableError", "SyncReport"]
        assert not reopened  # it answered: no start again

        def broken(graphs: Any) -> None:
            raise ConfigurationError("not the store's sake")

        monkeypatch.setattr(kg.store, "write_documents", broken)
        (folder / "d1.md").write_text("Changed again.")
        with pytest.raises(ConfigurationError):
            kg.watch(folder, seen.append, changes=[{"e"}], stop=Pauses())


def test_a_watch_goes_on_after_the_disk_filled_and_finishes_once_there_is_space(
    small_disk: Path, tmp_path: Path
) -> None:
    """A watch whose server stops on a full disk says so, waits, starts the server again at
    its next try, and once there is space syncs the rest: the graph equals a clean sync."""
    folder = random_documents(tmp_path / "docs", seed=21, documents=150, sentences=6)
    seen: list[Any] = []

    def grow_the_disk_at_the_second_failure(item: Any) -> None:
        seen.append(item)
        if sum(isinstance(s, KgpError) for s in seen) == 2:
            subprocess.run(["mount", "-o", "remount,size=256m", str(small_disk)], check=True)

    with kgp.open(data_dir=small_disk / "kb", loaded_encoder=StandInEncoder(), groups="*") as kg:
        kg.watch(folder, grow_the_disk_at_the_second_failure, changes=[{"e"}] * 5, stop=Pauses())
        failures = [s for s in seen if isinstance(s, KgpError)]
        assert len(failures) == 2  # the next try too, the disk still full; then space
        assert all("is full" in str(f) and "\n" not in str(f) for f in failures)
        assert any(isinstance(s, SyncReport) and s.added for s in seen)
        synced = kg.store.upkeep.dump()
    with kgp.open(
        data_dir=tmp_path / "clean", loaded_encoder=StandInEncoder(), groups="*"
    ) as clean:
        clean.sync(folder)
        assert canonical(synced) == canonical(clean.store.upkeep.dump())

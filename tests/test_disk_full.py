"""Running out of disk during a write: the embedded server cannot append the write to its log
and stops (redis, with ``appendfsync always``); kgp says so in one line, every document is whole
or absent when the server starts again, and writing works once there is space. On a real small
file system (a 3 MB tmpfs), mounted for the test where this machine lets it (root)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kgp.errors import StoreUnavailableError
from kgp.stores import FalkorStore
from kgp.stores.model import DocumentGraph

from tests.graphs import DIM, make_document

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
        assert again.dump() == clean.dump()  # whole: nodes, edges and keyword counts
        again.write_documents([document(999)])  # and it writes again
        assert len(again.list_documents()) == len(listed) + 1
    finally:
        clean.close()
        again.close()

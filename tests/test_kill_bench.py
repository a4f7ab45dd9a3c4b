"""The kill bench's parts: its killer dies at the query it is told, and its verdict names what
differs."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from kgp.stores import FalkorStore

from tests.bench.kill_bench import KILLER, differences, python
from tests.corpus_files import write_copies


def test_the_verdict_is_same_or_names_the_counts_that_differ() -> None:
    node = {"key": "a", "label": "Passage", "props": {}}
    edge = {"type": "SIMILAR", "source": "a", "target": "b", "props": {}}
    clean = ([node, dict(node, key="b")], [edge, dict(edge, source="b", target="a")])
    assert differences(clean, clean) == "same"
    assert differences((clean[0], clean[1][:1]), clean) == "DIFFERS: SIMILAR 1 (clean 2)"
    assert differences((clean[0][:1], clean[1]), clean) == "DIFFERS: nodes 1 (clean 2)"
    other = (clean[0], [edge, dict(edge, source="b", target="b")])
    assert differences(other, clean) == "DIFFERS: the same counts, other nodes or edges"


@pytest.mark.slow
def test_the_killer_dies_right_after_the_query_it_is_told(tmp_path: Path) -> None:
    folder = write_copies(tmp_path / "docs", 1)
    done = python(KILLER, tmp_path / "kb", folder, 2048, 3, 1, -1)
    assert done.returncode == -signal.SIGKILL
    killed = [line for line in done.stderr.splitlines() if line.startswith("KILLED")]
    assert len(killed) == 1 and killed[0].startswith("KILLED 3 ")
    FalkorStore(data_dir=tmp_path / "kb").open().close()  # the last user stops its server
    finished = python(KILLER, tmp_path / "kb2", folder, 2048, 0, 1, -1)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert int(finished.stdout.split()[-1]) > 3  # every query counted, none killed

"""Waiting for FalkorDB's index builds: as long as they move, with news of how far they are."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from kgp.errors import StoreUnavailableError
from kgp.stores import FalkorStore
from kgp.stores.falkordb import indexes as falkor_indexes
from kgp.stores.falkordb.indexes import describe, progress, unfinished, wait_for_indexes

from tests.graphs import write


def building_for(seconds: float, step: float, total: int = 60001) -> Callable[[], dict[str, str]]:
    """A build that indexes another batch every ``step`` seconds and is done after ``seconds``."""
    began = time.monotonic()

    def status() -> dict[str, str]:
        spent = time.monotonic() - began
        if spent >= seconds:
            return {}
        done = int(spent / step) * 10000
        return {"Passage": f"[Indexing] {done}/{total}: UNDER CONSTRUCTION"}

    return status


def test_a_build_that_moves_is_waited_for_past_the_stall_time() -> None:
    began = time.monotonic()
    wait_for_indexes(building_for(0.6, 0.1), what="kb", stall=0.25, poll=0.01)
    assert time.monotonic() - began >= 0.6  # longer than the stall time, and it did not give up


def test_a_build_that_stops_moving_is_given_up_in_one_line_naming_how_far_it_got() -> None:
    stuck = {"Passage": "[Indexing] 10068/60001: UNDER CONSTRUCTION"}
    with pytest.raises(StoreUnavailableError) as caught:
        wait_for_indexes(lambda: stuck, what="embedded FalkorDB in /kb", stall=0.2, poll=0.01)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("embedded FalkorDB in /kb: indexes of Passage (10,068 of 60,001)")
    assert "built no further in 0 s" in message and "try again" in message


def test_a_long_build_is_reported_as_it_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(falkor_indexes, "NOTICE_SECONDS", 0.1)
    told: list[str] = []
    wait_for_indexes(building_for(0.45, 0.1), what="kb", stall=1.0, notice=told.append, poll=0.01)
    assert len(told) >= 3
    assert "Passage (10,000 of 60,001) entries" in "".join(told)


def test_status_texts() -> None:
    assert progress("[Indexing] 10068/60001: UNDER CONSTRUCTION") == (10068, 60001)
    assert progress("UNDER CONSTRUCTION") is None
    assert describe({"Passage": "[Indexing] 1/2", "Keyword": "PENDING"}) == (
        "Keyword, Passage (1 of 2)"
    )


def test_a_store_waits_for_a_real_build_and_says_how_far_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FalkorDB's own status while it builds a vector index over 30,000 nodes: the store waits
    until it is complete, and its notices count the entries."""
    vectors = np.random.default_rng(2).normal(size=(30000, 32)).astype(np.float32)
    told: list[str] = []
    with FalkorStore(data_dir=tmp_path / "kb") as store:
        write(store, "MERGE (:Seed)")  # (a new graph's first write, made again if stuck)
        for start in range(0, len(vectors), 5000):
            rows = [v.tolist() for v in vectors[start : start + 5000]]
            store._execute(
                "UNWIND range(0, size($rows) - 1) AS i CREATE (:P {e: vecf32($rows[i])})",
                {"rows": rows},
                write=True,
            )
        store._execute(
            "CREATE VECTOR INDEX FOR (p:P) ON (p.e) OPTIONS {dimension: 32, "
            "similarityFunction: 'cosine'}",
            {},
            write=True,
        )
        seen = unfinished(store._index_rows())
        store.on_wait = told.append
        monkeypatch.setattr(falkor_indexes, "NOTICE_SECONDS", 0.0)
        store._wait_for_indexes()
        assert not unfinished(store._index_rows())
    assert "P" in seen and progress(seen["P"]) is not None
    assert told and all("of 30,000" in line for line in told)


def test_the_cli_reports_a_long_wait_on_stderr_unless_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kgp.cli.context import Context

    for quiet in (False, True):
        state = Context(overrides={"data_dir": tmp_path / "kb"}, quiet=quiet)
        with state.open(state.settings()) as graph:
            if quiet:
                assert graph.store.on_wait is None
            else:  # given before the open: the server's load is reported too
                assert graph.store.on_wait is not None
                graph.store.on_wait("waiting for the indexes: Passage (1 of 2) entries")
                store = graph.store
                assert isinstance(store, FalkorStore) and store.server.on_wait is not None
                store.server.on_wait(
                    "FalkorDB is loading the graph in kb: 40% of 2 MB, 15 s so far"
                )
    err = capsys.readouterr().err
    assert "kgp: waiting for the indexes: Passage (1 of 2) entries" in err
    assert err.count("kgp: FalkorDB is loading the graph in kb: 40% of 2 MB") == 1

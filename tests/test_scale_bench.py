"""The scale benchmark's resumable runs: a large graph is built over several runs, so what a
resumed run reads back and what it counts must be what the first run wrote. (The benchmark's
figures are printed by it, never asserted here.)"""

from __future__ import annotations

import json
from pathlib import Path

import kgp
import pytest
from kgp.ingest.report import Progress

from tests.bench.scale_bench import (
    CORPUS,
    StandInEncoder,
    SyncProgress,
    UnigramWriter,
    caller_times,
    measure,
    reopen_times,
    sentences_in,
    write_documents,
)

NEEDS_CORPUS = pytest.mark.skipif(
    not CORPUS.is_file(), reason=f"the 2Wiki train corpus is not at {CORPUS} (../shared/data)"
)


@NEEDS_CORPUS
def test_a_resumed_run_reads_back_the_sentences_written(tmp_path: Path) -> None:
    written = write_documents(tmp_path / "docs", UnigramWriter(CORPUS), 75)
    assert len(written) == 75
    assert sentences_in(tmp_path / "docs") == written


def test_progress_keeps_the_time_and_passages_of_every_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "kb-1000.sync.json"
    ledger.write_text(json.dumps({"seconds": 100.0, "passages": 400}))  # an earlier run's
    progress = SyncProgress(1000, ledger, before=400, every_s=0.0)
    progress(Progress(done=10, total=40, passages=250, path="doc-000009.md"))
    saved = json.loads(ledger.read_text())
    assert saved["passages"] == 650
    assert saved["seconds"] >= 100.0
    assert "1000: 650 passages written, 10/40 documents looked at" in capsys.readouterr().out
    progress.save(passages=1000)  # the graph's count when the run ended
    saved = json.loads(ledger.read_text())
    assert saved["passages"] == 1000
    assert progress.seconds() >= saved["seconds"] >= 100.0


@NEEDS_CORPUS
def test_a_graph_measured_as_it_stands_is_not_synced(tmp_path: Path) -> None:
    """--as-it-stands measures a graph built part way (a size built over several sessions)
    without syncing the rest: its ledger is left as the runs that wrote it left it, and so is
    the write rate it reports; with no graph there, it says so. A measurement removes what it
    added, with the add in a new session (cold_add_s; cold_command_s with its close) or without
    (--no-cold-add), and in the session that synced it (kept_add_s), which one measured as it
    stands has none of. The keys of the matrix of every vector kgp no longer keeps stay, null."""
    with pytest.raises(SystemExit, match="no graph left"):
        measure(100, tmp_path, UnigramWriter(CORPUS), StandInEncoder(), 5, as_it_stands=True)
    first = measure(100, tmp_path, UnigramWriter(CORPUS), StandInEncoder(), 5)
    ledger = json.loads((tmp_path / "kb-100.sync.json").read_text())
    (tmp_path / "docs-100" / "doc-000000.md").unlink()  # a sync would remove it
    again = measure(
        100, tmp_path, UnigramWriter(CORPUS), StandInEncoder(), 5, as_it_stands=True, cold_add=False
    )
    assert first["cold_add_s"] > 0 and again["cold_add_s"] is None  # --no-cold-add
    assert first["cold_command_s"] >= first["cold_add_s"] and again["cold_command_s"] is None
    assert first["kept_add_s"] > 0 and again["kept_add_s"] is None  # no sync in that run
    for run in (first, again):
        assert run["hold_s"] is None and run["held_add_s"] is None and run["restored"] is None
        assert run["first_write_s"] > 0 and run["index_add_s"] == run["add_s"] > 0
        assert run["index_ready_s"] == run["reopen_s"] and run["index_mb"] > 0
    assert json.loads((tmp_path / "kb-100.sync.json").read_text()) == ledger
    assert again["write_rows_per_s"] == round(ledger["passages"] / ledger["seconds"], 1)
    assert again["passages"] == first["passages"]
    assert len(again["add_runs_s"]) == 3 and again["add_s"] == sorted(again["add_runs_s"])[1]
    with kgp.open(data_dir=tmp_path / "kb-100", loaded_encoder=StandInEncoder()) as kg:
        assert not kg.remove("added.md")
        assert kg.stats().labels.get("Passage", 0) == first["passages"]


@NEEDS_CORPUS
def test_reopen_only_times_each_start_and_writes_nothing(tmp_path: Path) -> None:
    """--reopen-only times the reopen of a graph left in the work directory, each run, and
    leaves the graph as it was; with no graph there, it says so."""
    with pytest.raises(SystemExit, match="no graph in"):
        reopen_times(100, tmp_path, StandInEncoder(), 5, 2)
    measure(100, tmp_path, UnigramWriter(CORPUS), StandInEncoder(), 5)
    with kgp.open(data_dir=tmp_path / "kb-100", loaded_encoder=StandInEncoder()) as kg:
        before = kg.stats()
    timed = reopen_times(100, tmp_path, StandInEncoder(), 5, 2)
    assert len(timed["reopen_runs"]) == 2 and timed["reopen_s"] > 0
    with kgp.open(data_dir=tmp_path / "kb-100", loaded_encoder=StandInEncoder()) as kg:
        assert kg.stats() == before


@NEEDS_CORPUS
def test_callers_only_times_the_three_readers_on_one_graph_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """--callers-only asks the same questions as the admin, a public reader (covered reads) and
    the same reader checking every document; with no graph there, it says so."""
    with pytest.raises(SystemExit, match="no graph in"):
        caller_times(100, tmp_path, StandInEncoder(), 5)
    measure(100, tmp_path, UnigramWriter(CORPUS), StandInEncoder(), 5)
    with kgp.open(data_dir=tmp_path / "kb-100", loaded_encoder=StandInEncoder()) as kg:
        before = kg.stats()
    timed = caller_times(100, tmp_path, StandInEncoder(), 5)
    assert set(timed) == {"admin_p50_ms", "covered_p50_ms", "checked_p50_ms"}
    assert all(ms > 0 for ms in timed.values())
    with kgp.open(data_dir=tmp_path / "kb-100", loaded_encoder=StandInEncoder()) as kg:
        assert kg.stats() == before


def test_a_stand_in_graph_opens_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stand-in encoder is recorded by its name, not as a path under the working directory,
    so a graph the benchmark built from one checkout is measured from another."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nThe river flows past the mill. The mill grinds corn.")
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        kg.sync(docs)
        assert kg.store.upkeep.graph_encoder() == "standin-bag-of-words-384"
    (docs / "b.md").write_text("# B\n\nThe corn is sold at the market by the river.")
    monkeypatch.chdir(tmp_path / "two")
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=StandInEncoder()) as kg:
        assert kg.sync(docs).added == ["b.md"]
        assert kg.store.upkeep.graph_encoder() == "standin-bag-of-words-384"

"""``kgp backup`` and ``kgp restore`` on a real graph: the backup's seconds and how long the
writes of every process waited for it (the write gate's pause), then the restore's seconds;
baseline: a plain copy of the same data directory's files (``shutil.copytree``, which is not
consistent while the graph is written).

    python -m tests.bench.backup_bench --data-dir DIR [--runs 3]

DIR holds a graph (``kb/`` under it, as serve_bench and scale_bench leave one); the copies go
to a temporary folder and are deleted. The last line is one JSON object of the figures."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import kgp
from kgp.backup import backup, restore
from kgp.locks import WriteGate
from kgp.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    source = args.data_dir / "kb"
    pauses: list[float] = []
    paused = WriteGate.paused

    @contextmanager
    def timed(gate: WriteGate, timeout: float) -> Iterator[None]:
        started = time.perf_counter()
        with paused(gate, timeout):
            yield
        pauses.append(time.perf_counter() - started)

    WriteGate.paused = timed  # type: ignore[method-assign]
    work = Path(tempfile.mkdtemp(prefix="kgp-backup-bench-"))
    copies, backups, restores = [], [], []
    try:
        with kgp.open(data_dir=source, groups="*") as kg:
            passages = kg.stats().labels.get("Passage", 0)
            for run in range(args.runs):
                started = time.perf_counter()
                shutil.copytree(source / "falkordb" / "appendonlydir", work / f"copy{run}")
                copies.append(time.perf_counter() - started)
                report = backup(kg, work / f"backup{run}")
                backups.append(report.seconds)
        for run in range(args.runs):
            started = time.perf_counter()
            restore(load_settings(data_dir=work / f"restored{run}"), work / f"backup{run}")
            restores.append(time.perf_counter() - started)
            shutil.rmtree(work / f"restored{run}")
    finally:
        WriteGate.paused = paused  # type: ignore[method-assign]
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "passages": passages,
        "backup_bytes": report.bytes,
        "plain_copy_s": round(statistics.median(copies), 3),
        "backup_s": round(statistics.median(backups), 3),
        "writes_paused_ms": round(1000 * statistics.median(pauses), 1),
        "writes_paused_max_ms": round(1000 * max(pauses), 1),
        "restore_s": round(statistics.median(restores), 3),
    }
    print(
        f"{passages} passages, backup {report.bytes / 1e6:.1f} MB: plain copy of the log "
        f"{figures['plain_copy_s']} s; kgp backup {figures['backup_s']} s, writes paused "
        f"{figures['writes_paused_ms']} ms (at most {figures['writes_paused_max_ms']}); "
        f"kgp restore {figures['restore_s']} s (medians of {args.runs})"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

"""Kill a sync after (or during) each of its store queries, repair it with the next sync, and
compare the graph with a clean sync of the same files: where a kill -9 can land, and whether
every such landing is repaired, whatever the machine's speed.

    python -m tests.bench.kill_bench [--copies 24] [--every 1] [--mid-ms -1] [--rows 1]
                                     [--link-documents 2048] [--from 1] [--work-dir DIR]

The folder is the one of ``tests/test_sync.py::test_sigkill_during_sync_then_sync_equals_clean_
sync`` (``--copies`` copies of the four small test documents, every sentence repeated in each
copy). A watcher process holds the embedded server, as in that test, so the killed syncers
share it; after each kill the watcher closes (the last user: the indexes are set aside and the
log compacted), and a new process syncs the folder again and dumps the graph.

Each position n is the n-th query of the sync (reads, writes and the schema's own writes, as
numbered by an uninterrupted sync of an empty graph, whose count is printed first). With
``--mid-ms M >= 0`` the kill lands M ms after the n-th query is sent instead of after its
answer, so it can fall inside the query. Each line: the position, the query killed at, and
``same`` or what differs. The last line reads ``N positions, D differ``.

The timed test lands its kills where the machine's speed puts them; this bench lands them
everywhere, on any machine: run it where the timed test fails to find the query whose kill is
not repaired."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from kgp.stores import FalkorStore

from tests.corpus_files import TEXTS, write_copies

# argv: data dir, folder, documents per linked group, kill position (0: never), documents per
# write query (rows), kill delay in ms after sending the query (negative: after its answer)
KILLER = r"""
import os, signal, sys, threading, time
from pathlib import Path
import kgp
import kgp.ingest.builder as builder, kgp.ingest.prepare as prepare
from kgp.stores.falkordb.store import FalkorStore

data_dir, folder, group, kill_at, rows, mid = sys.argv[1:7]
prepare.LINK_DOCUMENTS = int(group)
builder.WRITE_BATCH_ROWS = int(rows)
kill_at, mid, count = int(kill_at), float(mid), [0]
execute, locked_write = FalkorStore._execute, FalkorStore._locked_write

def die(what):
    print(f"KILLED {count[0]} {what}", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

def counted(query, run):
    count[0] += 1
    what = query.strip().splitlines()[-1][:60]
    if count[0] == kill_at and mid >= 0:
        threading.Thread(target=lambda: (time.sleep(mid / 1000), die(what)), daemon=True).start()
    result = run()
    if count[0] == kill_at and mid < 0:
        die(what)
    return result

def _execute(self, query, parameters, *, write):
    return counted(query, lambda: execute(self, query, parameters, write=write))

def _locked_write(self, name, parameters, what):
    return counted(name, lambda: locked_write(self, name, parameters, what))

FalkorStore._execute, FalkorStore._locked_write = _execute, _locked_write
with kgp.open(data_dir=Path(data_dir), knn_k=3, device="cpu", encoder="all-MiniLM-L6-v2") as kg:
    kg.sync(Path(folder))
print(f"QUERIES {count[0]}", flush=True)
"""

# argv: data dir, folder, output file: sync the folder, then dump the graph as the tests compare it
REPAIR = r"""
import json, sys
from pathlib import Path
import kgp
from kgp.access import ADMIN_CALLER
from tests.test_sync import canonical

data_dir, folder, out = sys.argv[1:4]
with kgp.open(data_dir=Path(data_dir), knn_k=3, device="cpu", encoder="all-MiniLM-L6-v2") as kg:
    kg.sync(Path(folder))
    with kg.store.reading_as(ADMIN_CALLER):
        dump = canonical(kg.store.upkeep.dump())
Path(out).write_text(json.dumps(dump, sort_keys=True, default=str))
"""

REPO = Path(__file__).resolve().parents[2]


def python(code: str, *args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-c", code, *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def killed_sync(
    data_dir: Path, folder: Path, args: argparse.Namespace, position: int
) -> subprocess.CompletedProcess[str]:
    """A sync of ``folder`` into a new ``data_dir`` killed at ``position`` (0: never), while a
    watcher holds the server, as in the timed test (so no close of the killer's sets indexes
    aside, whichever query it dies at)."""
    shutil.rmtree(data_dir, ignore_errors=True)
    watcher = FalkorStore(data_dir=data_dir).open()
    try:
        killer = (args.link_documents, position, args.rows, args.mid_ms)
        return python(KILLER, data_dir, folder, *killer)
    finally:
        watcher.close()


def repaired(work: Path, folder: Path, data_dir: Path) -> Any:
    out = work / "dump.json"
    done = python(REPAIR, data_dir, folder, out)
    if done.returncode != 0:
        raise SystemExit(f"the repair sync failed:\n{done.stderr[-3000:]}")
    return json.loads(out.read_text())


def differences(got: Any, want: Any) -> str:
    """What differs between two dumps, briefly: relationship counts by type, then node counts."""
    if got == want:
        return "same"
    have, clean = Counter(r["type"] for r in got[1]), Counter(r["type"] for r in want[1])
    parts = [
        f"{t} {have[t]} (clean {clean[t]})" for t in sorted(have | clean) if have[t] != clean[t]
    ]
    if len(got[0]) != len(want[0]):
        parts.append(f"nodes {len(got[0])} (clean {len(want[0])})")
    return "DIFFERS: " + ("; ".join(parts) or "the same counts, other nodes or edges")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--every", type=int, default=1, help="Kill at every N-th position.")
    parser.add_argument("--from", dest="start", type=int, default=1)
    parser.add_argument("--mid-ms", type=float, default=-1.0)
    parser.add_argument("--rows", type=int, default=1, help="Documents per write query.")
    parser.add_argument("--link-documents", type=int, default=2048)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="kgp-kills-"))
    folder = write_copies(work / "docs", args.copies)
    clean = repaired(work, folder, work / "clean")
    counting = killed_sync(work / "counted", folder, args, 0)
    if counting.returncode != 0:
        raise SystemExit(f"the uninterrupted sync failed:\n{counting.stderr[-3000:]}")
    total = int(counting.stdout.split()[-1])
    print(f"an uninterrupted sync of {args.copies * len(TEXTS)} documents: {total} queries")

    positions = range(args.start, total + 1, args.every)
    differ = 0
    for n in positions:
        data_dir = work / "killed"
        done = killed_sync(data_dir, folder, args, n)
        killed = [line for line in done.stderr.splitlines() if line.startswith("KILLED")]
        where = killed[0].split(" ", 2)[2] if killed else "(finished first)"
        if not killed and done.returncode != 0:
            where = "(failed: " + done.stderr.strip().splitlines()[-1][:120] + ")"
        verdict = differences(repaired(work, folder, data_dir), clean)
        differ += verdict != "same"
        print(f"{n:4d} {where:62s} {verdict}", flush=True)
    print(f"{len(positions)} positions, {differ} differ")
    if args.work_dir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

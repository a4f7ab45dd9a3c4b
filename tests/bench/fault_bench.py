"""A sync of many files with bad ones among them keeps going and reports each: ``--files``
one-sentence text files in folders of 1,000, one in twenty bad (empty, random bytes, NUL bytes,
a corrupt PDF), synced in one ``kg.sync``; then the same folder again (nothing changed).

    python -m tests.bench.fault_bench [--files 100000] [--work-dir DIR]

Checks, and says which failed: every bad file is reported under ``skipped`` with its reason,
every good one is a document of the graph, and the second sync changes nothing. Prints the sync's
files per second, the unchanged sync's (the baseline: reading and hashing alone) and this
process's peak memory; the last line is one JSON object. The vectors are the scale bench's
stand-in, so the store and the readers are measured, not the encoder (the real MiniLM embeds
about 55 passages per second here: 30 minutes for 100,000).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import kgp

from tests.bench.scale_bench import StandInEncoder

BAD = (b"", b"\x00\x01 nul bytes", b"%PDF-1.7\n% corrupt, no objects\n")


def write_files(folder: Path, count: int) -> set[str]:
    """The files; returns the ids (paths under ``folder``) of the bad ones."""
    bad: set[str] = set()
    for i in range(count):
        bad_one = i % 20 == 7
        kind = (i // 20) % 4
        name = f"part{i // 1000:03d}/note{i:06d}.{'pdf' if bad_one and kind == 2 else 'txt'}"
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if bad_one:
            bad.add(name)
            path.write_bytes(os.urandom(400) if kind == 3 else BAD[kind])
        else:
            path.write_text(f"Note {i} says station {i % 97} logged {i * 7 % 1013} mm of rain.")
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="kgp-faults-"))
    folder, data_dir = work / "files", work / "kb"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(data_dir, ignore_errors=True)
    bad = write_files(folder, args.files)
    print(f"{args.files} files in {folder}, {len(bad)} bad; vectors: stand-in (store measured)")
    with kgp.open(data_dir=data_dir, loaded_encoder=StandInEncoder()) as kg:
        began = time.perf_counter()
        report = kg.sync(folder)
        sync_s = time.perf_counter() - began
        documents = kg.stats().labels.get("Document", 0)
        began = time.perf_counter()
        again = kg.sync(folder)
        again_s = time.perf_counter() - began
    skipped = {item.path: item.reason for item in report.skipped}
    # the reason after the file's path, up to its details: "not UTF-8 (byte 2); ..." -> "not UTF-8"
    reasons = Counter(re.split(r" \(|;", r.split(": ", 1)[-1])[0] for r in skipped.values())
    checks = {
        "every bad file reported": set(skipped) == bad,
        "every good file a document": len(report.added) == documents == args.files - len(bad),
        "the second sync changed nothing": not (again.added or again.changed or again.removed)
        and again.unchanged == documents,
    }
    for name, passed in checks.items():
        print(f"{'ok' if passed else 'FAILED'}: {name}")
    for reason, count in reasons.most_common():
        print(f"  {count} skipped: {reason}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results = {
        "files": args.files,
        "bad": len(bad),
        "sync_s": round(sync_s, 1),
        "files_per_s": round(args.files / sync_s, 1),
        "unchanged_sync_s": round(again_s, 1),
        "ratio_to_unchanged": round(sync_s / again_s, 2),
        "peak_mb": round(peak_mb, 1),
        "checks_passed": all(checks.values()),
    }
    print(json.dumps(results))
    if not all(checks.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()

"""What a command costs before it does anything: ``import kgp``, ``kgp --help``, ``kgp stats``,
``kgp sync`` of an unchanged folder and ``kgp retrieve``, each the median of 5 runs, against
``python -c pass`` in the same run (the ratio holds on a busy machine; seconds do not).

    python -m tests.bench.startup_bench [--runs 5]

Also reports which heavy modules each command imported (torch, sentence_transformers, neo4j).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "documents"
HEAVY = ("torch", "sentence_transformers", "transformers", "neo4j", "camelot", "pymupdf")
PROBE = (
    "import runpy, sys, json, atexit\n"
    "atexit.register(lambda: sys.stderr.write('\\nLOADED ' + json.dumps("
    f"[m for m in {HEAVY!r} if m in sys.modules]) + '\\n'))\n"
    "sys.argv = ['kgp', *sys.argv[1:]]\n"
    "from kgp.cli import main\n"
    "main()\n"
)


def timed(argv: list[str]) -> tuple[float, list[str]]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    loaded = [
        json.loads(line[len("LOADED ") :])
        for line in done.stderr.splitlines()
        if line.startswith("LOADED ")
    ]
    return seconds, loaded[-1] if loaded else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kgp-startup-"))
    data = root / "kb"
    python = sys.executable
    try:
        subprocess.run(
            [python, "-m", "kgp.cli", "--data-dir", str(data), "--quiet", "sync", str(EXAMPLES)],
            check=False,
            capture_output=True,
        )
        if not (data / "falkordb").is_dir():  # older kgp: no python -m kgp.cli entry
            subprocess.run(
                [python, "-c", PROBE, "--data-dir", str(data), "--quiet", "sync", str(EXAMPLES)],
                check=True,
                capture_output=True,
            )
        kgp = [python, "-c", PROBE, "--data-dir", str(data)]
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "import kgp": [python, "-c", "import kgp"],
            "kgp --help": [*kgp, "--help"],
            "kgp stats": [*kgp, "stats"],
            "kgp sync (unchanged)": [*kgp, "--quiet", "sync", str(EXAMPLES)],
            "kgp retrieve": [*kgp, "retrieve", "Which station recorded the most rain?", "--k", "5"],
        }
        rows = []
        for name, argv in commands.items():
            runs = [timed(argv) for _ in range(args.runs)]
            median = statistics.median(seconds for seconds, _ in runs)
            rows.append((name, median, runs[-1][1]))
        base = rows[0][1]
        print(
            f"| command | median s ({args.runs} runs) | × python -c pass | heavy modules loaded |"
        )
        print("| --- | --- | --- | --- |")
        for name, median, loaded in rows:
            print(f"| {name} | {median:.2f} | {median / base:.1f} | {', '.join(loaded) or '-'} |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

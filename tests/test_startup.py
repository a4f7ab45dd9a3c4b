"""Commands import only what they need: kgp --help, stats, a sync of an unchanged folder and
doctor --no-models never load torch, a model library or the Neo4j driver when the store is
embedded (each would cost seconds before the command starts). Timings are in
tests/bench/startup_bench.py, never asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kgp
import pytest
from kgp.ingest.embedding import Encoder

from tests.test_examples import EXAMPLES

HEAVY = ("torch", "transformers", "sentence_transformers", "neo4j")
PROBE = (
    "import sys, json, atexit\n"
    "atexit.register(lambda: sys.stderr.write('\\nLOADED ' + json.dumps("
    f"[m for m in {HEAVY!r} if m in sys.modules]) + '\\n'))\n"
    "sys.argv = ['kgp', *sys.argv[1:]]\n"
    "from kgp.cli import main\n"
    "main()\n"
)


def loaded(*args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED ")][-1]
    return list(json.loads(line.removeprefix("LOADED ")))


@pytest.mark.slow
def test_light_commands_never_load_models_or_the_neo4j_driver(
    tmp_path: Path, encoder: Encoder
) -> None:
    data = tmp_path / "kb"
    with kgp.open(data_dir=data, loaded_encoder=encoder) as kg:
        kg.sync(EXAMPLES)
    assert loaded("--help") == []
    assert loaded("--data-dir", str(data), "stats", "--json") == []
    assert loaded("--data-dir", str(data), "--quiet", "sync", str(EXAMPLES)) == []
    assert loaded("--data-dir", str(data), "doctor", "--no-models") == []


def test_import_kgp_is_light() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, kgp; print([m for m in {HEAVY!r} if m in sys.modules])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr

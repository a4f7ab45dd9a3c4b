"""What one change costs a large graph, in a new process (as ``kgp add`` or ``kgp sync`` of one
file would pay it), query by query: on a copy of each graph that ``scale_bench`` left, add one
50-passage document, then remove three documents.

    python -m tests.bench.change_bench --graphs /tmp/scale3/kb-10000,/tmp/scale3/kb-100000

The first graph is the baseline: the last line is one JSON object keyed by graph size, each with
``add_s`` and ``remove_s`` (the mean of the three) and their ratios to the baseline's. The vectors
are the scale bench's stand-in, so the store side is measured alone.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import kgp
from kgp.stores.tracer import TraceLog

from tests.bench import by_query
from tests.bench.scale_bench import CORPUS, StandInEncoder, UnigramWriter

REMOVED = ("doc-000100.md", "doc-000200.md", "doc-000300.md")


def measure(graph: Path, work: Path, writer: UnigramWriter) -> dict[str, float]:
    copy = work / graph.name
    shutil.copytree(graph, copy)
    added = work / f"added-{graph.name}"
    added.mkdir()
    text = " ".join(writer.sentences(50, writer.topic(7)))
    (added / "added.md").write_text("# Added\n\n" + text)
    log = TraceLog()
    with kgp.open(data_dir=copy, loaded_encoder=StandInEncoder()) as kg:
        passages = kg.stats().labels.get("Passage", 0)
        kg.store.tracer = log
        began = time.perf_counter()
        kg.add(added / "added.md")
        add_s = time.perf_counter() - began
        print(f"{graph.name} ({passages} passages): add {add_s:.3f} s: {by_query(log)}")
        log.events.clear()
        began = time.perf_counter()
        for doc_id in REMOVED:
            if not kg.remove(doc_id):
                raise SystemExit(f"{graph}: no document {doc_id}; give graphs scale_bench wrote")
        remove_s = (time.perf_counter() - began) / len(REMOVED)
        print(f"{graph.name}: remove {remove_s:.3f} s each: {by_query(log)}")
    shutil.rmtree(copy)
    return {"passages": passages, "add_s": round(add_s, 3), "remove_s": round(remove_s, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", required=True, help="data directories, the baseline first")
    args = parser.parse_args()
    graphs = [Path(g) for g in args.graphs.split(",")]
    writer = UnigramWriter(CORPUS)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="kgp-change-") as work:
        for graph in graphs:
            found = measure(graph, Path(work), writer)
            results[str(found["passages"])] = found
    base = next(iter(results.values()))
    for found in results.values():
        found["add_ratio"] = round(found["add_s"] / base["add_s"], 2)
        found["remove_ratio"] = round(found["remove_s"] / base["remove_s"], 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""The default retriever's latency against dense retrieval's, question by question in one
process: each question is asked of both, which goes first alternating, so a machine whose
speed drifts slows both alike. ``kgp eval``
asks its questions the same way; this bench also gives the median of the per-question ratios
and runs on any checkout (to compare code versions on one machine).

    python -m tests.bench.latency_bench [--sets musique hotpotqa 2wiki]
        [--retriever kgp-tfidf] [--data-dir DIR]

Each set's dev questions are asked once of the graph ``kgp eval`` builds for them (kept under
``--data-dir``: a second run skips the build); a question asked again would be answered from
the retriever's caches (its vector, its passages), which dense retrieval does not keep. Printed
per set: the p50 and p95 of dense and of the retriever in ms, the ratio of their p50s, the
median of the per-question ratios, and the retriever's store calls per question.
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial
from pathlib import Path

import kgp
from kgp.baselines import make_runner
from kgp.corpus_graph import graph_key, shared_target
from kgp.qa import load_qa
from kgp.settings import load_settings

from tests.bench.retrieval_bench import FILES, QA, graphs_root


def bench_set(name: str, retriever: str, root: Path) -> dict[str, float]:
    questions, _ = FILES[("dev", name)]
    items = [item for item in load_qa(QA / questions) if item.gold]
    settings = load_settings(knn_k=5)
    target = shared_target(
        partial(kgp.open, knn_k=5), root, items, f"{name}-dev", [], graph_key(settings)
    )
    kg = target.kg
    try:
        runners = {"dense": make_runner(kg, "dense", 30), retriever: make_runner(kg, retriever, 30)}
        calls: list[int] = []
        for case in target.cases[:3]:  # models loaded (these three are not timed)
            for run in runners.values():
                run(case.item.question, case.gold)
        times: dict[str, list[float]] = {name: [] for name in runners}
        ratios = []
        for n, case in enumerate(target.cases[3:]):
            order = list(runners) if n % 2 == 0 else list(reversed(runners))
            took = {}
            for which in order:
                with kg.store.counting() as counted:
                    started = time.perf_counter()
                    runners[which](case.item.question, case.gold)
                    took[which] = time.perf_counter() - started
                if which == retriever:
                    calls.append(counted())
            for which, seconds in took.items():
                times[which].append(1000 * seconds)
            ratios.append(took[retriever] / took["dense"])
    finally:
        kg.close()

    def p(values: list[float], q: int) -> float:
        return statistics.quantiles(values, n=100)[q - 1]

    dense, other = times["dense"], times[retriever]
    return {
        "dense_p50": statistics.median(dense),
        "dense_p95": p(dense, 95),
        "p50": statistics.median(other),
        "p95": p(other, 95),
        "ratio_of_p50": statistics.median(other) / statistics.median(dense),
        "median_ratio": statistics.median(ratios),
        "store_calls": sum(calls) / len(calls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa", "2wiki"])
    parser.add_argument("--retriever", default="kgp-tfidf", help="a kgp eval name")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    with graphs_root(args.data_dir) as root:
        figures = {name: bench_set(name, args.retriever, root) for name in args.sets}
    print(
        f"\nset        dense p50  p95   {args.retriever} p50  p95   p50/dense  "
        "median ratio  store calls"
    )
    for name, row in figures.items():
        print(
            f"{name:9s} {row['dense_p50']:8.1f} {row['dense_p95']:5.1f}   "
            f"{row['p50']:12.1f} {row['p95']:5.1f}   {row['ratio_of_p50']:8.2f}  "
            f"{row['median_ratio']:12.2f}  {row['store_calls']:11.2f}"
        )


if __name__ == "__main__":
    main()

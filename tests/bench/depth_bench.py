"""What a vector search's depth costs on a large graph, and what the add's k-NN floor buys: two
questions about the add at 1M (docs/benchmarks.md, Scale, "Per-query depth and the add's floor").

    KGP_VECTOR_EF=16 python -m tests.bench.depth_bench --graph DIR
        [--depths 16,64,256,1024,2048,4096,8192] [--budgets 16,80,400,16,80,400] [--questions 100]

``--graph`` is a graph the scale bench left (``--work-dir``/kb-SIZE, built with its stand-in
vectors). Its vector index must have been built with a low efRuntime (``KGP_VECTOR_EF=16`` at the
start that builds it): HNSW keeps max(efRuntime, k) candidates, so only then does asking k
entries set the search's candidates to k, and the depths below the graph's own efRuntime can be
measured at all.

Depths: for questions made as the scale bench makes them, per vector, the time of a query that
only counts the index's answer (``count_ms``), of kgp's search asking that deep
(``nearest_ms``: ``knn_candidates_all``, which reads each entry's passage), and recall@10
against exact search over every passage vector (read from the graph once, kept in
``vectors.npz`` beside it). Compare with the same depths set as the index's efRuntime, which
the scale bench measures. Depths at or above the index's efRuntime measure the index as it is
(``--depths 1024,2048,4096 --budgets ""`` on an index of efRuntime 1,024: its recall per depth).

Budgets: the add of a new 50-passage document (as the scale bench makes it) with the k-NN
floor's budget set to each number of weak edges per new passage in turn, the first search as
deep as it is with an index of efRuntime ``--breadth`` (1,024: a graph of up to 800k); each
add's store queries and each k-NN query (vectors, the depth each asked, seconds). The graph
is left as it was found, but for the vectors of the removed adds, which FalkorDB 4.16 keeps in
the index until the next start.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import kgp
import numpy as np
from kgp.access import ADMIN_CALLER
from kgp.ingest import edges
from kgp.stores.tracer import TraceLog

from tests.bench import by_query
from tests.bench.scale_bench import (
    CORPUS,
    StandInEncoder,
    UnigramWriter,
    every_vector,
    questions_from,
    write_added,
)

COUNT_ONLY = (
    "UNWIND $rows AS r CALL db.idx.vector.queryNodes('Passage', 'embedding', r.limit, "
    "vecf32(r.vector)) YIELD node, score RETURN r.i AS i, count(*) AS n"
)


class KnnLog:
    """Each k-NN query a store makes: its vectors, the depths they asked, its seconds."""

    def __init__(self, store: Any) -> None:
        self.calls: list[tuple[int, list[int], float]] = []
        ask = store._knn_candidates

        def logged(rows: list[dict[str, Any]]) -> list[Any]:
            began = time.perf_counter()
            found = ask(rows)
            depths = sorted(int(r["limit"]) for r in rows)
            self.calls.append((len(rows), depths, time.perf_counter() - began))
            return found

        store._knn_candidates = logged


def cached_vectors(kg: Any, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every passage's id and vector (read once: 459 s at 795k passages; then from ``cache``)."""
    if not cache.is_file():
        ids, matrix = every_vector(kg)
        np.savez(cache, ids=np.array(ids), vecs=matrix)
    kept = np.load(cache)
    return kept["ids"], kept["vecs"]


def depths(kg: Any, encoder: StandInEncoder, graph: Path, asked: list[int], count: int) -> None:
    store = kg.store
    ids, matrix = cached_vectors(kg, graph.parent / f"{graph.name}.vectors.npz")
    picks = np.random.default_rng(3).choice(len(ids), size=4 * count, replace=False)
    with store.reading_as(ADMIN_CALLER):
        found = store.passage_vectors([str(ids[i]) for i in picks])
    questions = encoder.encode(questions_from([p.text for p in found.values()], count, seed=5))
    exact = [set(ids[np.argsort(-(matrix @ q))[:10]]) for q in questions]
    for depth in asked:
        rows = [{"i": i, "vector": q.tolist(), "limit": depth} for i, q in enumerate(questions)]
        began = time.perf_counter()
        store.graph.query(COUNT_ONLY, {"rows": rows})
        count_s = time.perf_counter() - began
        with store.reading_as(ADMIN_CALLER):
            began = time.perf_counter()
            hits = store.nearest(questions.tolist(), want=10, start=depth)
            nearest_s = time.perf_counter() - began
        recall = statistics.mean(
            len(exact[i] & {pid for pid, _ in hits[i][:10]}) / 10 for i in range(count)
        )
        figures = {"depth": depth, "count_ms": round(1000 * count_s / count, 2)}
        figures |= {"nearest_ms": round(1000 * nearest_s / count, 2)}
        figures |= {"recall_at_10": round(recall, 3)}
        print(json.dumps(figures), flush=True)


def budgets(kg: Any, tried: list[float], breadth: int, work: Path) -> None:
    store = kg.store
    knn = KnnLog(store)
    store.search_breadth = lambda: breadth  # the first search's depth as at that efRuntime
    writer = UnigramWriter(CORPUS)
    path = work / "added.md"
    for budget in tried:
        edges.WEAK_PER_PASSAGE = budget
        write_added(writer, path)
        kg.remove(path.name)
        log = store.tracer = TraceLog()
        knn.calls.clear()
        began = time.perf_counter()
        kg.add(path)
        seconds = time.perf_counter() - began
        store.tracer = None
        with store.reading_as(ADMIN_CALLER):
            orphans = store.orphaned_vectors()
        print(f"budget {budget:g}: add {seconds:.2f} s, {orphans} orphans; {by_query(log)}")
        for vectors, asked, spent in knn.calls:
            middle = statistics.median(asked)
            print(
                f"  k-NN: {vectors} vectors, depth {asked[0]}-{asked[-1]} (median {middle:g})"
                f", {spent:.3f} s",
                flush=True,
            )
    kg.remove(path.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", type=Path, required=True)
    parser.add_argument("--depths", default="16,64,256,1024,2048,4096,8192")
    parser.add_argument("--budgets", default="16,80,400,16,80,400")
    parser.add_argument("--breadth", type=int, default=1024)
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    encoder = StandInEncoder()
    with kgp.open(data_dir=args.graph, loaded_encoder=encoder) as kg:
        kg.store.await_vector_index()
        with kg.store.reading_as(ADMIN_CALLER):
            built = kg.store.search_breadth()
        if built > min(int(d) for d in args.depths.split(",")):
            raise SystemExit(
                f"{args.graph}: its vector index has efRuntime {built}; stop every process using "
                "it and run again with KGP_VECTOR_EF=16 (the start builds the index again)"
            )
        asked = [int(d) for d in args.depths.split(",") if d]
        depths(kg, encoder, args.graph, asked, args.questions)
        tried = [float(b) for b in args.budgets.split(",") if b]
        if tried:  # (--budgets "": the depths alone)
            budgets(kg, tried, args.breadth, args.graph.parent)


if __name__ == "__main__":
    main()

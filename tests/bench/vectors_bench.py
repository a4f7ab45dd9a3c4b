"""Where the embedded store's vector index stops comparing every vector
(kgp.stores.falkordb.vectors):
exact search against HNSW search, per query, at growing sizes and depths.

    python -m tests.bench.vectors_bench [--sizes 5000,10000,20000,40000] [--depths 15,60,256]

The vectors: 384-dimension unit vectors around ``size / 25`` centres (documents of about 25
passages on a subject), as the graph stores them (float16 values), queries the normalised sum
of two stored vectors (a question made of two passages' words, as the scale bench asks). For
each size, the index is built once as kgp builds it (half precision, kgp's settings); printed
per depth: the median milliseconds of one query's exact search and of its HNSW search, and
HNSW's recall of the exact top ``depth``. Exact search is the better choice where
it costs about what HNSW does: ``EXACT_BELOW`` and the depth rule follow these figures. The last
line is one JSON object keyed by size, then by depth.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from kgp.stores.falkordb import vectors as kgp_vectors
from kgp.stores.model import stored_vectors

QUERIES = 50


def stand_ins(size: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, size // 25), 384))
    picked = centres[rng.integers(0, len(centres), size)]
    matrix = (picked + 1.2 * rng.standard_normal((size, 384))).astype(np.float32)
    return stored_vectors(matrix / np.linalg.norm(matrix, axis=1, keepdims=True))


def timed(index: object, queries: np.ndarray, depth: int, exact: bool) -> tuple[float, list]:
    """Median milliseconds of one query's search, and each query's keys."""
    times, found = [], []
    for query in queries:
        began = time.perf_counter()
        matches = index.search(query, depth, exact=exact, threads=1)  # type: ignore[attr-defined]
        times.append(1000 * (time.perf_counter() - began))
        found.append(set(np.asarray(matches.keys).tolist()))
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,10000,20000,40000")
    parser.add_argument("--depths", default="15,60,256")
    args = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        matrix = stand_ins(size)
        index = kgp_vectors._fitting(None, matrix)
        began = time.perf_counter()
        index.add(np.arange(1, size + 1), matrix, threads=2)
        built = time.perf_counter() - began
        rng = np.random.default_rng(1)
        pairs = matrix[rng.integers(0, size, (QUERIES, 2))].sum(axis=1)
        queries = pairs / np.linalg.norm(pairs, axis=1, keepdims=True)
        print(f"{size:,} vectors: built in {built:.1f} s")
        results[str(size)] = {}
        for depth in (int(d) for d in args.depths.split(",")):
            exact_ms, truth = timed(index, queries, depth, exact=True)
            hnsw_ms, near = timed(index, queries, depth, exact=False)
            recall = statistics.mean(len(a & b) / depth for a, b in zip(near, truth, strict=True))
            print(
                f"  depth {depth:>4}: exact {exact_ms:6.2f} ms, HNSW {hnsw_ms:6.2f} ms, "
                f"HNSW recall {recall:.3f}"
            )
            results[str(size)][str(depth)] = {
                "exact_ms": round(exact_ms, 2),
                "hnsw_ms": round(hnsw_ms, 2),
                "hnsw_recall": round(recall, 3),
            }
    print(json.dumps(results))


if __name__ == "__main__":
    main()

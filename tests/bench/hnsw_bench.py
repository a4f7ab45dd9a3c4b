"""HNSW's M (links per entry) and efConstruction (candidates per insert) against build time,
recall and search time, on the scale bench's vectors.

    python -m tests.bench.hnsw_bench (--vectors FILE | --standin) [--passages 200000]
                                     [--m 16,32] [--ef-construction 200]

``--vectors`` is the ``.npz`` of ids and vectors ``tests.bench.depth_bench`` keeps beside a
graph (KB.vectors.npz); ``--standin`` makes them as the scale bench does (its documents' sentences
and stand-in encoder, a graph of ``--passages`` plus 100: no graph needed). For each M and
efConstruction, a FalkorDB server of its own (in ``--work-dir``) gets a random ``--passages`` of
them and a vector index of that M and efConstruction (FalkorDB's default 200, kgp's; efRuntime 16,
so each query's k sets its candidates: see depth_bench); printed: the insert and build seconds,
then per k the median time of a search returning its best 10 and their recall@10 against exact
search, for two kinds of query: "pair", the normalised sum of two stored vectors (a question
made of two passages' words, as the scale bench asks), and "passage", 100 vectors held out of
the index (a new passage looking for its neighbours, as an add does); last, the server's memory.
Compare the M at equal recall: the k, and so the time, each needs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from pathlib import Path

import numpy as np
from falkordb import FalkorDB, Graph
from kgp.stores.falkor_server import EmbeddedServer
from redis.exceptions import ResponseError

from tests.bench import memory_mb
from tests.bench.scale_bench import CORPUS, StandInEncoder, UnigramWriter, write_documents

DEPTHS = (64, 256, 512, 1024, 2048, 4096)
SEARCH = (
    "CALL db.idx.vector.queryNodes('P', 'v', $k, vecf32($q)) YIELD node, score "
    "WITH node, score ORDER BY score LIMIT 10 RETURN node.i"
)


def build(graph: Graph, vectors: np.ndarray, m: int, construction: int) -> tuple[float, float]:
    """Insert the vectors, then index them; the seconds of each."""
    began = time.perf_counter()
    for at in range(0, len(vectors), 2000):
        rows = [{"i": at + j, "v": v.tolist()} for j, v in enumerate(vectors[at : at + 2000])]
        graph.query("UNWIND $rows AS r CREATE (:P {i: r.i, v: vecf32(r.v)})", {"rows": rows})
    inserted = time.perf_counter() - began
    began = time.perf_counter()
    graph.query(
        "CREATE VECTOR INDEX FOR (p:P) ON (p.v) OPTIONS {dimension: $d, "
        "similarityFunction: 'cosine', M: $m, efConstruction: $c, efRuntime: 16}",
        {"d": vectors.shape[1], "m": m, "c": construction},
    )
    status = "CALL db.indexes() YIELD label, status RETURN status"
    while not all("OPERATIONAL" in str(r[0]) for r in graph.query(status).result_set):
        time.sleep(2)
    return inserted, time.perf_counter() - began


def measure(
    graph: Graph, kind: str, stored: np.ndarray, queries: np.ndarray, arm: dict[str, int]
) -> None:
    exact = [set(np.argsort(-(stored @ q))[:10].tolist()) for q in queries]
    for k in DEPTHS:
        took, recall = [], []
        for query, truth in zip(queries, exact, strict=True):
            began = time.perf_counter()
            rows = graph.query(SEARCH, {"k": k, "q": query.tolist()}).result_set
            took.append(1000 * (time.perf_counter() - began))
            recall.append(len(truth & {row[0] for row in rows}) / 10)
        figures = arm | {"queries": kind, "k": k, "ms": round(statistics.median(took), 2)}
        print(json.dumps(figures | {"recall_at_10": round(statistics.mean(recall), 3)}))


def standin_vectors(count: int, work: Path) -> np.ndarray:
    """The scale bench's passages for a graph of ``count`` and their stand-in vectors."""
    sentences = write_documents(work / "documents", UnigramWriter(CORPUS), count)
    return StandInEncoder().encode(sentences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--vectors", type=Path)
    source.add_argument("--standin", action="store_true")
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--m", default="16,32")
    parser.add_argument("--ef-construction", default="200")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/kgp-hnsw"))
    args = parser.parse_args()
    if args.vectors:
        every = np.load(args.vectors)["vecs"]
    else:
        every = standin_vectors(args.passages + 100, args.work_dir)
        print(f"{len(every):,} stand-in vectors of the scale bench's passages", flush=True)
    rng = np.random.default_rng(11)
    picked = rng.choice(len(every), size=args.passages + 100, replace=False)
    stored, held = every[picked[: args.passages]], every[picked[args.passages :]]
    pairs = rng.choice(args.passages, size=(100, 2), replace=False)
    questions = stored[pairs[:, 0]] + stored[pairs[:, 1]]
    questions /= np.linalg.norm(questions, axis=1, keepdims=True)
    arms = [
        {"m": int(m), "ef_construction": int(c)}
        for m in args.m.split(",")
        for c in args.ef_construction.split(",")
    ]
    first_build: float | None = None  # the first arm's: the baseline of the others'
    for arm in arms:
        m, construction = arm["m"], arm["ef_construction"]
        name = f"M {m}, efConstruction {construction}"
        server = EmbeddedServer(args.work_dir / f"m{m}-c{construction}-{args.passages}")
        server.start()
        try:
            socket = str(server.socket_path)
            graph = FalkorDB(unix_socket_path=socket, socket_timeout=3600).select_graph("g")
            with contextlib.suppress(ResponseError):
                graph.delete()  # what a run before left
            inserted, built = build(graph, stored, m, construction)
            first_build = first_build or built
            print(
                f"{name}: {args.passages:,} vectors inserted in {inserted:.0f} s, "
                f"index built in {built:.0f} s ({built / first_build:.2f}x the first arm's)",
                flush=True,
            )
            measure(graph, "pair", stored, questions, arm)
            measure(graph, "passage", stored, held, arm)
            print(f"{name}: server memory {memory_mb(server.server_pid()):.0f} MB", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()

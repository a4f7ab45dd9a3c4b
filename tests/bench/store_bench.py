"""Store benchmark: write 10,000 passages (384-dimension embeddings, ~130,000 relationships) into
the embedded FalkorDB store, then expand the neighbours of 30 passages in one call per edge kind.
A plain in-process baseline (dict adjacency, numpy) does the same work in the same run. Then read
every passage's vector back as the k-NN linker does (``passage_embeddings``: kgp's reads over
RESP3, kgp.stores.falkordb.reply) against the same query read and parsed by the FalkorDB client
over RESP2 (each float sent as a string), in the same run.

    python -m tests.bench.store_bench [--docs 100] [--passages 100]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from kgp import cypher
from kgp.stores import EdgeKind, FalkorStore
from kgp.stores.falkordb.params import params_header
from kgp.stores.model import (
    DocumentGraph,
    DocumentRecord,
    PassageRecord,
    SimilarEdge,
    passage_id,
    stored_vectors,
)
from kgp.stores.rows import document_rows

DIM = 384


def corpus(docs: int, passages: int, seed: int = 0) -> list[DocumentGraph]:
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    vocabulary = [f"term{i}" for i in range(3000)]
    graphs: list[DocumentGraph] = []
    earlier: list[str] = []
    for d in range(docs):
        doc_id = f"doc{d:04d}.txt"
        vectors = stored_vectors(rng.standard_normal((passages, DIM)))  # (as a sync stores them)
        records = tuple(
            PassageRecord(
                page=1 + j // 20,
                ordinal=j,
                text=f"passage {j} of {doc_id} " + " ".join(pick.sample(vocabulary, 12)),
                embedding=tuple(vectors[j].tolist()),
                keywords=tuple(pick.sample(vocabulary, 5)),
            )
            for j in range(passages)
        )
        own = [passage_id(doc_id, j) for j in range(passages)]
        pool = earlier + own
        similar = tuple(
            SimilarEdge(source, target, round(pick.random(), 4), "knn")
            for source in own
            for target in pick.sample(pool, 5)
            if target != source
        )
        earlier.extend(own)
        record = DocumentRecord(
            doc_id, doc_id, doc_id, "0" * 64, 1000, "text", 1 + (passages - 1) // 20, "2026-11-22"
        )
        graphs.append(DocumentGraph(document=record, passages=records, similar=similar))
    return graphs


def relationship_count(rows: dict) -> int:  # type: ignore[type-arg]
    return (
        len(rows["pages"])
        + 2 * len(rows["passages"])
        + len(rows["next"])
        + len(rows["keywords"])
        + len(rows["similar"])
    )


def baseline(all_rows: list[dict], probes: list[str]) -> tuple[float, float]:  # type: ignore[type-arg]
    """Build dict adjacency + an embedding matrix in process; expand the probes."""
    started = time.perf_counter()
    similar: dict[str, list[tuple[str, float]]] = defaultdict(list)
    nxt: dict[str, list[str]] = defaultdict(list)
    by_keyword: dict[str, list[str]] = defaultdict(list)
    keywords_of: dict[str, list[str]] = defaultdict(list)
    vectors = []
    for rows in all_rows:
        for p in rows["passages"]:
            vectors.append(np.asarray(p["embedding"], dtype=np.float32))
        for e in rows["similar"]:
            similar[e["source"]].append((e["target"], e["score"]))
            similar[e["target"]].append((e["source"], e["score"]))
        for e in rows["next"]:
            nxt[e["source"]].append(e["target"])
            nxt[e["target"]].append(e["source"])
        for k in rows["keywords"]:
            by_keyword[k["term"]].append(k["passage"])
            keywords_of[k["passage"]].append(k["term"])
    np.stack(vectors)
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    found = 0
    for probe in probes:
        found += len(sorted(similar[probe], key=lambda x: -x[1])[:50]) + len(nxt[probe])
        shared: dict[str, int] = defaultdict(int)
        for term in keywords_of[probe]:
            if len(by_keyword[term]) <= 50:
                for other in by_keyword[term]:
                    if other != probe:
                        shared[other] += 1
        found += len(sorted(shared.items(), key=lambda x: -x[1])[:50])
    return write_s, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--passages", type=int, default=100)
    args = parser.parse_args()

    graphs = corpus(args.docs, args.passages)
    all_rows = [document_rows(g, DIM) for g in graphs]
    passages = sum(len(r["passages"]) for r in all_rows)
    relationships = sum(relationship_count(r) for r in all_rows)
    step = max(1, args.docs // 30)
    probes = [passage_id(f"doc{d:04d}.txt", 7) for d in range(0, args.docs, step)][:30]
    print(f"corpus: {len(graphs)} documents, {passages} passages, {relationships} relationships")

    base_write, base_expand = baseline(all_rows, probes)

    with tempfile.TemporaryDirectory() as tmp, FalkorStore(data_dir=Path(tmp)) as store:
        store.ensure_schema(DIM)
        started = time.perf_counter()
        for graph in graphs:
            store.write_documents([graph])
        write_s = time.perf_counter() - started
        counts = store.counts()
        assert counts.labels["Passage"] == passages
        assert sum(counts.relationships.values()) == relationships, counts
        store.neighbours(probes[:2])  # warm caches
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            found = store.neighbours(probes, tuple(EdgeKind), limit=50, max_df=50)
            timings.append(time.perf_counter() - started)
        expand_ms = 1000 * float(np.median(timings))
        vectors_s, client_s = vector_reads(
            store, [p["id"] for r in all_rows for p in r["passages"]]
        )

    rows_written = passages + relationships
    print(f"{'':24}{'FalkorDB':>14}{'in-process':>14}{'ratio':>9}")
    print(
        f"{'write rows/s':24}{rows_written / write_s:>14,.0f}"
        f"{rows_written / base_write:>14,.0f}{base_write / write_s:>9.3f}"
    )
    print(f"{'write seconds':24}{write_s:>14.2f}{base_write:>14.2f}")
    print(
        f"{'expand 30 nodes ms':24}{expand_ms:>14.2f}"
        f"{1000 * base_expand:>14.3f}{expand_ms / (1000 * base_expand):>9.1f}x"
    )
    print(f"neighbours found for 30 nodes (all kinds): {len(found)}")
    print(
        f"read {passages:,} vectors: {vectors_s:.2f} s over RESP3, {client_s:.2f} s by the "
        f"FalkorDB client ({client_s / vectors_s:.1f}x)"
    )


def vector_reads(store: FalkorStore, ids: list[str], batch: int = 2_000) -> tuple[float, float]:
    """Seconds to read every vector by kgp's reads, then by the FalkorDB client's (the median of
    three rounds each, alternating), checking both give the same float32s."""
    text = cypher.load("falkordb", "passage_embeddings")
    ours, theirs = [], []
    for _ in range(3):
        started = time.perf_counter()
        mine = {}
        for at in range(0, len(ids), batch):
            mine |= store.links.passage_embeddings(ids[at : at + batch])
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        client = {}
        for at in range(0, len(ids), batch):
            header = params_header({"ids": ids[at : at + batch], "caller_reads_all": True})
            client |= {row[0]: row[1] for row in store.graph.ro_query(header + text).result_set}
        theirs.append(time.perf_counter() - started)
        assert mine.keys() == client.keys() == set(ids)
        assert all(np.array_equal(np.float32(mine[i]), np.float32(client[i])) for i in ids)
    return float(np.median(ours)), float(np.median(theirs))


if __name__ == "__main__":
    main()

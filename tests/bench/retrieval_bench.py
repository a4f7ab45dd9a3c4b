"""Retrieval benchmark in the shared-corpus setting, through ``kgp.evaluate`` (the same graphs,
runners and metrics as ``kgp eval``): each QA file becomes one graph (every paragraph of every
question, deduplicated by title and text, one passage each); every question is asked against
it. Dense retrieval with the same encoder runs in the same process as the baseline, and each
retriever's median latency is given as a ratio to it.

    python -m tests.bench.retrieval_bench [--split dev] [--sets musique hotpotqa 2wiki]
        [--retrievers dense kgp-tfidf kgp-tfidf:vector ...] [--limit N] [--data-dir DIR]

A retriever is any ``kgp eval`` name: a baseline (bm25, tfidf, knn, dense, mdr) or
``kgp-SCORER[:SEEDER[:ORDER]]``. Figures per set: recall@5, recall@30, all-supporting@30,
precision@30, MRR, latency p50/p95 and store calls per question. ``--data-dir`` keeps the graphs,
so a second run skips ingest. Never tune on dev: choose settings with ``--split train``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import kgp
from kgp.evaluate import evaluate
from kgp.ingest.encoder import resolve_encoder
from kgp.settings import load_settings

REPO = Path(__file__).resolve().parents[2]
QA = REPO.parent / "shared" / "data" / "qa"
FILES = {
    ("dev", "musique"): ("dev/musique_dev.json", None),
    ("dev", "hotpotqa"): ("dev/hotpotqa_dev.json", None),
    ("dev", "2wiki"): ("dev/2wiki_dev.json", None),
    ("train", "musique"): ("train/musique_train.json", None),
    ("train", "hotpotqa"): ("train/hotpotqa_train.json", None),
    ("train", "2wiki"): ("train/2wiki_train.json", "train/2wiki_corpus.json"),
}
DEFAULT_RETRIEVERS = [
    "dense",
    "bm25",
    "knn",
    "mdr",
    "kgp-tfidf:vector",
    "kgp-tfidf",
    "kgp-hybrid",
    "kgp-embedding",
]


@contextmanager
def graphs_root(data_dir: Path | None) -> Iterator[Path]:
    """Where a bench builds its graphs: ``data_dir`` (kept for the next run), else a folder
    removed at the end; without the shared QA data, a one-line exit."""
    if not QA.is_dir():
        raise SystemExit(f"no QA data at {QA}; the shared data folder sits beside the repository")
    with tempfile.TemporaryDirectory() as tmp:
        root = data_dir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        yield root


def bench_set(args: argparse.Namespace, name: str, root: Path) -> dict[str, dict[str, float]]:
    questions, corpus = FILES[(args.split, name)]
    models = {"mdr_model": args.mdr_model or str(resolve_encoder("all-MiniLM-L6-v2"))}
    if args.t5_model:
        models["t5_model"] = args.t5_model
    started = time.perf_counter()
    result = evaluate(
        QA / questions,
        partial(kgp.open, knn_k=args.knn_k, **models),
        root,
        settings=load_settings(knn_k=args.knn_k, **models),
        retrievers=args.retrievers,
        k=args.k,
        limit=args.limit,
        corpus=QA / corpus if corpus else None,
    )
    print(
        f"{name} ({args.split}): {result.passages} passages, "
        f"{time.perf_counter() - started:.1f} s with the graph (built once under {root})",
        flush=True,
    )
    return result.summaries()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=["dev", "train"], default="dev")
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa", "2wiki"])
    parser.add_argument("--retrievers", nargs="+", default=DEFAULT_RETRIEVERS)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--knn-k", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--mdr-model", help="bi-encoder for kgp-mdr (default: the base encoder)")
    parser.add_argument("--t5-model", help="seq2seq model directory for kgp-t5")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()
    with graphs_root(args.data_dir) as root:
        figures = {name: bench_set(args, name, root) for name in args.sets}
    k = args.k
    print(
        f"\nset       retriever            recall@5 recall@{k} all@{k} prec@{k}   mrr  "
        "p50 ms  p95 ms  calls  p50/dense"
    )
    for name, rows in figures.items():
        dense = rows.get("dense", {}).get("p50_ms")
        for retriever, row in rows.items():
            ratio = f"{row['p50_ms'] / dense:.2f}" if dense else "-"
            print(
                f"{name:9s} {retriever:20s} {row['recall@5']:8.1f} {row[f'recall@{k}']:9.1f} "
                f"{row[f'all@{k}']:6.1f} {row[f'precision@{k}']:7.1f} {row['mrr']:5.1f} "
                f"{row['p50_ms']:7.1f} {row['p95_ms']:7.1f} {row['store_calls']:6.2f}  {ratio}"
            )
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

"""Retrieval benchmark in the shared-corpus setting: each QA file becomes one graph (every
paragraph of every question, deduplicated by title and text, one passage each); every question
is asked against it. Dense retrieval with the same encoder (top-k by cosine from the store's
vector index) runs in the same process as the baseline.

    python -m tests.bench.retrieval_bench [--split dev] [--sets musique hotpotqa 2wiki]
        [--configs dense hybrid+embedding hybrid+tfidf ...] [--limit N] [--data-dir DIR]

A config is ``dense`` or ``SEEDER+SCORER`` (seeder: vector, fulltext, tfidf, hybrid; scorer:
embedding, tfidf, mdr, t5, ...). Figures per set and config: recall@5, recall@30 (share of a
question's gold passages among the first k, averaged), all-supporting@30 (questions with every
gold passage in the 30), and latency p50/p95 per question. ``--data-dir`` keeps the graphs, so a
second run skips ingest. Never tune on dev: choose settings with ``--split train``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import kgp
from kgp.ingest.encoder import resolve_encoder
from kgp.qa import QaItem, SharedCorpus, load_corpus, load_qa, shared_corpus

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
DEFAULT_CONFIGS = [
    "dense",
    "vector+tfidf",
    "vector+hybrid",
    "vector+embedding",
    "hybrid+tfidf",
    "tfidf+tfidf",
    "vector+mdr",
    "vector+embedding-text",
]


@dataclass
class Figures:
    recall5: list[float] = field(default_factory=list)
    recall30: list[float] = field(default_factory=list)
    all30: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], gold: set[str], ms: float) -> None:
        self.recall5.append(len(gold & set(ranked[:5])) / len(gold))
        self.recall30.append(len(gold & set(ranked[:30])) / len(gold))
        self.all30.append(float(gold <= set(ranked[:30])))
        self.ms.append(ms)

    def row(self) -> dict[str, float]:
        ms = sorted(self.ms)
        return {
            "recall@5": round(100 * statistics.fmean(self.recall5), 1),
            "recall@30": round(100 * statistics.fmean(self.recall30), 1),
            "all@30": round(100 * statistics.fmean(self.all30), 1),
            "p50_ms": round(statistics.median(ms), 1),
            "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1),
        }


def build(split: str, name: str, limit: int | None) -> tuple[list[QaItem], SharedCorpus]:
    questions, corpus_file = FILES[(split, name)]
    items = load_qa(QA / questions, limit=limit)
    extra = load_corpus(QA / corpus_file) if corpus_file else []
    return items, shared_corpus(items, prefix=name, extra=extra)


def runner(kg: kgp.KnowledgeGraph, config: str, k: int) -> Callable[[str], list[str]]:
    if config == "dense":

        def dense(question: str) -> list[str]:
            vector = kg.encoder.encode([question])[0].tolist()
            return [hit.id for hit in kg.store.vector_search(vector, k)]

        return dense
    seeder, scorer, *order = config.split("+")
    retriever = kg.retriever(scorer=scorer, seeder=seeder, order=(order or ["question"])[0])
    return lambda question: [p.id for p in retriever.retrieve(question, k).passages]


def bench_set(args: argparse.Namespace, name: str, root: Path) -> dict[str, dict[str, float]]:
    items, corpus = build(args.split, name, args.limit)
    data_dir = root / f"{args.split}-{name}"
    models = {"mdr_model": args.mdr_model or str(resolve_encoder("all-MiniLM-L6-v2"))}
    if args.t5_model:
        models["t5_model"] = args.t5_model
    with kgp.open(data_dir=data_dir, knn_k=args.knn_k, **models) as kg:
        started = time.perf_counter()
        report = kg.sync_corpus(corpus.write(root / f"{args.split}-{name}.json"), prefix=name)
        print(
            f"{name} ({args.split}): {len(items)} questions, {len(corpus.entries)} passages; "
            f"sync {time.perf_counter() - started:.1f} s ({len(report.added)} added)",
            flush=True,
        )
        kg.encoder.encode(["warm up"])
        results: dict[str, dict[str, float]] = {}
        for config in args.configs:
            run = runner(kg, config, args.k)
            run(items[0].question)  # warm caches and the model
            figures = Figures()
            for item in items:
                gold = {corpus.ids[p] for p in item.gold}
                started = time.perf_counter()
                ranked = run(item.question)
                figures.add(ranked, gold, 1000 * (time.perf_counter() - started))
            results[config] = figures.row()
            print(f"  {config:24s} {json.dumps(results[config])}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=["dev", "train"], default="dev")
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa", "2wiki"])
    parser.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--knn-k", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--mdr-model", help="bi-encoder for mdr (default: the base encoder)")
    parser.add_argument("--t5-model", help="seq2seq model directory for t5")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()
    if not QA.is_dir():
        raise SystemExit(f"no QA data at {QA}; the shared data folder sits beside the repository")
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data_dir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        figures = {name: bench_set(args, name, root) for name in args.sets}
    print(
        "\nset       config                   recall@5 recall@30 all@30  p50 ms  p95 ms  p50/dense"
    )
    for name, rows in figures.items():
        dense = rows.get("dense", {}).get("p50_ms")
        for config, row in rows.items():
            ratio = f"{row['p50_ms'] / dense:.2f}" if dense else "-"
            print(
                f"{name:9s} {config:24s} {row['recall@5']:8.1f} {row['recall@30']:9.1f} "
                f"{row['all@30']:6.1f} {row['p50_ms']:7.1f} {row['p95_ms']:7.1f}  {ratio}"
            )
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

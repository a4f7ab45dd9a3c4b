"""Scorer throughput: candidates scored per second by the traversal's scorers, on the device the
settings pick (CUDA when there is one). Baseline in the same run: the zero-shot ``embedding``
scorer, which only reads stored vectors.

    python -m tests.bench.scorer_bench [--mdr-model DIR] [--encoder DIR] [--hops 20]
        [--device auto|cpu|cuda]

Each hop scores 10 paths of two passages against 15 candidates each (the paper's 10 seeds and
a neighbourhood per path), candidates drawn from the MuSiQue dev paragraphs. ``mdr`` is timed
cold (every candidate new to its cache) and warm (candidates seen before). ``--encoder`` (the
graph's encoder, which made the stored vectors) and ``--mdr-model`` default to the shipped model,
a fine-tuned MiniLM: the same cost as the base one.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from kgp.agents.scorers import EmbeddingScorer, MdrScorer, TfidfScorer
from kgp.ingest.embedding import Encoder
from kgp.model import SHIPPED_MODEL
from kgp.qa import load_qa
from kgp.training import passage_text

REPO = Path(__file__).resolve().parents[2]
DEV = REPO.parent / "shared" / "data" / "qa" / "dev" / "musique_dev.json"


def timed(score: Callable[..., list[list[float]]], hops: list[tuple[str, list, list]]) -> float:
    started = time.perf_counter()
    scored = 0
    for question, paths, candidates in hops:
        rows = score(question, paths, candidates)
        scored += sum(len(r) for r in rows)
    return scored / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mdr-model", default=SHIPPED_MODEL)
    parser.add_argument("--encoder", default=SHIPPED_MODEL)
    parser.add_argument("--hops", type=int, default=20)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    if not DEV.is_file():
        raise SystemExit(f"no QA data at {DEV}; the shared data folder sits beside the repository")
    items = load_qa(DEV)
    texts = {
        f"p{n}": passage_text(p) for n, p in enumerate({p for i in items for p in i.paragraphs})
    }
    ids = sorted(texts)
    base = Encoder(model=args.encoder, device=args.device).load()
    vectors = dict(zip(ids, base.encode([texts[i] for i in ids]), strict=True))
    rng = random.Random(7)

    def hop(n: int) -> tuple[str, list[tuple[str, ...]], list[list[str]]]:
        question = items[n % len(items)].question
        paths = [tuple(rng.sample(ids, 2)) for _ in range(10)]
        return question, paths, [rng.sample(ids, 15) for _ in paths]

    hops = [hop(n) for n in range(args.hops)]

    def get_texts(wanted: Sequence[str]) -> dict[str, str]:
        return {i: texts[i] for i in wanted}

    def get_vectors(wanted: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: vectors[i] for i in wanted}

    mdr_encoder = Encoder(model=args.mdr_model, device=args.device).load()
    scorers: dict[str, Callable[..., list[list[float]]]] = {
        "embedding (baseline)": EmbeddingScorer(base.encode, get_texts, get_vectors),
        "tfidf": TfidfScorer(get_texts),
        "embedding-text": EmbeddingScorer(base.encode, get_texts, get_vectors, encode_paths=True),
    }
    mdr = MdrScorer(mdr_encoder.encode, get_texts)
    timed(scorers["embedding (baseline)"], hops[:2])  # warm up
    results = {name: timed(score, hops) for name, score in scorers.items()}
    results["mdr (cold cache)"] = timed(mdr, hops)
    results["mdr (warm cache)"] = timed(mdr, hops)
    baseline = results["embedding (baseline)"]
    device = base._model.device if base._model is not None else "?"
    print(f"scorer throughput on {device}, {args.hops} hops of 10 paths x 15 candidates")
    for name, rate in results.items():
        print(f"  {name:22s} {rate:10.0f} candidates/s   {rate / baseline:6.3f} x baseline")


if __name__ == "__main__":
    main()

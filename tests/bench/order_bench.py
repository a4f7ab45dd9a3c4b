"""The ``linked`` order's weight of a passage's own cosine over its partner's (``own``), swept
in the shared-corpus setting through ``kgp.evaluate`` (the graphs, runners and metrics of
``kgp eval``): the default retriever with the ``linked`` order (``kgp-tfidf:hybrid:linked``:
hybrid seeds, the tfidf scorer) is run once per weight on every set. 0 is the pair's score
alone (both passages of the best pair tie); 1 is each passage's own cosine plus half the link
bonus.

    python -m tests.bench.order_bench [--split train] [--weights 0 0.25 0.5 0.75 1]
        [--sets musique hotpotqa 2wiki] [--data-dir DIR]

Printed per set and weight: recall@1, @2, @5, @30, all-supporting@30 and MRR; then each
weight's mean over the sets. Choose on ``--split train``; report ``--split dev``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import kgp
from kgp.agents import orderings
from kgp.evaluate import evaluate
from kgp.settings import load_settings

from tests.bench.retrieval_bench import FILES, QA

LINKED = orderings.linked
RETRIEVER = "kgp-tfidf:hybrid:linked"
COLUMNS = ("recall@1", "recall@2", "recall@5", "recall@30", "all@30", "mrr")


def sweep(split: str, name: str, weights: list[float], root: Path) -> dict[float, dict[str, Any]]:
    questions, corpus = FILES[(split, name)]
    out = {}
    for weight in weights:
        # the retriever takes the order registered as "linked" from the module when it is made
        orderings.linked = partial(LINKED, own=weight)  # type: ignore[assignment]
        result = evaluate(
            QA / questions,
            partial(kgp.open, knn_k=5),
            root,
            settings=load_settings(knn_k=5),
            retrievers=[RETRIEVER],
            k=30,
            corpus=QA / corpus if corpus else None,
        )
        out[weight] = result.summaries()[RETRIEVER]
        row = "  ".join(f"{out[weight][c]:5.1f}" for c in COLUMNS)
        print(f"{name:9s} {weight:4.2f}  {row}  p50 {out[weight]['p50_ms']:.1f} ms", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=["dev", "train"], default="train")
    parser.add_argument("--sets", nargs="+", default=["musique", "hotpotqa", "2wiki"])
    parser.add_argument("--weights", nargs="+", type=float, default=[0, 0.25, 0.5, 0.75, 1])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()
    print("set       own    " + "  ".join(f"{c:>5s}" for c in COLUMNS))
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data_dir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        try:
            figures = {name: sweep(args.split, name, args.weights, root) for name in args.sets}
        finally:
            orderings.linked = LINKED
    print("\nmean over the sets")
    for weight in args.weights:
        means = [sum(figures[n][weight][c] for n in args.sets) / len(args.sets) for c in COLUMNS]
        print(f"{'all':9s} {weight:4.2f}  " + "  ".join(f"{m:5.1f}" for m in means))
    if args.out:
        args.out.write_text(
            json.dumps({n: {str(w): r for w, r in f.items()} for n, f in figures.items()}, indent=1)
        )


if __name__ == "__main__":
    main()

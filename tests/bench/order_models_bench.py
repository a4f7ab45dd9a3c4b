"""Final orders compared on what the default retriever finds: the shipped logistic model over
``kgp.agents.learned.FEATURES`` against richer signals and gradient-boosted trees (decision
0004, "Tried and not taken").

    python -m tests.bench.order_models_bench [--data-dir DIR] [--pdfs DIR]

Each question of the three train files (one graph with the 2Wiki corpus, as ``kgp train
order`` builds it) and of each dev file (a graph per file, as ``kgp eval`` builds it) is
retrieved once with the ``linked`` order; its passages' signals and vectors are kept under
``--data-dir`` (a second run reads them). Every model is fitted on train only; its settings
are chosen by a three-fold cross-validation over the train questions (never on dev). Printed
per model: the cross-validated train figures and each dev set's, recall@1 / @2 / @5 / MRR.
``--pdfs DIR`` (a data directory where the real PDFs were synced, ``kgp --data-dir DIR sync
PDFS``) also runs ``kgp eval tests/fixtures/real_pdfs_qa.jsonl`` there with each model as the
final order: recall@1, recall@5, the answer first (hit@1) and MRR.

The extra signals: ``chain`` (the best, over the other passages, of their cosine with the
question plus their cosine with this one) and its gap to the best; ``hop2`` (the cosine with
the question's vector plus the first passage's, MDR's next-hop query made of vectors, no
encoder call) and its gap; ``simtop`` (the cosine with the passage most similar to the
question). Gradient-boosted trees are scikit-learn's ``HistGradientBoostingClassifier`` (in
the environment through sentence-transformers; a bench-only use).
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import statistics
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import kgp
import numpy as np
from kgp import metrics
from kgp.agents import learned, retriever
from kgp.corpus_graph import graph_key, shared_target
from kgp.evaluate import evaluate
from kgp.qa import load_corpus, load_qa
from kgp.settings import load_settings
from kgp.training.order import Example, fit

from tests.bench.retrieval_bench import FILES, QA, graphs_root

REPO = Path(__file__).resolve().parents[2]
SETS = ("musique", "hotpotqa", "2wiki")
EXTRAS = {
    "+chain": ("chain", "chaingap"),
    "+hop2": ("hop2", "hop2gap"),
    "+chaingap,hop2gap,simtop": ("chaingap", "hop2gap", "simtop"),
}
Score = Callable[[np.ndarray], np.ndarray]  # a question's signal rows -> a score each


def retrieved(kg: Any, cases: Sequence[Any], sources: Sequence[str]) -> list[dict[str, Any]]:
    """What the final order reads of each question, with the question's and passages' vectors."""
    running = kg.retriever(scorer="tfidf", order="linked")
    rows = []
    for source, case in zip(sources, cases, strict=True):
        found = running.evidence(case.item.question, 30)
        ids, matrix = learned.features(found)
        vectors = running.passages.vectors(ids)
        rows.append(
            {
                "set": source,
                "ids": ids,
                "X": matrix,
                "units": case.gold,
                "q": np.asarray(running.services.embed([case.item.question])[0]),
                "V": np.vstack([vectors[i] for i in ids]) if ids else np.zeros((0, 1)),
            }
        )
    return rows


def dumped(root: Path, name: str, files: Sequence[Path], corpus: Path | None) -> list[dict]:
    """The retrieved passages of ``files``' questions on their shared graph (kept in ``root``)."""
    kept = root / f"order-{name}.pickle"
    if kept.exists():
        return pickle.loads(kept.read_bytes())
    items, sources = [], []
    for path in files:
        chosen = [item for item in load_qa(path) if item.gold]
        items += chosen
        sources += [path.stem] * len(chosen)
    extra = load_corpus(corpus) if corpus else []
    settings = load_settings(knn_k=5)
    target = shared_target(
        partial(kgp.open, knn_k=5), root, items, name, extra, graph_key(settings)
    )
    try:
        rows = retrieved(target.kg, target.cases, sources)
    finally:
        target.kg.close()
    kept.write_bytes(pickle.dumps(rows))
    return rows


def signals(row: dict[str, Any], extras: Sequence[str]) -> np.ndarray:
    """The row's FEATURES and the named extra signals, a column each."""
    matrix, vectors, question = row["X"], row["V"], row["q"]
    if not extras or not len(matrix):
        return matrix if not extras else np.zeros((0, matrix.shape[1] + len(extras)))
    cosine = matrix[:, 0]
    pairs = vectors @ vectors.T
    np.fill_diagonal(pairs, -np.inf)
    top = int(np.argmax(cosine))
    chain = (cosine[None, :] + pairs).max(axis=1) if len(cosine) > 1 else cosine.copy()
    query = question + vectors[top]
    hop2 = vectors @ (query / np.linalg.norm(query))
    hop2[top] = cosine[top]
    simtop = pairs[:, top].copy()
    simtop[top] = 1.0
    columns = {
        "chain": chain,
        "chaingap": chain - chain.max(),
        "hop2": hop2,
        "hop2gap": hop2 - hop2.max(),
        "simtop": simtop,
    }
    return np.column_stack([matrix, *(columns[name] for name in extras)])


def figures(rows: Sequence[dict[str, Any]], score: Score, extras: Sequence[str]) -> list[float]:
    """Recall@1, @2, @5 and MRR (percent) of the rows ranked by ``score``."""
    totals = np.zeros(4)
    for row in rows:
        matrix = signals(row, extras)
        scores = score(matrix) if len(matrix) else np.zeros(0)
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], -matrix[i, 0]))
        ids = [row["ids"][i] for i in ranked]
        units = row["units"]
        totals += [
            *(metrics.recall(units, ids, k) for k in (1, 2, 5)),
            metrics.reciprocal_rank(units, ids),
        ]
    return list(100 * totals / max(1, len(rows)))


def logistic(rows: Sequence[dict[str, Any]], extras: Sequence[str], **_: Any) -> Score:
    examples = [Example(r["set"], r["ids"], signals(r, extras), r["units"]) for r in rows]
    return fit(examples).logits


def trees(rows: Sequence[dict[str, Any]], extras: Sequence[str], **settings: Any) -> Score:
    from sklearn.ensemble import HistGradientBoostingClassifier

    matrix = np.vstack([signals(r, extras) for r in rows])
    gold = np.concatenate([Example(r["set"], r["ids"], r["X"], r["units"]).gold for r in rows])
    model = HistGradientBoostingClassifier(random_state=0, early_stopping=False, **settings)
    model.fit(matrix, gold)
    return model.decision_function


TREE_GRID = [
    {"max_iter": n, "learning_rate": 0.05, "max_leaf_nodes": leaves, "min_samples_leaf": least}
    for n, leaves, least in itertools.product((100, 300), (4, 8, 16), (20, 200))
]


def cross_validated(
    train: list[dict], make: Callable[..., Score], extras: Sequence[str], **kw: Any
) -> list[float]:
    """The train figures of three fits, each on two thirds of the questions, scored on the rest."""
    folds = []
    for fold in range(3):
        fitted = make([r for i, r in enumerate(train) if i % 3 != fold], extras, **kw)
        folds.append(figures([r for i, r in enumerate(train) if i % 3 == fold], fitted, extras))
    return [statistics.mean(values) for values in zip(*folds, strict=True)]


def on_pdfs(data_dir: Path, score: Score, extras: Sequence[str]) -> dict[str, float]:
    """``kgp eval`` of the real-PDF questions in ``data_dir`` with ``score`` as the final order."""
    opened: list[Any] = []

    def open_graph(**overrides: Any) -> Any:
        opened.append(kgp.open(data_dir=data_dir, **overrides))
        return opened[-1]

    class Order:
        def __call__(self, found: Any) -> Any:
            ids, matrix = learned.features(found)
            if extras and ids:
                running = opened[-1].retriever(scorer="tfidf")  # (the one eval runs)
                held = running.passages.vectors(ids)
                row = {
                    "X": matrix,
                    "V": np.vstack([held[i] for i in ids]),
                    "q": running.services.embed([found.question])[0],
                }
                matrix = signals(row, extras)
            scores = score(matrix) if ids else np.zeros(0)
            order = sorted(range(len(ids)), key=lambda i: (-scores[i], -matrix[i, 0], ids[i]))
            rest = [pid for pid in found.walk.ids() if pid not in found.cosine]
            return [(ids[i], float(scores[i])) for i in order] + [(pid, -1e9) for pid in rest]

    shipped = learned.shipped_order
    # (the retriever took its own name for it when it was imported)
    learned.shipped_order = retriever.shipped_order = lambda folder=None: Order()  # type: ignore[assignment]
    try:
        result = evaluate(
            REPO / "tests" / "fixtures" / "real_pdfs_qa.jsonl",
            open_graph,
            data_dir,
            retrievers=["kgp-tfidf"],
            k=30,
        )
    finally:
        learned.shipped_order = retriever.shipped_order = shipped  # type: ignore[assignment]
    return result.summaries()["kgp-tfidf"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--pdfs", type=Path, default=None, help="a data dir with the PDFs synced")
    args = parser.parse_args()
    with graphs_root(args.data_dir) as root:
        train_files = [QA / FILES[("train", s)][0] for s in SETS]
        train = dumped(root, "train", train_files, QA / "train" / "2wiki_corpus.json")
        dev = {s: dumped(root, f"{s}-dev", [QA / FILES[("dev", s)][0]], None) for s in SETS}
        candidates: list[tuple[str, Callable[..., Score], tuple[str, ...], dict]] = [
            ("logistic (shipped signals)", logistic, (), {}),
            *((f"logistic {name}", logistic, extra, {}) for name, extra in EXTRAS.items()),
        ]
        for name, extras in [("", ()), *EXTRAS.items()]:
            best = max(TREE_GRID, key=lambda kw: sum(cross_validated(train, trees, extras, **kw)))
            candidates.append((f"trees {name}".strip() + f" {best}", trees, extras, best))
        print("model | train (3-fold) | " + " | ".join(f"{s} dev" for s in SETS) + " | pdfs")
        linked: Score = lambda matrix: matrix[:, 2]  # noqa: E731 (the pair score)
        print(
            "linked | "
            + " | ".join(
                " / ".join(f"{v:.1f}" for v in figures(rows, linked, ()))
                for rows in [train, *dev.values()]
            )
        )
        for name, make, extras, kw in candidates:
            cells = [cross_validated(train, make, extras, **kw)]
            fitted = make(train, extras, **kw)
            cells += [figures(rows, fitted, extras) for rows in dev.values()]
            line = " | ".join(" / ".join(f"{v:.1f}" for v in cell) for cell in cells)
            if args.pdfs:
                pdf = on_pdfs(args.pdfs, fitted, extras)
                line += " | " + " / ".join(
                    f"{pdf[m]:.1f}" for m in ("recall@1", "recall@5", "hit@1", "mrr")
                )
            print(f"{name} | {line}", flush=True)


if __name__ == "__main__":
    main()

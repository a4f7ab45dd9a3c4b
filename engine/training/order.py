"""``kgp train order``: the weights of the learned final order (:mod:`kgp.agents.learned`), fitted
on the shared graph of the training questions (built once under ``DATA_DIR/eval``, as ``kgp
eval`` builds it), and on questions in kgp's own format asked of a graph of the folder of
documents they refer to. Each question is retrieved as the default
retriever does (hybrid seeds, the tfidf scorer, K passages); every retrieved passage is one
example, labelled by whether it is gold; the model is an L2-regularised logistic regression
fitted by Newton's method in float64, so the same data give the same weights, written with six
decimals and a card (``README.md``, ``training.json`` with every file's sha256), as
``kgp-order`` ships."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from kgp import metrics
from kgp.errors import TrainingError
from kgp.training.loop import Progress, print_to_stderr
from kgp.training.questions import (
    check_documents,
    documents_graph,
    own_format,
    refuse_existing,
    training_graph,
)

if TYPE_CHECKING:
    from kgp.agents.learned import LearnedOrder

L2 = 1.0  # chosen on train/ with the signals (docs/decisions/0004-the-learned-order.md)


@dataclass(frozen=True, slots=True)
class Example:
    """One question's retrieved passages (``ids``), their features (a row each) and the
    question's supporting units (the passage ids that count for each, as ``kgp.metrics``
    reads them)."""

    dataset: str
    ids: list[str]
    matrix: np.ndarray
    units: list[list[str]]

    @property
    def gold(self) -> np.ndarray:
        """1.0 where the passage is gold."""
        relevant = {pid for unit in self.units for pid in unit}
        return np.asarray([float(pid in relevant) for pid in self.ids])


@dataclass(frozen=True, slots=True)
class OrderReport:
    questions: int
    examples: int
    figures: dict[str, dict[str, dict[str, float]]]  # dataset -> order -> metric
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def train_order(
    paths: Sequence[Path],
    factory: Callable[..., Any],
    root: Path,
    output: Path,
    *,
    settings: Any,
    corpora: Sequence[Path] = (),
    documents: Path | None = None,
    k: int = 30,
    overwrite: bool = False,
    progress: Progress = print_to_stderr,
) -> OrderReport:
    """Fit the learned order's weights on ``paths`` and write them to the folder ``output``;
    files in kgp's own format among ``paths`` are asked of the graph of ``documents``."""
    started = time.perf_counter()
    refuse_existing(output, overwrite)
    native, own = own_format(paths)
    check_documents(own, documents)
    examples: list[Example] = []
    if native:
        target, sources = training_graph(
            "order",
            native,
            factory,
            root,
            output,
            settings=settings,
            corpora=corpora,
            overwrite=overwrite,
            progress=progress,
        )
        examples += _retrieved(target, sources, k, progress)
    if own and documents is not None:
        target, sources = documents_graph(
            "order", own, documents, factory, root, settings=settings, progress=progress
        )
        examples += _retrieved(target, sources, k, progress)
    if not examples:
        raise TrainingError("no training questions with gold passages")
    order = fit(examples)
    figures = {
        dataset: {
            "linked": ranking_figures([e for e in examples if e.dataset == dataset], None),
            "learned": ranking_figures([e for e in examples if e.dataset == dataset], order),
        }
        for dataset in dict.fromkeys(e.dataset for e in examples)
    }
    examples_in_all = sum(len(e.ids) for e in examples)
    report = OrderReport(len(examples), examples_in_all, figures, time.perf_counter() - started)
    write_model(output, order, report, paths, corpora if native else (), documents, k)
    return report


def _retrieved(target: Any, sources: Sequence[str], k: int, progress: Progress) -> list[Example]:
    """Each case of ``target`` retrieved as the default retriever does (the ``linked`` order:
    the features do not depend on the order), as an example; the graph closed after."""
    from kgp.agents.learned import features

    examples = []
    try:
        retriever = target.kg.retriever(scorer="tfidf", order="linked")
        for n, (dataset, case) in enumerate(zip(sources, target.cases, strict=True), 1):
            ids, matrix = features(retriever.evidence(case.item.question, k))
            examples.append(Example(dataset, ids, matrix, case.gold))
            if n % 100 == 0:
                progress(f"order: {n} of {len(sources)} questions of the graph retrieved")
    finally:
        target.kg.close()
    return examples


def fit(examples: Sequence[Example], l2: float = L2, steps: int = 100) -> LearnedOrder:
    """The logistic regression (features standardised over every example) by Newton's method."""
    from kgp.agents.learned import LearnedOrder

    matrix = np.vstack([e.matrix for e in examples])
    gold = np.concatenate([e.gold for e in examples])
    if not gold.any() or gold.all():
        raise TrainingError("the retrieved passages are all gold or all not: nothing to fit")
    mean = matrix.mean(axis=0)
    scale = matrix.std(axis=0)
    scale[scale == 0] = 1.0  # a constant feature (no links in the data) weighs nothing
    design = np.hstack([(matrix - mean) / scale, np.ones((len(matrix), 1))])
    weights = np.zeros(design.shape[1])
    penalty = l2 * np.eye(len(weights))
    penalty[-1, -1] = 0.0  # the bias is not shrunk
    for _ in range(steps):
        chance = 1.0 / (1.0 + np.exp(-design @ weights))
        gradient = design.T @ (chance - gold) + penalty @ weights
        hessian = (design * (chance * (1 - chance))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-12:
            break

    def rounded(values: np.ndarray) -> tuple[float, ...]:
        return tuple(round(float(v), 6) for v in values)

    return LearnedOrder(rounded(mean), rounded(scale), rounded(weights[:-1]), rounded(weights)[-1])


def ranking_figures(examples: Sequence[Example], order: LearnedOrder | None) -> dict[str, float]:
    """Recall@1, @2, @5 and MRR (percent) of the examples ranked by ``order``'s logits, or by
    the linked order's pair score (feature 2) when ``order`` is None; ties by cosine."""
    totals = {"recall@1": 0.0, "recall@2": 0.0, "recall@5": 0.0, "mrr": 0.0}
    for example in examples:
        matrix = example.matrix
        scores = order.logits(matrix) if order is not None else matrix[:, 2]
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], -matrix[i, 0]))
        retrieved = [example.ids[i] for i in ranked]
        for j in (1, 2, 5):
            totals[f"recall@{j}"] += metrics.recall(example.units, retrieved, j)
        totals["mrr"] += metrics.reciprocal_rank(example.units, retrieved)
    return {key: round(100 * value / max(1, len(examples)), 1) for key, value in totals.items()}


def write_model(
    output: Path,
    order: LearnedOrder,
    report: OrderReport,
    paths: Sequence[Path],
    corpora: Sequence[Path],
    documents: Path | None,
    k: int,
) -> None:
    """The weights, ``training.json`` (everything but timings, so a rerun is byte-identical)
    and the card."""
    from kgp.agents.learned import FEATURES, WEIGHTS_FILE

    output.mkdir(parents=True, exist_ok=True)
    weights = order.to_json()
    (output / WEIGHTS_FILE).write_text(weights, encoding="utf-8")
    card = {
        "kind": "order",
        "base": f"logistic regression over {len(FEATURES)} retrieval signals",
        "data": [str(p) for p in [*paths, *corpora, *([documents] if documents else [])]],
        "retriever": f"kgp-tfidf (hybrid seeds, tfidf scorer), k = {k}",
        "l2": L2,
        "questions": report.questions,
        "examples": report.examples,
        "train_figures": report.figures,
        "command": shlex.join(["kgp", *sys.argv[1:]]),
        "files": {WEIGHTS_FILE: hashlib.sha256(weights.encode("utf-8")).hexdigest()},
    }
    (output / "training.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    (output / "README.md").write_text(_card_text(card, order), encoding="utf-8")


def _card_text(card: dict[str, Any], order: LearnedOrder) -> str:
    from kgp.agents.learned import FEATURES, WEIGHTS_FILE
    from kgp.training.report import describe_data

    data = "\n".join(f"  - {describe_data(path)}" for path in card["data"])
    rows = "\n".join(
        f"| {name} | {weight:+.3f} |" for name, weight in zip(FEATURES, order.weights, strict=True)
    )
    figures = "\n".join(
        f"| {dataset} | {which} | "
        + " | ".join(f"{values[m]:.1f}" for m in ("recall@1", "recall@2", "recall@5", "mrr"))
        + " |"
        for dataset, orders in card["train_figures"].items()
        for which, values in orders.items()
    )
    return f"""# kgp-order

The weights of kgp's default final order (`learned`, `kgp.agents.learned`): a logistic
regression that scores each retrieved passage on its own from {len(FEATURES)} signals kgp
already has. Turn it off with `KGP_ORDER=linked`.

- **Made by**:
  `{card["command"]}`
- **Data** (no dev or test split):
{data}
- **Examples**: every passage the default retriever finds for each question, labelled gold or
  not: {card["examples"]} from {card["questions"]} questions; {card["retriever"]}; L2 {card["l2"]}
- **Files**: `{WEIGHTS_FILE}` (sha256 in `training.json`, checked by `kgp doctor`)

Weights (on standardised signals):

| signal | weight |
| --- | --- |
{rows}

On the training questions (held-out figures: docs/benchmarks.md, "The learned order"):

| set | order | recall@1 | recall@2 | recall@5 | MRR |
| --- | --- | --- | --- | --- | --- |
{figures}
"""

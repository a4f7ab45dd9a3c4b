"""``kgp train gnn``: GNN-Ret's alpha (and RGNN-Ret's beta, from MuSiQue's sub-questions) fitted
with the paper's hinge objective on the shared graph of the training questions, built once as
``kgp eval`` builds it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgp.training.loop import Progress, print_to_stderr
from kgp.training.questions import training_graph
from kgp.training.report import GnnReport


def train_gnn(
    paths: Sequence[Path],
    factory: Callable[..., Any],
    root: Path,
    output: Path,
    *,
    settings: Any,
    corpora: Sequence[Path] = (),
    top_k: int = 5,
    competitors: int = 25,
    margin: float = 0.01,
    overwrite: bool = False,
    progress: Progress = print_to_stderr,
) -> GnnReport:
    """Fit GNN-Ret's α on the shared graph of ``paths`` (built once under ``root/eval``, as
    ``kgp eval`` builds it) with the hinge objective; write the parameters to ``output``."""
    from kgp.agents.gnn import GnnParams, GnnRetriever
    from kgp.agents.gnn_fit import fit, fit_beta, sample_for

    started = time.perf_counter()
    target, _ = training_graph(
        "gnn",
        paths,
        factory,
        root,
        output,
        settings=settings,
        corpora=corpora,
        overwrite=overwrite,
        progress=progress,
    )
    try:
        start = GnnParams(top_k=top_k)
        gnn = GnnRetriever(target.kg.store, target.kg.encoder.encode, start)
        samples = [
            sample_for(gnn, case.item.question, {pid for unit in case.gold for pid in unit})
            for case in target.cases
        ]
        fitted, losses = fit(samples, start, r=margin, competitors=competitors)
        # RGNN-Ret's beta from the questions that come with sub-questions (MuSiQue): per step,
        # the gold of that step and the later ones (Eq. 7)
        ids = [
            (
                case,
                {
                    paragraph: pid
                    for unit, paragraph in zip(case.gold, case.item.gold, strict=True)
                    for pid in unit
                },
            )
            for case in target.cases
            if case.item.steps
        ]
        fitted_gnn = GnnRetriever(target.kg.store, target.kg.encoder.encode, fitted)
        recurrent = [
            [
                sample_for(
                    fitted_gnn,
                    sub,
                    {by_paragraph[p] for _, p in case.item.steps[t:] if p in by_paragraph},
                )
                for t, (sub, _) in enumerate(case.item.steps)
            ]
            for case, by_paragraph in ids
        ]
        beta_losses: dict[float, float] = {}
        if recurrent:
            fitted, beta_losses = fit_beta(recurrent, fitted, r=margin)
    finally:
        target.kg.close()
    progress(
        f"gnn: alpha {fitted.alphas[0]} after {len(losses)} iterations, loss "
        f"{losses[0] if losses else 0} -> {losses[-1] if losses else 0}"
    )
    if beta_losses:
        progress(
            f"rgnn: beta {fitted.beta} from {len(recurrent)} questions with sub-questions, "
            f"loss {beta_losses[fitted.beta]} (at 0.9: {beta_losses.get(0.9)})"
        )
    params = replace(fitted, trained_on=[str(p) for p in paths])
    output.parent.mkdir(parents=True, exist_ok=True)
    params.save(output)
    return GnnReport(
        alpha=params.alphas[0],
        beta=params.beta,
        beta_questions=len(recurrent),
        iterations=len(losses),
        losses=losses,
        questions=len(samples),
        seconds=round(time.perf_counter() - started, 1),
    )

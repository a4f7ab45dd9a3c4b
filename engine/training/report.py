"""What a fine-tuning run reports, and the model card saved beside the model (``README.md`` and
``training.json``: data, hyper-parameters, losses, held-out metrics)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class TrainReport:
    kind: str
    base: str
    output: str
    device: str
    pairs: int
    questions: int
    skipped: int
    data: list[str]
    config: dict[str, Any]
    losses: list[float] = field(default_factory=list)  # mean loss per epoch
    held_out: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    peak_memory_mb: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class GnnReport:
    """What ``kgp train gnn`` fitted: GNN-Ret's alpha, RGNN-Ret's beta (from the questions with
    sub-questions) and the hinge loss per iteration."""

    alpha: float
    beta: float
    beta_questions: int
    iterations: int
    losses: list[float]
    questions: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def write_card(folder: Path, report: TrainReport) -> None:
    (folder / "training.json").write_text(json.dumps(report.as_dict(), indent=1))
    use = (
        "KGP_MDR_MODEL (scorer mdr) or KGP_ENCODER (the graph's encoder: a KNN-MDR graph)"
        if report.kind == "mdr"
        else "KGP_T5_MODEL (scorer t5)"
    )
    lines = [
        f"# kgp {report.kind} model",
        "",
        f"Fine-tuned by `kgp train {report.kind}` from `{report.base}` on {report.device}. "
        f"Use it with {use}.",
        "",
        "## Data",
        "",
        *(f"- `{path}`" for path in report.data),
        "",
        f"{report.pairs} training pairs from {report.questions} questions "
        f"({report.skipped} without gold passages skipped); "
        f"{report.held_out.get('questions', 0)} questions held out for the figures below.",
        "",
        "## Hyper-parameters",
        "",
        *(f"- {key}: {value}" for key, value in report.config.items()),
        "",
        "## Results",
        "",
        f"- loss per epoch: {', '.join(str(v) for v in report.losses)}",
        *(f"- held out {key}: {value}" for key, value in report.held_out.items()),
        f"- time: {report.seconds} s; peak memory: {report.peak_memory_mb} MB",
        "",
    ]
    (folder / "README.md").write_text("\n".join(lines))

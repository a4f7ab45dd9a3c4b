"""What a fine-tuning run reports, and the model card saved beside the model (``README.md`` and
``training.json``: data, hyper-parameters, losses, held-out metrics)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgp.qa import SETS, qa_set
from kgp.settings import DEFAULT_ENCODER

CARD_FILES = ("README.md", "training.json")  # the card itself; every other file is hashed
BASE_LICENCES = {DEFAULT_ENCODER: "Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)"}
USES = {
    "mdr": "KGP_MDR_MODEL (scorer mdr) or KGP_ENCODER (the graph's encoder: a KNN-MDR graph)",
    "encoder": "KGP_ENCODER (the graph's encoder: vectors, seeds, SIMILAR edges and the final "
    "order) or KGP_MDR_MODEL (scorer mdr)",
    "t5": "KGP_T5_MODEL (scorer t5)",
}


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
    command: str = ""  # the kgp train command line that produced it
    files: dict[str, str] = field(default_factory=dict)  # sha256 of every file but the card

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


def file_hashes(folder: Path) -> dict[str, str]:
    """The sha256 of every file of a model directory but its card, by relative path."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in CARD_FILES
    }


def describe_data(path: str) -> str:
    """A data file as the card lists it: its set and licence when its format tells; a folder
    is the documents that questions in kgp's own format are asked of."""
    if Path(path).is_dir():
        return f"`{path}`: the documents the questions in kgp's own format are asked of"
    try:
        text = Path(path).read_text(encoding="utf-8")
        first = (
            json.loads(text)[0]
            if text.lstrip().startswith("[")
            else json.loads(text.split("\n", 1)[0])
        )
        kind = qa_set(first)
    except (OSError, ValueError, IndexError):
        kind = "unknown"
    if kind in SETS:
        name, licence = SETS[kind]
        return f"`{path}`: {name} questions (licence {licence})"
    if kind == "corpus":
        return f"`{path}`: a corpus of passages, BM25 hard negatives only"
    if kind == "kgp":
        return f"`{path}`: questions in kgp's own format (their licence is their source's)"
    return f"`{path}`"


def write_card(folder: Path, report: TrainReport) -> None:
    """``training.json`` (the report) and ``README.md`` (the card) beside the model."""
    report.files = file_hashes(folder)
    (folder / "training.json").write_text(json.dumps(report.as_dict(), indent=1) + "\n")
    licence = BASE_LICENCES.get(report.base)
    lines = [
        f"# kgp {report.kind} model",
        "",
        f"Fine-tuned by `kgp train {report.kind}` from `{report.base}`"
        + (f" (licence {licence})" if licence else "")
        + f" on {report.device}. Use it with {USES[report.kind]}.",
        "",
        "## Data",
        "",
        *(f"- {describe_data(path)}" for path in report.data),
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
        "## Reproduce",
        "",
        "On the same kind of machine (the same CPU instruction set and thread count), this "
        "command writes the same weights, bit for bit (sha256 below and in `training.json`):",
        "",
        "```bash",
        report.command or f"kgp train {report.kind} ...",
        "```",
        "",
        *(f"- `{name}`: `{digest}`" for name, digest in report.files.items()),
        "",
    ]
    (folder / "README.md").write_text("\n".join(lines))

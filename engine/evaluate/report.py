"""What an evaluation found: each question's result, each retriever's summary and recall curve,
and the whole run, written as JSON (atomically) and plotted as a PNG."""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgp import metrics
from kgp.files import PRIVATE_FILE, write_private


@dataclass
class QuestionResult:
    id: str
    question: str
    retrieved: list[str]
    gold: list[list[str]]  # supporting units: the passage ids that count for each
    ms: float
    store_calls: int
    error: str | None = None
    structures: list[list[str]] = field(default_factory=list)  # pages/tables asked for whole
    prediction: str | None = None
    em: float | None = None
    f1: float | None = None
    judged: float | None = None


@dataclass
class RetrieverReport:
    name: str
    questions: list[QuestionResult] = field(default_factory=list)

    def summary(self, k: int) -> dict[str, float]:
        rows = self.questions
        if not rows:
            return {}
        ms = sorted(r.ms for r in rows)
        out = {
            "questions": len(rows),
            **{
                f"recall@{j}": _mean(metrics.recall(r.gold, r.retrieved, j) for r in rows)
                for j in (1, 2, 5)
            },
            # the answer first / in the top 5: a supporting passage, page or table there
            **{
                f"hit@{j}": _mean(
                    metrics.hit([*r.gold, *r.structures], r.retrieved, j) for r in rows
                )
                for j in (1, 5)
            },
            f"recall@{k}": _mean(metrics.recall(r.gold, r.retrieved, k) for r in rows),
            f"all@{k}": _mean(metrics.all_found(r.gold, r.retrieved, k) for r in rows),
            f"precision@{k}": _mean(metrics.precision(r.gold, r.retrieved, k) for r in rows),
            "mrr": _mean(metrics.reciprocal_rank(r.gold, r.retrieved) for r in rows),
        }
        structural = [r for r in rows if r.structures]
        if structural:
            out["struct_em"] = _mean(
                metrics.struct_exact(r.structures, r.retrieved, k) for r in structural
            )
        answered = [r for r in rows if r.em is not None]  # a failed answer or grade is 0
        if answered:
            out["answered"] = len(answered)
            out["em"] = _mean(r.em or 0.0 for r in answered)
            out["f1"] = _mean(r.f1 or 0.0 for r in answered)
            out["acc"] = _mean(r.judged or 0.0 for r in answered)
        out.update(
            {
                "p50_ms": round(statistics.median(ms), 1),
                "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1),
                "store_calls": round(statistics.fmean(r.store_calls for r in rows), 2),
                "failed": sum(r.error is not None for r in rows),
            }
        )
        return out

    def curve(self, k: int) -> list[float]:
        """Mean recall@j for j = 1..k (percent)."""
        rows = self.questions
        return [
            _mean(metrics.recall(r.gold, r.retrieved, j) for r in rows) for j in range(1, k + 1)
        ]


def _mean(values: Iterator[float] | Sequence[float]) -> float:
    return round(100 * statistics.fmean(values), 1)


@dataclass
class Evaluation:
    dataset: str
    k: int
    setting: str
    passages: int = 0
    seed: int | None = None
    skipped: list[str] = field(default_factory=list)  # ids of questions without gold
    unresolved: dict[str, list[str]] = field(default_factory=dict)  # gold not in the graph
    unavailable: dict[str, str] = field(default_factory=dict)  # retriever -> why not run
    reports: dict[str, RetrieverReport] = field(default_factory=dict)
    complete: bool = False
    seconds: float = 0.0

    def summaries(self) -> dict[str, dict[str, float]]:
        return {name: report.summary(self.k) for name, report in self.reports.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "setting": self.setting,
            "k": self.k,
            "seed": self.seed,
            "passages": self.passages,
            "complete": self.complete,
            "seconds": round(self.seconds, 1),
            "skipped_without_gold": self.skipped,
            "gold_not_in_graph": self.unresolved,
            "not_run": self.unavailable,
            "summary": self.summaries(),
            "recall_curves": {n: r.curve(self.k) for n, r in self.reports.items()},
            "questions": {
                name: [asdict(q) for q in report.questions] for name, report in self.reports.items()
            },
        }

    def write(self, path: Path) -> None:
        """Write atomically: an interrupted run leaves the previous complete file or this one."""
        temp = path.with_name(path.name + ".tmp")
        write_private(temp, json.dumps(self.as_dict(), indent=1, ensure_ascii=False))
        os.replace(temp, path)

    def plot(self, path: Path) -> None:
        """Recall@j curves (j = 1..k) of every retriever, as a PNG."""
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(figsize=(7, 4.5), dpi=120)
        budget = list(range(1, self.k + 1))
        for name, report in self.reports.items():
            if report.questions:
                axes.plot(budget, report.curve(self.k), label=name, linewidth=1.4)
        axes.set_xlabel("passages retrieved (k)")
        axes.set_ylabel("recall@k (%)")
        axes.set_ylim(0, 100)
        axes.grid(alpha=0.3)
        axes.set_title(f"{Path(self.dataset).name} ({self.setting})", fontsize=10)
        if axes.lines:
            axes.legend(fontsize=7, loc="lower right")
        figure.tight_layout()
        temp = path.with_name(path.name + ".tmp.png")
        figure.savefig(temp)
        pyplot.close(figure)
        temp.chmod(PRIVATE_FILE)  # beside the results, owner-only like them
        os.replace(temp, path)

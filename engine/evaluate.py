"""Evaluation: run retrievers over a QA set and measure them (``kgp eval``).

The shared-corpus setting: every paragraph of the file becomes one passage of one graph, built
once and kept under ``<data_dir>/eval/<content hash>`` so later runs (and other retrievers) reuse
it. Every retriever gets the same budget ``k``. A question a retriever fails on counts as a miss;
questions without gold passages are skipped and counted."""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgp.agents.retriever import SCORERS, Retriever
from kgp.agents.seeders import Seeder
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError, KgpError
from kgp.qa import QaItem, SharedCorpus, load_qa, shared_corpus

BASELINES = ("dense", "bm25", "tfidf")
KGP_RETRIEVERS = tuple(f"kgp-{name}" for name in SCORERS)
RETRIEVERS = (*BASELINES, *KGP_RETRIEVERS)
DEFAULT_RETRIEVERS = ("dense", "bm25", "tfidf", "kgp-tfidf", "kgp-embedding")


@dataclass
class QuestionResult:
    id: str
    question: str
    retrieved: list[str]
    gold: list[str]
    ms: float
    store_calls: int
    error: str | None = None


@dataclass
class RetrieverReport:
    name: str
    questions: list[QuestionResult] = field(default_factory=list)

    def summary(self, k: int) -> dict[str, float]:
        rows = self.questions
        if not rows:
            return {}
        ms = sorted(r.ms for r in rows)
        return {
            "questions": len(rows),
            "recall@5": _mean(recall(r, 5) for r in rows),
            f"recall@{k}": _mean(recall(r, k) for r in rows),
            f"all@{k}": _mean(float(set(r.gold) <= set(r.retrieved[:k])) for r in rows),
            f"precision@{k}": _mean(len(set(r.gold) & set(r.retrieved[:k])) / k for r in rows),
            "mrr": _mean(reciprocal_rank(r) for r in rows),
            "p50_ms": round(statistics.median(ms), 1),
            "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1),
            "store_calls": round(statistics.fmean(r.store_calls for r in rows), 2),
            "failed": sum(r.error is not None for r in rows),
        }


def _mean(values: Iterator[float] | Sequence[float]) -> float:
    return round(100 * statistics.fmean(values), 1)


def recall(result: QuestionResult, k: int) -> float:
    return len(set(result.gold) & set(result.retrieved[:k])) / len(result.gold)


def reciprocal_rank(result: QuestionResult) -> float:
    for rank, pid in enumerate(result.retrieved, start=1):
        if pid in result.gold:
            return 1.0 / rank
    return 0.0


@dataclass
class Evaluation:
    dataset: str
    k: int
    passages: int
    skipped: list[str] = field(default_factory=list)  # ids of questions without gold passages
    reports: dict[str, RetrieverReport] = field(default_factory=dict)
    complete: bool = False
    seconds: float = 0.0

    def summaries(self) -> dict[str, dict[str, float]]:
        return {name: report.summary(self.k) for name, report in self.reports.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "k": self.k,
            "passages": self.passages,
            "complete": self.complete,
            "seconds": round(self.seconds, 1),
            "skipped_without_gold": self.skipped,
            "summary": self.summaries(),
            "questions": {
                name: [asdict(q) for q in report.questions] for name, report in self.reports.items()
            },
        }

    def write(self, path: Path) -> None:
        """Write atomically: an interrupted run leaves the previous complete file or this one."""
        temp = path.with_name(path.name + ".tmp")
        temp.write_text(json.dumps(self.as_dict(), indent=1, ensure_ascii=False))
        os.replace(temp, path)


def corpus_key(corpus: SharedCorpus, settings_key: str) -> str:
    digest = hashlib.sha256(settings_key.encode())
    for title, text in corpus.entries:
        digest.update(title.encode() + b"\x00" + text.encode() + b"\x01")
    return digest.hexdigest()[:16]


def parse_retrievers(names: Sequence[str]) -> list[str]:
    out = []
    for name in names:
        for part in name.split(","):
            part = part.strip()
            if part and part not in RETRIEVERS:
                raise ConfigurationError(
                    f"unknown retriever {part!r}; choose from {', '.join(RETRIEVERS)}"
                )
            if part:
                out.append(part)
    if not out:
        raise ConfigurationError("no retrievers given")
    return list(dict.fromkeys(out))


def make_runner(kg: KnowledgeGraph, name: str, k: int) -> Callable[[str], list[str]]:
    if name.startswith("kgp-"):
        retriever: Retriever = kg.retriever(scorer=name.removeprefix("kgp-"))
        return lambda question: [p.id for p in retriever.retrieve(question, k).passages]
    kind = {"dense": "vector", "bm25": "fulltext", "tfidf": "tfidf"}[name]
    seeder = Seeder(kg.store, kg.encoder.encode, kind)
    return lambda question: [pid for pid, _ in seeder.seeds(question, k)]


def build_graph(
    kg_factory: Callable[[Path], KnowledgeGraph], root: Path, items: list[QaItem], name: str
) -> tuple[KnowledgeGraph, SharedCorpus]:
    corpus = shared_corpus(items, prefix=name)
    key = corpus_key(corpus, name)
    folder = root / "eval" / f"{name}-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    kg = kg_factory(folder / "kb")
    marker = folder / "built"
    if not marker.is_file():
        kg.sync_corpus(corpus.write(folder / "corpus.json"), prefix=name)
        marker.write_text(json.dumps({"passages": len(corpus.entries)}))
    return kg, corpus


def evaluate(
    dataset: Path,
    kg_factory: Callable[[Path], KnowledgeGraph],
    root: Path,
    *,
    retrievers: Sequence[str] = DEFAULT_RETRIEVERS,
    k: int = 30,
    limit: int | None = None,
    out: Path | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    items: list[QaItem] | None = None,
) -> Evaluation:
    """Evaluate ``retrievers`` on ``dataset`` (or on ``items`` already read from it); partial
    results are written to ``out`` as they come (and kept valid if the run is interrupted)."""
    if k < 1:
        raise ConfigurationError(f"k must be at least 1, not {k}")
    names = parse_retrievers(retrievers)
    items = items if items is not None else load_qa(dataset, limit=limit)
    usable = [item for item in items if item.gold]
    name = "".join(c if c.isalnum() else "-" for c in dataset.stem)[:40] or "dataset"
    started = time.perf_counter()
    kg, corpus = build_graph(kg_factory, root, usable, name)
    result = Evaluation(str(dataset), k, len(corpus.entries))
    result.skipped = [item.id or item.question for item in items if not item.gold]
    try:
        kg.encoder.load()
        for retriever in names:
            report = result.reports[retriever] = RetrieverReport(retriever)
            run = make_runner(kg, retriever, k)
            for n, item in enumerate(usable, start=1):
                report.questions.append(_ask(kg, run, item, corpus))
                if on_progress is not None:
                    on_progress(retriever, n, len(usable))
            if out is not None:
                result.write(out)
        result.complete = True
    finally:
        result.seconds = time.perf_counter() - started
        if out is not None:
            result.write(out)
        kg.close()
    return result


def _ask(
    kg: KnowledgeGraph, run: Callable[[str], list[str]], item: QaItem, corpus: SharedCorpus
) -> QuestionResult:
    gold = [corpus.ids[p] for p in item.gold]
    with kg.store.counting() as calls:
        started = time.perf_counter()
        error = None
        try:
            retrieved = run(item.question)
        except KgpError as exc:  # counted as a miss, never dropped
            retrieved, error = [], str(exc)
        ms = 1000 * (time.perf_counter() - started)
        return QuestionResult(item.id, item.question, retrieved, gold, round(ms, 2), calls(), error)

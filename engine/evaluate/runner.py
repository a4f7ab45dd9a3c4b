"""Running an evaluation: open the graphs, run every retriever on every question, answer and
grade with a reader, and keep the results file current."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kgp.agents.judge import Judge
from kgp.agents.reader import Reader
from kgp.baselines import ANSWER_BOUNDS, Run, make_runner
from kgp.client import KnowledgeGraph
from kgp.corpus_graph import Case, KgFactory, Target, graph_key, shared_target
from kgp.determinism import seed_everything
from kgp.errors import ConfigurationError, DocumentError, KgpError
from kgp.evaluate.answers import answer_and_grade, reader_and_judge
from kgp.evaluate.config import EvalConfig, choose_items, parse_retrievers
from kgp.evaluate.report import Evaluation, QuestionResult, RetrieverReport
from kgp.evaluate.targets import (
    graph_target,
    per_question_folder,
    per_question_targets,
    report_missing,
)
from kgp.qa import QaItem, load_corpus, load_qa
from kgp.settings import DEFAULT_K, Settings, load_settings

Progress = Callable[[str, int, int], None]  # (retriever, questions done, questions in all)


def run_evaluation(
    config: EvalConfig,
    factory: KgFactory,
    root: Path,
    *,
    settings: Settings | None = None,
    out: Path | None = None,
    on_progress: Progress | None = None,
    items: list[QaItem] | None = None,
) -> Evaluation:
    """Evaluate ``config.retrievers`` on ``config.dataset`` (or on ``items`` already read from
    it), with graphs under ``root``.

    ``factory(**overrides)`` opens a graph (``data_dir``, ``graph``, ``loaded_encoder``; none
    for the configured graph). Named retrievers that cannot run here fail before any work;
    ``all`` runs those that can and lists the others in ``unavailable``. Partial results are
    written to ``out`` as they come, kept valid if the run is interrupted, with a PNG of the
    recall curves beside it. ``settings`` (default: from the environment) key the built graphs:
    another encoder or k-NN degree builds another graph."""
    dataset, k, setting, seed = config.dataset, config.k, config.setting, config.seed
    corpus = config.corpus
    names = parse_retrievers(config.retrievers)
    named = config.named()
    items = items if items is not None else load_qa(dataset)
    items = choose_items(items, config.limit, seed)
    if seed is not None:
        seed_everything(seed)
    user_format = any(item.supports for item in items)
    if user_format and any(item.paragraphs for item in items):
        raise DocumentError(f"{dataset}: mixes kgp's format with a native QA format")
    if corpus is not None and (user_format or setting != "shared"):
        raise ConfigurationError("--corpus adds passages to the shared graph of a native set")
    if user_format and setting != "shared":
        raise ConfigurationError(
            f"{dataset} is in kgp's format, asked of the configured graph; the {setting} "
            "setting is for native sets (MuSiQue, HotpotQA, 2Wiki)"
        )
    usable = [item for item in items if item.has_gold]
    settings = settings or load_settings()
    key = graph_key(settings)
    name = "".join(c if c.isalnum() else "-" for c in dataset.stem)[:40] or "dataset"
    result = Evaluation(str(dataset), k, "graph" if user_format else setting, seed=seed)
    result.skipped = [item.id or item.question for item in items if not item.has_gold]
    started = time.perf_counter()
    holder = factory() if user_format else None
    if setting == "per-question":
        folder = per_question_folder(root, usable, name, key)
        holder = factory(data_dir=folder / "kb", graph="kgp")
    try:
        # a reader that cannot run fails before any graph is built
        reading = (
            reader_and_judge(holder.settings if holder else settings) if config.reader else None
        )
        if user_format:
            assert holder is not None
            targets: Iterator[Target] = iter([graph_target(holder, usable, result)])
        elif setting == "per-question":
            assert holder is not None
            targets = per_question_targets(factory, folder, usable, name, holder)
        else:
            extra = load_corpus(corpus) if corpus is not None else []
            targets = iter([shared_target(factory, root, usable, name, extra, key)])
        _run(
            result,
            targets,
            names,
            named,
            k,
            reading=reading,
            on_progress=on_progress,
            out=out,
            total=len(usable),
            keep=holder,
        )
        result.complete = True
    finally:
        result.seconds = time.perf_counter() - started
        if out is not None:
            result.write(out)
            result.plot(out.with_suffix(".png"))
        if holder is not None:
            holder.close()
    return result


def evaluate(
    dataset: Path,
    factory: KgFactory,
    root: Path,
    *,
    retrievers: Sequence[str] = ("all",),
    k: int = DEFAULT_K,
    limit: int | None = None,
    seed: int | None = None,
    setting: str = "shared",
    corpus: Path | None = None,
    reader: bool = False,
    settings: Settings | None = None,
    out: Path | None = None,
    on_progress: Progress | None = None,
    items: list[QaItem] | None = None,
) -> Evaluation:
    """:func:`run_evaluation` with the :class:`EvalConfig` given field by field (the CLI's
    call)."""
    config = EvalConfig(dataset, tuple(retrievers), k, limit, seed, setting, corpus, reader)
    return run_evaluation(
        config, factory, root, settings=settings, out=out, on_progress=on_progress, items=items
    )


def _runners(
    kg: KnowledgeGraph,
    names: list[str],
    named: set[str],
    k: int,
    reading: bool,
    result: Evaluation,
) -> dict[str, Run]:
    """The runners that can run here; one that cannot is an error when it was named, and
    listed in ``result.unavailable`` when it came with ``all``."""
    runners: dict[str, Run] = {}
    for name in names:
        if name in result.unavailable:
            continue
        try:
            if name in ANSWER_BOUNDS and not reading:
                raise ConfigurationError(
                    f"{name} is a bound for answering: run with a reader (--reader)"
                )
            runners[name] = make_runner(kg, name, k)
        except ConfigurationError as exc:
            if name in named:
                raise
            result.unavailable[name] = str(exc)
    return runners


def _run(
    result: Evaluation,
    targets: Iterator[Target],
    names: list[str],
    named: set[str],
    k: int,
    *,
    reading: tuple[Reader, Judge] | None,
    on_progress: Progress | None,
    out: Path | None,
    total: int,
    keep: KnowledgeGraph | None,
) -> None:
    """Every retriever on every target's questions, each question asked of every retriever in
    turn (which goes first alternating): a machine whose speed drifts slows them all alike,
    where one retriever's questions and then the next's would give the drift to one of them.
    The results file is rewritten after every 25 questions of a shared graph and at its end, or
    after every tenth per-question graph. Each target's graph is closed when done, except
    ``keep`` (the caller's)."""
    for n, target in enumerate(targets, start=1):
        one_question = len(target.cases) == 1
        try:
            target.kg.encoder.load()
            result.passages += target.kg.store.counts().labels.get("Passage", 0)
            if result.setting != "graph":
                report_missing(target, result)
            runners = _runners(target.kg, names, named, k, reading is not None, result)
            reports = {
                name: result.reports.setdefault(name, RetrieverReport(name)) for name in runners
            }
            rows: dict[str, list[QuestionResult]] = {name: [] for name in runners}
            for m, case in enumerate(target.cases):
                for name in list(runners) if m % 2 == 0 else list(reversed(runners)):
                    rows[name].append(_ask(target.kg, runners[name], case))
                    reports[name].questions.append(rows[name][-1])
                    if on_progress is not None:
                        on_progress(name, len(reports[name].questions), total)
                if out is not None and not one_question and (m + 1) % 25 == 0:
                    result.write(out)
            if reading is not None:
                for name in runners:
                    answer_and_grade(target.kg, target.cases, rows[name], *reading)
            if out is not None and not one_question:
                result.write(out)
        finally:
            if target.kg is not keep:
                target.kg.close()  # a per-question graph is closed before the next opens
        if out is not None and one_question and n % 10 == 0:
            result.write(out)


def _ask(kg: KnowledgeGraph, run: Run, case: Case) -> QuestionResult:
    item = case.item
    with kg.store.counting() as calls:
        started = time.perf_counter()
        error = None
        try:
            retrieved = run(item.question, case.gold)
        except KgpError as exc:  # counted as a miss, never dropped
            retrieved, error = [], str(exc)
        ms = 1000 * (time.perf_counter() - started)
        return QuestionResult(
            item.id,
            item.question,
            retrieved,
            case.gold,
            round(ms, 2),
            calls(),
            error,
            structures=case.structures,
        )

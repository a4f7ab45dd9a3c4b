"""Evaluation: run retrievers over a QA set and measure them (``kgp eval``).

Three settings:

- ``shared`` (native sets, the main one): every paragraph of the file becomes one passage of one
  graph, built once and kept under ``<data_dir>/eval/<name>-<content hash>`` so later runs (and
  every retriever) reuse it.
- ``per-question`` (the KGP paper's): each question gets a graph of its own paragraphs, a named
  graph in one store under ``<data_dir>/eval/<name>-<hash>-per-question``, also built once.
- ``graph`` (kgp's JSONL format): the questions are asked of the configured graph; supporting
  texts, pages and tables are looked up in it, and those it lacks are reported.

Every retriever gets the same budget ``k``. A question a retriever fails on counts as a miss;
questions without gold are skipped and counted. With a reader, each retriever's passages are
answered from and graded (EM, F1, and the paper's LLM grading prompt)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from kgp import metrics
from kgp.agents.judge import Judge
from kgp.agents.llm import ChatClient
from kgp.agents.reader import Reader
from kgp.agents.retriever import RetrievedPassage
from kgp.baselines import ANSWER_BOUNDS, RETRIEVERS, Run, known, make_runner
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError, DocumentError, KgpError
from kgp.files import PRIVATE_FILE, private_dir, write_private
from kgp.qa import Paragraph, QaItem, SharedCorpus, Support, load_corpus, load_qa, shared_corpus
from kgp.settings import Settings, load_settings
from kgp.stores import GraphStore

Setting = Literal["shared", "per-question", "graph"]
SETTINGS = ("shared", "per-question")
KgFactory = Callable[..., KnowledgeGraph]  # overrides (data_dir, graph, loaded_encoder) -> graph
READER_WORKERS = 8


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
            "recall@5": _mean(metrics.recall(r.gold, r.retrieved, 5) for r in rows),
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


@dataclass
class Case:
    """A question ready to ask: its gold as passage ids of the graph it is asked of."""

    item: QaItem
    gold: list[list[str]]
    structures: list[list[str]] = field(default_factory=list)


@dataclass
class Target:
    kg: KnowledgeGraph
    cases: list[Case]


def graph_key(settings: Settings) -> str:
    """The settings a built graph depends on: another encoder or k-NN degree is another graph."""
    parts = (settings.encoder, settings.knn_k, settings.keywords_per_passage, settings.store)
    return "|".join(str(p) for p in parts)


def corpus_key(corpus: SharedCorpus, settings_key: str) -> str:
    digest = hashlib.sha256(settings_key.encode())
    for title, text in corpus.entries:
        digest.update(title.encode() + b"\x00" + text.encode() + b"\x01")
    return digest.hexdigest()[:16]


def parse_retrievers(names: Sequence[str]) -> list[str]:
    """Comma-separated names (or ``all``), checked against the known retrievers."""
    out: list[str] = []
    for name in names:
        for part in (p.strip() for p in name.split(",")):
            if part == "all":
                out += RETRIEVERS
            elif part and not known(part):
                raise ConfigurationError(
                    f"unknown retriever {part!r}; choose from all, {', '.join(RETRIEVERS)} "
                    "(or kgp-SCORER:SEEDER[:ORDER])"
                )
            elif part:
                out.append(part)
    if not out:
        raise ConfigurationError("no retrievers given")
    return list(dict.fromkeys(out))


def build_corpus_graph(
    factory: KgFactory, folder: Path, corpus: SharedCorpus, prefix: str, graph: str = "kgp"
) -> KnowledgeGraph:
    """The graph of ``corpus`` in ``folder``, synced the first time only."""
    kg = factory(data_dir=folder / "kb", graph=graph)
    marker = folder / f"built-{graph}"
    if not marker.is_file():
        kg.sync_corpus(corpus.write(folder / f"corpus-{graph}.json"), prefix=prefix)
        write_private(marker, json.dumps({"passages": len(corpus.entries)}))
    return kg


def shared_target(
    factory: KgFactory, root: Path, items: list[QaItem], name: str, extra: list[Paragraph], key: str
) -> Target:
    corpus = shared_corpus(items, prefix=name, extra=extra)
    folder = root / "eval" / f"{name}-{corpus_key(corpus, name + key)}"
    private_dir(folder)
    kg = build_corpus_graph(factory, folder, corpus, name)
    return Target(kg, [Case(item, [[corpus.ids[p]] for p in item.gold]) for item in items])


def report_missing(target: Target, result: Evaluation) -> None:
    """Gold passages the graph lacks (a paragraph ingest skipped, say) are listed; they stay
    in the gold, so they count as misses."""
    wanted = [pid for case in target.cases for unit in case.gold for pid in unit]
    present = target.kg.store.fetch_nodes(wanted)
    for case in target.cases:
        missing = [pid for unit in case.gold for pid in unit if pid not in present]
        if missing:
            result.unresolved[case.item.id or case.item.question] = missing


def per_question_folder(root: Path, items: list[QaItem], name: str, key: str) -> Path:
    digest = corpus_key(shared_corpus(items, name), name + key)
    folder = root / "eval" / f"{name}-{digest}-per-question"
    private_dir(folder)
    return folder


def per_question_targets(
    factory: KgFactory, folder: Path, items: list[QaItem], name: str, holder: KnowledgeGraph
) -> Iterator[Target]:
    """One graph per question (graph ``q<n>`` in ``folder``'s store), each built once;
    ``holder``, open on the same store, keeps its server up and lends its encoder."""
    for n, item in enumerate(items):
        corpus = shared_corpus([item], prefix=name)
        graph = f"q{n}"
        kg = build_corpus_graph(
            lambda **o: factory(**o, loaded_encoder=holder.encoder), folder, corpus, name, graph
        )
        yield Target(kg, [Case(item, [[corpus.ids[p]] for p in item.gold])])


class GoldResolver:
    """Finds a user's supporting references in a graph: a text matches the passages that
    contain it or that it contains (whitespace and case aside); a page is all its passages and
    tables; a table is the document's n-th."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.documents = store.list_documents()
        self._tables: list[dict[str, Any]] | None = None

    def document(self, name: str) -> str | None:
        exact = [d for d in self.documents if d.path == name or d.id == name]
        ends = [d for d in self.documents if d.path.endswith("/" + name.lstrip("/"))]
        matches = exact or ends
        if len(matches) > 1:
            paths = ", ".join(sorted(d.path for d in matches)[:3])
            raise DocumentError(f"document {name!r} is ambiguous ({paths}); give more of its path")
        return matches[0].id if matches else None

    def resolve(self, support: Support) -> tuple[list[str], list[str] | None]:
        """The ids that count as finding the reference (any one of them), and for a page or a
        table the ids that must all be found for it to be retrieved whole (else None). A
        table's passages of rows count as finding it; whole, it is the Table node."""
        if support.text is not None:
            return self._text(support.text), None
        doc = self.document(support.document or "")
        structural = support.page is not None or support.table is not None
        if doc is None:
            return [], [] if structural else None
        rows = self.store.document_passages([doc])
        if support.page is not None:
            whole = []
            for page in self.store.page_contents([support.page]):
                if page["doc_id"] == doc:
                    whole += [str(x["id"]) for x in (*page["passages"], *page["tables"])]
            parts = [str(r["id"]) for r in rows if r.get("table_id") in whole]
            return [*whole, *parts], whole
        if support.table is not None:
            tables = [t for t in self.tables() if t["doc_id"] == doc]
            if support.table > len(tables):
                return [], []
            table = str(tables[support.table - 1]["id"])
            parts = [str(r["id"]) for r in rows if r.get("table_id") == table]
            return [table, *parts], [table]
        return [str(r["id"]) for r in rows], None

    def tables(self) -> list[dict[str, Any]]:
        if self._tables is None:
            self._tables = self.store.tables()
        return self._tables

    def _text(self, text: str) -> list[str]:
        wanted = " ".join(text.lower().split())
        hits = [h.id for h in self.store.fulltext_search(text, 50)]
        stored = self.store.passage_vectors(hits)
        out = []
        for pid in hits:
            have = " ".join(str(stored.get(pid, {}).get("text", "")).lower().split())
            if have and (wanted in have or have in wanted):
                out.append(pid)
        return out


def graph_target(kg: KnowledgeGraph, items: list[QaItem], result: Evaluation) -> Target:
    resolver = GoldResolver(kg.store)
    cases = []
    for item in items:
        gold, structures, missing = [], [], []
        for support in item.supports:
            ids, whole = resolver.resolve(support)
            gold.append(ids)
            if whole is not None:
                structures.append(whole)
            if not ids:
                missing.append(support.describe())
        if missing:
            result.unresolved[item.id or item.question] = missing
        cases.append(Case(item, gold, structures))
    if items and len(result.unresolved) == len(items):
        raise DocumentError(
            f"none of the supporting references of {result.dataset} is in {kg.store.describe()}; "
            "sync the documents they come from first (kgp sync FOLDER)"
        )
    return Target(kg, cases)


def choose_items(items: list[QaItem], limit: int | None, seed: int | None) -> list[QaItem]:
    """The first ``limit`` questions, or with ``seed`` a random sample of ``limit``."""
    if limit is None or limit >= len(items):
        return items
    if seed is None:
        return items[:limit]
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


def evaluate(
    dataset: Path,
    factory: KgFactory,
    root: Path,
    *,
    retrievers: Sequence[str] = ("all",),
    k: int = 30,
    limit: int | None = None,
    seed: int | None = None,
    setting: str = "shared",
    corpus: Path | None = None,
    reader: bool = False,
    settings: Settings | None = None,
    out: Path | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    items: list[QaItem] | None = None,
) -> Evaluation:
    """Evaluate ``retrievers`` on ``dataset`` (or on ``items`` already read from it).

    ``factory(**overrides)`` opens a graph (``data_dir``, ``graph``, ``loaded_encoder``; none
    for the configured graph). ``corpus``: a ``[{title, text}]`` JSON file of more passages for
    the shared graph (a retrieval corpus beside the questions). Named retrievers that cannot
    run here fail before any work; ``all`` runs those that can and lists the others in
    ``unavailable``. Partial results are written to ``out`` as they come, kept valid if the run
    is interrupted, with a PNG of the recall curves beside it. ``settings`` (default: from the
    environment) key the built graphs: another encoder or k-NN degree builds another graph."""
    if k < 1:
        raise ConfigurationError(f"k must be at least 1, not {k}")
    if setting not in SETTINGS:
        raise ConfigurationError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
    names = parse_retrievers(retrievers)
    named = {n.strip() for r in retrievers for n in r.split(",")} - {"all"}
    items = items if items is not None else load_qa(dataset)
    items = choose_items(items, limit, seed)
    if seed is not None:
        from kgp.training import seed_everything

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
        if user_format:
            assert holder is not None
            targets: Iterator[Target] = iter([graph_target(holder, usable, result)])
        elif setting == "per-question":
            assert holder is not None
            targets = per_question_targets(factory, folder, usable, name, holder)
        else:
            extra = load_corpus(corpus) if corpus is not None else []
            targets = iter([shared_target(factory, root, usable, name, extra, key)])
        reading = _reading(holder.settings if holder else settings) if reader else None
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


def _reading(settings: Settings) -> tuple[Reader, Judge]:
    if not settings.llm_base_url or not settings.llm_model:
        raise ConfigurationError(
            "answering needs a chat model: set KGP_LLM_BASE_URL and KGP_LLM_MODEL"
        )
    client = ChatClient(settings)
    return (
        Reader(
            client,
            context_tokens=settings.llm_context_tokens,
            answer_tokens=settings.llm_answer_tokens,
        ),
        Judge(client),
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
    on_progress: Callable[[str, int, int], None] | None,
    out: Path | None,
    total: int,
    keep: KnowledgeGraph | None,
) -> None:
    """Every retriever on every target's questions; the results file is rewritten after each
    retriever of a shared graph, or after every tenth per-question graph. Each target's graph
    is closed when done, except ``keep`` (the caller's)."""
    for n, target in enumerate(targets, start=1):
        one_question = len(target.cases) == 1
        try:
            target.kg.encoder.load()
            result.passages += target.kg.store.counts().labels.get("Passage", 0)
            if result.setting != "graph":
                report_missing(target, result)
            runners = _runners(target.kg, names, named, k, reading is not None, result)
            for name, run in runners.items():
                report = result.reports.setdefault(name, RetrieverReport(name))
                rows: list[QuestionResult] = []
                for case in target.cases:
                    rows.append(_ask(target.kg, run, case))
                    report.questions.append(rows[-1])
                    if on_progress is not None:
                        on_progress(name, len(report.questions), total)
                if reading is not None:
                    _answer(target.kg, target.cases, rows, *reading)
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


def _answer(
    kg: KnowledgeGraph, cases: list[Case], rows: list[QuestionResult], reader: Reader, judge: Judge
) -> None:
    """Answer every question from its retrieved passages and grade it (concurrently)."""
    nodes = kg.store.fetch_nodes(pid for row in rows for pid in row.retrieved)

    def passage(pid: str) -> RetrievedPassage:
        node = nodes.get(pid, {})
        kind = "table" if node.get("label") == "Table" else "passage"
        text = str(node.get("markdown") if kind == "table" else node.get("text", ""))
        return RetrievedPassage(pid, text, 0.0, {}, int(node.get("page") or 0), [], 0, kind)

    def one(pair: tuple[Case, QuestionResult]) -> None:
        case, row = pair
        answers = case.item.answers
        row.em = row.f1 = row.judged = 0.0
        try:
            answer = reader.read(row.question, [passage(pid) for pid in row.retrieved])
            row.prediction = answer.answer or ""
            row.em = metrics.exact_match(row.prediction, answers)
            row.f1 = metrics.token_f1(row.prediction, answers)
            row.judged = judge.grade(row.question, answers, row.prediction)
        except KgpError as exc:  # no answer or no grade: a miss
            row.error = f"reader: {exc}"

    with ThreadPoolExecutor(max_workers=READER_WORKERS) as pool:
        list(pool.map(one, [(c, r) for c, r in zip(cases, rows, strict=True) if c.item.answers]))

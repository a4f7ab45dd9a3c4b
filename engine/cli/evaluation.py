"""``kgp eval``: measure retrievers on a QA set and print the summary table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from kgp.cli.context import Context
from kgp.cli.output import check_k, emit_json, err, fail
from kgp.errors import KgpError
from kgp.files import private_dir
from kgp.names import RETRIEVERS
from kgp.settings import DEFAULT_K
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table


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
            help=f"Comma-separated, default all: {', '.join(RETRIEVERS)} (none and golden "
            "with --reader); kgp-SCORER:SEEDER[:ORDER] picks the traversal's seeder and order.",
        ),
    ] = None,
    k: Annotated[
        int, typer.Option("--k", help="Passage budget of every retriever (1 or more).")
    ] = DEFAULT_K,
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
    """Measure retrievers on a QA set: recall@1, @2, @5 and @k, hit@1 and @5 (something
    supporting first / in the top 5), all-supporting@k, precision@k, MRR,
    Struct-EM, EM/F1/graded accuracy (--reader), latency and store calls per question.

    Native sets build their graph once (under DATA_DIR/eval/) and reuse it.
    Example: kgp eval ../shared/data/qa/dev/hotpotqa_dev.json --retrievers dense,kgp-tfidf
    """
    from kgp.evaluate import EvalConfig, parse_retrievers, run_evaluation
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

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with Progress(
            *columns, console=err, transient=True, disable=state.quiet or not err.is_terminal
        ) as bar:
            task = bar.add_task("build the graph", total=None)

            def progress(name: str, done: int, total: int) -> None:
                bar.update(task, description=name, total=total, completed=done)

            config = EvalConfig(
                dataset,
                tuple(names),
                k=k,
                limit=limit,
                seed=seed,
                setting=setting,
                corpus=corpus,
                reader=reader,
            )
            result = run_evaluation(
                config,
                state.open_with,
                settings.data_dir,
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
        table = Table(title=title, min_width=min(len(title) + 4, 100))  # a row per measure
        keys = list(dict.fromkeys(key for row in summary.values() for key in row))
        table.add_column("", no_wrap=True)
        for name in summary:
            table.add_column(name, justify="right", overflow="fold")
        for key in keys:
            table.add_row(key, *(f"{row[key]:g}" if key in row else "" for row in summary.values()))
        shown = Console()
        if not shown.is_terminal:  # (a file or a pipe: as wide as the table, nothing folded)
            shown = Console(width=max(80, Console(width=1000).measure(table).maximum))
        shown.print(table)
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

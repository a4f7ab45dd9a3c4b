"""``kgp retrieve`` and ``kgp ask``: evidence for a question, and an answer that cites it."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kgp.access import ADMIN_CALLER
from kgp.cli.context import Context, data_home
from kgp.cli.output import check_k, emit_json, err, fail, warn
from kgp.client import KnowledgeGraph
from kgp.errors import KgpError
from kgp.names import METHODS, ORDERS, SCORERS, SEEDERS, listing
from kgp.settings import DEFAULT_K, StoreKind
from rich.console import Console

ScorerOption = Annotated[
    str | None,
    typer.Option(metavar="NAME", help=f"Traversal scorer: {listing(SCORERS)} (KGP_SCORER)."),
]
SeederOption = Annotated[
    str | None, typer.Option(metavar="NAME", help=f"Seeder: {listing(SEEDERS)} (KGP_SEEDER).")
]
OrderOption = Annotated[
    str | None,
    typer.Option(metavar="NAME", help=f"Final order: {listing(ORDERS)} (KGP_ORDER)."),
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
    typer.Option("--k", help=f"Passages to retrieve, 1 or more (default KGP_BUDGET, {DEFAULT_K})."),
]

KINDS = {"table": ", table", "table-rows": ", table rows"}


def retrieve(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question to find evidence for.")],
    k: KOption = None,
    scorer: ScorerOption = None,
    seeder: SeederOption = None,
    order: OrderOption = None,
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
        with state.open(settings, reading=True) as kg:
            kg.encoder.load()  # the timings are the question's, not the model's loading
            result = kg.retrieve(
                question, k, scorer=scorer, seeder=seeder, order=order, method=method
            )
            nothing = None if result.passages else nothing_found(kg)
            if save_trace:
                trace_id = kg.save_trace(
                    result,
                    scorer=scorer or settings.scorer,
                    seeder=seeder or settings.seeder,
                )
    except KgpError as exc:
        raise fail(str(exc)) from None
    warn(result.notices)
    if as_json:
        emit_json({**result.as_dict(), "trace": trace_id})
        return
    out = Console(soft_wrap=True)
    if nothing:
        out.print(nothing, highlight=False)
    print_passages(result.passages, out)
    err.print(
        f"{len(result.passages)} passages in {result.timings['total_ms']:.0f} ms, "
        f"{result.store_calls} store calls",
        highlight=False,
    )
    if trace_id:
        err.print(f"trace saved: {trace_id}", highlight=False)


def nothing_found(kg: KnowledgeGraph) -> str:
    """Why a question found nothing: the graph is empty, the caller's groups may read none of
    it, or nothing in it matched."""
    with kg.store.reading_as(ADMIN_CALLER):
        documents = kg.store.counts().labels.get("Document", 0)
    where = data_home(kg.settings)
    if not documents:
        embedded = kg.settings.store is StoreKind.EMBEDDED
        option = f"--data-dir {kg.settings.data_dir} " if embedded else ""
        return (
            f"no passages found: the graph in {where} is empty; add documents: "
            f"kgp {option}sync FOLDER"
        )
    if not kg.stats().labels.get("Document", 0):
        return (
            f"no passages found: groups {kg.settings.caller} may read none of the documents "
            f"in {where}"
        )
    return "no passages found for this question"


def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    k: KOption = None,
    scorer: ScorerOption = None,
    seeder: SeederOption = None,
    order: OrderOption = None,
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
        with state.open(settings, reading=True) as kg:
            kg.encoder.load()
            answer = kg.ask(question, k, scorer=scorer, seeder=seeder, order=order, method=method)
    except KgpError as exc:
        raise fail(str(exc)) from None
    failed = answer.error is not None and settings.llm_base_url and settings.llm_model
    warn(answer.notices)
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
            print_passages(cited, out)
        else:
            out.print("Evidence:", highlight=False)
            print_passages(answer.passages, out)
            if not failed:
                err.print(f"no answer: {answer.error}", highlight=False)
    if failed:
        raise fail(f"no answer: {answer.error}")


def print_passages(passages: list[Any], out: Console) -> None:
    """Rank, the score the order is by, where it is from, its text (further lines indented),
    and how the traversal reached it."""
    for rank, passage in enumerate(passages, start=1):
        via = " <- ".join(reversed(passage.path[:-1])) or "seed"
        where = f"{passage.document['path']} p.{passage.page}{KINDS.get(passage.kind, '')}"
        text = passage.text.replace("\n", "\n      ")
        out.print(
            f"{rank:>2}. [{passage.score:.3f}] {where} ({passage.id}): {text}",
            highlight=False,
            markup=False,
        )
        out.print(
            f"      hop {passage.hop}, step score {passage.step_score:.3f}, via {via}",
            highlight=False,
            markup=False,
            style="dim",
        )

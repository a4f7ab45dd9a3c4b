"""``kgp maintain``: keep a long-lived graph healthy (:mod:`kgp.ingest.maintain`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from kgp.cli.context import Context
from kgp.cli.output import emit_json, fail
from kgp.errors import KgpError
from rich.console import Console

if TYPE_CHECKING:
    from kgp.stores.health import IndexHealth


# kgp stats and kgp maintain: how many passages the index's recall is sampled on
SampleOption = typer.Option(
    "--sample",
    min=0,
    help="Passages whose 10 nearest are checked against exact search (each an exact search, "
    "about 0.5 us per passage of the graph).",
)


def maintain(
    ctx: typer.Context,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Build the vector index again whatever its health.")
    ] = False,
    sample: Annotated[int, SampleOption] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Finish what stopped syncs left, rebuild the vector index when its sampled recall@10
    falls below 0.95, or with --rebuild, and compact the store's log.
    Other processes keep answering meanwhile. Run it from a timer on busy graphs.

    Example: kgp maintain --json
    """
    from kgp.ingest.maintain import maintain as run_maintenance

    state: Context = ctx.obj
    try:
        # the admin view, or the graph's operator
        with state.open(state.settings(), reading=True) as kg:
            report = run_maintenance(kg.syncer(), rebuild=rebuild, sample=sample)
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json(report.as_dict())
        return
    console = Console(highlight=False)
    console.print(f"before: {describe(report.before)}")
    done = []
    if report.recovered:
        done.append(f"linked {report.recovered} documents a stopped sync had written")
    if report.refilled:
        done.append(f"recomputed the neighbours of {report.refilled} passages")
    if report.rebuilt:
        done.append(f"rebuilt the vector index ({'; '.join(report.reasons)})")
    if report.compacted:
        done.append("compacted the store's log")
    for line in done or ["nothing to do"]:
        console.print(f"  {line}")
    if report.after is not None:
        console.print(f"after: {describe(report.after)} ({report.seconds:.1f} s)")


def describe(health: IndexHealth) -> str:
    recall = (  # how much of an exact search's ten nearest the index finds, on a sample
        f"; of an exact search's 10 nearest it finds {health.recall_at_10:.0%}"
        f" (checked on {health.sampled} passages)"
        if health.recall_at_10 is not None
        else ""
    )
    return f"vector index {health.state}: {health.passages} passages{recall}"

"""``kgp stats``: what the graph holds."""

from __future__ import annotations

from typing import Annotated

import typer
from kgp.cli.context import Context, data_home
from kgp.cli.maintain import SampleOption, describe
from kgp.cli.output import emit_json, fail
from kgp.errors import KgpError
from rich.console import Console
from rich.table import Table


def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    sample: Annotated[int, SampleOption] = 10,
) -> None:
    """Count nodes by label, relationships by type and documents by access group: of what the
    caller's groups may read (--groups; * counts everything). The admin view and the graph's
    operator also see the vector index's health: its entries and its recall@10 against exact
    search on a sample of passages (kgp maintain acts on it).

    Example: kgp --groups hr stats --json
    """
    state: Context = ctx.obj
    try:
        settings = state.settings()
        with state.open(settings, reading=True) as kg:
            counts = kg.stats()
            caller = kg.caller
            # the whole graph's figures: for those who may see every document
            health = kg.store.upkeep.index_health(sample) if kg.sees_everything else None
            if health is not None and health.state == "none":
                health = None  # nothing indexed yet
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        extra = {"vector_index": health.as_dict()} if health else {}
        emit_json({**counts.as_dict(), **extra})
        return
    seen = "every document" if caller.admin else f"what groups {caller} may read"
    table = Table(title=f"kgp graph in {data_home(settings)}: {seen}")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("count", justify="right")
    for name, count in counts.labels.items():
        table.add_row("node", name, str(count))
    for name, count in counts.relationships.items():
        table.add_row("relationship", name, str(count))
    for name, count in counts.groups.items():
        table.add_row("documents readable by", name, str(count))
    if not counts.labels:
        table.add_row("", "(empty graph)", "0")
    Console().print(table)
    if health is not None:
        Console(highlight=False).print(describe(health))

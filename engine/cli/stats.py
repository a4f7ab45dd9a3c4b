"""``kgp stats``: what the graph holds."""

from __future__ import annotations

from typing import Annotated

import typer
from kgp.cli.context import Context
from kgp.cli.output import emit_json, fail
from kgp.errors import KgpError
from rich.console import Console
from rich.table import Table


def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Count nodes by label, relationships by type and documents by access group: of what the
    caller's groups may read (--groups; * counts everything).

    Example: kgp --groups hr stats --json
    """
    state: Context = ctx.obj
    try:
        settings = state.settings()
        with state.open(settings) as kg:
            counts = kg.stats()
            caller = kg.caller
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json(counts.as_dict())
        return
    seen = "every document" if caller.admin else f"what groups {caller} may read"
    table = Table(title=f"kgp graph ({settings.store.value}): {seen}")
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

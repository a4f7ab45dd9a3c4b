"""``kgp audit``: the audit trail ``kgp serve`` keeps (kgp.audit), read and filtered."""

from __future__ import annotations

from typing import Annotated

import typer
from kgp.audit import AuditLog, parse_since
from kgp.cli.context import Context
from kgp.cli.output import emit_json, fail
from kgp.errors import KgpError
from rich.console import Console
from rich.table import Table


def audit(
    ctx: typer.Context,
    key: Annotated[str | None, typer.Option("--key", help="Only this key's requests.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="From a time (2026-12-01) or a span (12h, 7d).")
    ] = None,
    document: Annotated[
        str | None,
        typer.Option("--document", help="Only requests that asked about or were shown it."),
    ] = None,
    action: Annotated[
        str | None,
        typer.Option(
            help="Only one kind: retrieve, ask, upload, remove, regroup, document, "
            "neighbours, trace, refused."
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="The last this many entries.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """Who asked what, and which documents they were shown or changed, as kgp serve recorded
    it (one entry a request: time, key, groups, action, question or documents, the documents
    returned, status, milliseconds). It names documents of every group: the data directory's
    operator reads it (no --groups, or --groups '*').

    Example: kgp --data-dir ./kb audit --key alice --since 7d --document reports/q3.pdf
    """
    state: Context = ctx.obj
    try:
        settings = state.settings()
        if settings.groups is not None and not settings.caller.admin:
            raise fail("kgp audit names documents of every group; run it without --groups")
        start = parse_since(since) if since else None
        trail = AuditLog(settings.data_dir / "audit")
        if not trail.files():
            raise fail(f"no audit trail in {trail.folder}: kgp serve writes one as it answers")
        found = list(trail.read(key=key, since=start, document=document, action=action))
    except KgpError as exc:
        raise fail(str(exc)) from None
    entries = found[-max(1, limit) :]
    if as_json:
        emit_json(entries)
        return
    table = Table(title=f"kgp audit: {len(entries)} of {len(found)} entries")
    for column in ("time", "key", "action", "status", "ms", "about", "shown"):
        table.add_column(column, justify="right" if column in ("status", "ms") else "left")
    for entry in entries:
        about = (
            entry.get("question")
            or ", ".join(entry.get("documents") or ())
            or entry.get("request", "")
        )
        table.add_row(
            str(entry.get("time", ""))[:19],
            str(entry.get("key", "")),
            str(entry.get("action", "")),
            str(entry.get("status", "")),
            str(entry.get("ms", "")),
            str(about)[:80],
            str(len(entry.get("returned") or ())),
        )
    Console().print(table)

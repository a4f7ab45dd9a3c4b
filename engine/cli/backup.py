"""``kgp backup`` and ``kgp restore`` (:mod:`kgp.backup`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from kgp.cli.context import Context
from kgp.cli.output import emit_json, fail
from kgp.errors import KgpError

JsonOption = typer.Option("--json", help="One JSON object on stdout.")


def backup(
    ctx: typer.Context,
    dest: Annotated[Path, typer.Argument(help="A new folder for the backup.")],
    as_json: Annotated[bool, JsonOption] = False,
) -> None:
    """Copy the data directory to a new folder while it serves: the graph as it is at one
    moment (writes wait for that moment only; reads go on), the vector index, the audit trail
    and uploaded files, with each file's checksum. A backup that does not finish is left as
    DEST.incomplete, never as DEST. The embedded store only: back Neo4j up with neo4j-admin.

    Example: kgp --data-dir ./kb backup /backups/kb-$(date +%F)
    """
    from kgp.backup import backup as take_backup

    state: Context = ctx.obj
    try:
        with state.open(state.settings(), reading=True) as kg:
            report = take_backup(kg, dest)
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json(report.as_dict())
        return
    typer.echo(
        f"backed up {report.documents} documents, {report.passages} passages "
        f"({report.bytes / 1e6:.1f} MB) to {report.path} in {report.seconds:.1f} s"
    )


def restore(
    ctx: typer.Context,
    src: Annotated[Path, typer.Argument(help="A folder kgp backup wrote.")],
    as_json: Annotated[bool, JsonOption] = False,
) -> None:
    """Fill a new, empty data directory (--data-dir) from a backup, after checking every file
    against the backup's checksums, and check the restored graph holds what the backup
    recorded. It never writes over a data directory that holds anything.

    Example: kgp --data-dir ./kb-restored restore /backups/kb-2026-12-06
    """
    from kgp.backup import restore as run_restore

    state: Context = ctx.obj
    try:
        settings = state.settings()
        report = run_restore(settings, src)
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json({**report.as_dict(), "data_dir": str(settings.data_dir.absolute())})
        return
    typer.echo(
        f"restored {report.documents} documents, {report.passages} passages from "
        f"{report.path} (taken {report.created}) into {settings.data_dir.absolute()} in "
        f"{report.seconds:.1f} s"
    )

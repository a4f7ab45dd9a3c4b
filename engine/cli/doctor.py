"""``kgp doctor``: render the library's health checks (:mod:`kgp.doctor`)."""

from __future__ import annotations

from typing import Annotated

import typer
from kgp.cli.context import Context
from kgp.cli.output import emit_json, fail
from kgp.doctor import diagnose
from kgp.errors import KgpError
from rich.console import Console


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
    diagnosis = diagnose(settings, models=not no_models, tracer=state.tracer())
    if as_json:
        emit_json(diagnosis.as_dict())
    else:
        out = Console(soft_wrap=True)
        for check in diagnosis.checks:
            mark = "[green]ok[/green]  " if check.ok else "[red]FAIL[/red]"
            out.print(f"{mark} {check.name:<9} {check.detail}", highlight=False)
    if diagnosis.failed:
        first = diagnosis.failed[0]
        raise fail(f"{first.name}: {first.detail}")

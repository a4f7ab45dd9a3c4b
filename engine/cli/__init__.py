"""The ``kgp`` command line, a thin layer over the library (:mod:`kgp.client`). Machine output
with ``--json``; messages and progress on stderr; failures exit non-zero with one line that says
what failed and what to do.

Each command lives in its own module and is registered here, in the order ``kgp --help`` lists
them."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from kgp.cli import stopping
from kgp.cli.audit import audit
from kgp.cli.backup import backup, restore
from kgp.cli.context import Context
from kgp.cli.doctor import doctor
from kgp.cli.evaluation import eval_command
from kgp.cli.export import export
from kgp.cli.maintain import maintain
from kgp.cli.query import ask, retrieve
from kgp.cli.serve import key, serve
from kgp.cli.stats import stats
from kgp.cli.sync import add, remove, sync
from kgp.cli.train import train_app
from kgp.settings import StoreKind, default_data_dir

__all__ = ["app", "main"]

app = typer.Typer(
    name="kgp",
    help="Knowledge Graph Prompting: multi-document retrieval over a graph database.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: flags without a "<bool>" metavar
)


@app.callback()
def main_options(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="Data directory of the embedded store (KGP_DATA_DIR; default "
            f"{str(default_data_dir()).replace(str(Path.home()), '~', 1)})."
        ),
    ] = None,
    store: Annotated[
        StoreKind | None, typer.Option(help="Graph store: embedded or neo4j (KGP_STORE).")
    ] = None,
    trace: Annotated[
        bool, typer.Option("--trace", help="Print every store query and its time.")
    ] = False,
    groups: Annotated[
        str | None,
        typer.Option(
            help="Read as these access groups, comma-separated (KGP_GROUPS); * is the admin "
            "view of every document. Unset: the default groups (KGP_DEFAULT_GROUPS)."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress output.")] = False,
) -> None:
    """Knowledge Graph Prompting over a graph database.

    Example: kgp --data-dir ./kb --groups hr,staff stats --json
    """
    overrides: dict[str, Any] = {}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    if store is not None:
        overrides["store"] = store
    if groups is not None:
        overrides["groups"] = groups
    ctx.obj = Context(overrides=overrides, trace=trace, quiet=quiet)


app.command()(stats)
app.command()(sync)
app.command()(add)
app.command()(remove)
app.command()(maintain)
app.command()(export)
app.command()(audit)
app.command()(backup)
app.command()(restore)
app.command()(retrieve)
app.command()(ask)
app.command(name="eval")(eval_command)
app.command()(doctor)
app.command()(serve)
app.command()(key)
app.add_typer(train_app, name="train")


def main() -> None:
    logging.getLogger("neo4j").addHandler(logging.NullHandler())  # errors are reported by kgp
    stopping.install()
    app()

"""``kgp sync``: make the graph equal to a folder, once or while watching it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from kgp.access import ADMIN_CALLER
from kgp.cli import stopping
from kgp.cli.context import Context, data_home
from kgp.cli.output import emit_json, err, fail
from kgp.client import KnowledgeGraph
from kgp.errors import KgpError, RemovalRefusedError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:  # imported by the sync itself: kgp --help stays quick
    from kgp.ingest.report import Progress as SyncProgress
    from kgp.ingest.report import SyncReport


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
        with state.open(settings) as kg:
            if corpus:
                report = kg.sync_corpus(folder, allow_removal=allow_removal)
            else:
                report = _sync_with_progress(kg, folder, quiet=state.quiet, allow=allow_removal)
            _show(report, as_json=as_json, out=out)
            if watch and not corpus:
                err.print(f"watching {folder} (Ctrl-C to stop)", highlight=False)
                kg.watch(
                    folder,
                    lambda moved: _show(moved, as_json=as_json, out=out),
                    allow_removal=allow_removal,
                    stop=stopping.REQUEST,
                )
                stopping.REQUEST.exit_if_requested()
    except RemovalRefusedError as refused:
        if as_json:
            emit_json(refused.as_dict())
        raise fail(str(refused)) from None
    except KgpError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # also how watchfiles reports a SIGTERM or SIGHUP it caught
        stopping.REQUEST.exit_if_requested()
        raise typer.Exit(130) from None
    if report.partial:
        raise typer.Exit(2)


def _show(report: SyncReport | KgpError, *, as_json: bool, out: Console) -> None:
    """One sync's outcome: JSON on stdout, or the summary line (a refusal, or a watched sync
    that failed and is tried again, as a warning)."""
    if isinstance(report, RemovalRefusedError):
        if as_json:
            emit_json(report.as_dict())
        else:
            err.print(f"kgp: refused: {report}", highlight=False, markup=False, soft_wrap=True)
    elif isinstance(report, KgpError):
        if as_json:
            emit_json({"failed": True, "error": str(report)})
        else:
            line = f"kgp: sync failed: {report}; watching on, the next sync after a pause"
            err.print(line, highlight=False, markup=False, soft_wrap=True)
    elif as_json:
        emit_json(report.as_dict())
    else:
        _print_report(report, out)


def _print_report(report: SyncReport, out: Console) -> None:
    regrouped = f", regrouped {len(report.regrouped)}" if report.regrouped else ""
    out.print(
        f"added {len(report.added)}, changed {len(report.changed)}, removed {len(report.removed)}"
        f"{regrouped}, unchanged {report.unchanged}, skipped {len(report.skipped)}; "
        f"{report.passages} passages "
        f"in {report.seconds:.1f} s",
        highlight=False,
    )
    for item in report.skipped:
        out.print(f"  skipped {item.path}: {item.reason}", highlight=False, markup=False)
    for notice in report.notices:
        out.print(f"  read in part {notice}", highlight=False, markup=False)


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


def add(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files to add or replace.")],
    root: Annotated[
        Path | None,
        typer.Option(
            help="Ids are paths relative to this folder (default: the files' common folder, "
            "so one file's id is its name)."
        ),
    ] = None,
    groups: Annotated[
        str | None,
        typer.Option(
            "--readable-by",
            help="Groups that may read them, comma-separated (default: the access files "
            "under the root, else KGP_DEFAULT_GROUPS).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Add or replace documents one file at a time, without syncing a whole folder. A file
    whose content is unchanged is left as it is (given --readable-by, it takes those groups).

    Of several files, those that cannot be read are listed under skipped (exit code 2); one
    file alone that cannot be read is a one-line error.
    Example: kgp --data-dir ./kb add reports/q3.pdf notes.md --readable-by hr
    """
    from kgp.access import check_groups

    state: Context = ctx.obj
    out = Console(stderr=as_json, soft_wrap=True)
    try:
        for path in paths:
            if not path.is_file():
                raise fail(f"{path}: no such file; give files (kgp sync takes a folder)")
        chosen = check_groups(groups, "--readable-by", text=True) if groups is not None else None
        with state.open(state.settings()) as kg:
            report = kg.add(*paths, root=root, groups=chosen)
    except KgpError as exc:
        raise fail(str(exc)) from None
    _show(report, as_json=as_json, out=out)
    if report.ignored:
        for ignored in report.ignored:
            err.print(f"kgp: warning: {ignored}: a format kgp does not read", highlight=False)
    if report.partial or report.ignored:
        raise typer.Exit(2)


def remove(
    ctx: typer.Context,
    ids: Annotated[list[str], typer.Argument(help="Document ids (kgp stats, GET /documents).")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Remove documents by id, with their pages, tables, passages and links. Every id is
    checked first: if one is not in the graph, nothing is removed.

    Example: kgp --data-dir ./kb remove reports/q3.pdf
    """
    state: Context = ctx.obj
    try:
        with state.open(state.settings(), reading=True) as kg:
            if not kg.sees_everything:  # a reader: refused as kg.remove refuses it
                kg.remove(ids[0])
            with kg.store.reading_as(ADMIN_CALLER):  # (the operator: every document)
                nodes = kg.store.fetch_nodes(ids)
            missing = [i for i in ids if nodes.get(i, {}).get("label") != "Document"]
            if missing:
                raise fail(
                    f"no document {missing[0]!r} in {data_home(kg.settings)}; nothing removed "
                    "(an id is the path relative to the synced folder)"
                )
            removed = [doc_id for doc_id in ids if kg.remove(doc_id)]
    except KgpError as exc:
        raise fail(str(exc)) from None
    if as_json:
        emit_json({"removed": removed})
        return
    Console(highlight=False, soft_wrap=True).print(
        f"removed {len(removed)} document{'s' if len(removed) != 1 else ''}: {', '.join(removed)}"
    )

"""``kgp export``: the graph out of kgp, into files other tools read or a running Neo4j."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from kgp.access import check_groups
from kgp.cli.context import Context
from kgp.cli.output import emit_json, fail
from kgp.errors import KgpError
from kgp.export import load, snapshot
from kgp.graph_files import write_csv, write_graphml
from kgp.settings import StoreKind, load_settings
from kgp.stores import store_from_settings


class ExportFormat(StrEnum):
    CSV = "csv"
    GRAPHML = "graphml"
    NEO4J = "neo4j"


def export(
    ctx: typer.Context,
    dest: Annotated[
        str,
        typer.Argument(
            help="A new folder (csv), a .graphml file (graphml), or a bolt:// or neo4j:// URI "
            "(neo4j; its user, password and database from KGP_NEO4J_*)."
        ),
    ],
    to: Annotated[
        ExportFormat,
        typer.Option("--to", help="csv: neo4j-admin import files; graphml; neo4j: a server."),
    ] = ExportFormat.CSV,
    readable_by: Annotated[
        str | None,
        typer.Option(
            "--readable-by",
            help="Only the documents these groups may read (comma-separated); unset: the "
            "whole graph, saved traces included.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> None:
    """Export the graph (the admin view: run it as the data directory's operator) to
    neo4j-admin import CSV files, to GraphML for Gephi or yEd, or into a running Neo4j through
    its driver, with the schema and indexes kgp's Neo4j store makes, so that
    kgp --store neo4j then answers from it. Writing into Neo4j is idempotent: each document
    is written again whole.

    Example: kgp --data-dir ./kb export ./kb-export && cat ./kb-export/import.txt
    """
    state: Context = ctx.obj
    try:
        settings = state.settings()
        if settings.groups is not None and not settings.caller.admin:
            raise fail(
                "kgp export reads every document; run it without --groups (the data "
                "directory's operator) or with --groups '*', and choose with --readable-by"
            )
        groups = check_groups(readable_by.split(","), "--readable-by") if readable_by else None
        with state.open(settings, reading=True) as kg:
            snap = snapshot(kg.store, groups)
        if to is ExportFormat.CSV:
            files = write_csv(snap, Path(dest))
            where = str(Path(dest) / "import.txt")
        elif to is ExportFormat.GRAPHML:
            path = Path(dest)
            if path.suffix.lower() != ".graphml":
                raise fail(f"{dest}: a GraphML export is a .graphml file; name one")
            write_graphml(snap, path)
            files, where = [path], dest
        else:
            if not dest.startswith(("bolt://", "bolt+s://", "neo4j://", "neo4j+s://")):
                raise fail(f"{dest}: give the Neo4j server's bolt:// or neo4j:// URI")
            target = load_settings(**{**state.overrides, "store": StoreKind.NEO4J}, neo4j_uri=dest)
            with store_from_settings(target) as neo4j:
                load(snap, neo4j, say=state.say)
            files, where = [], dest
    except KgpError as exc:
        raise fail(str(exc)) from None
    except OSError as exc:  # (a folder that cannot be made, a full disk)
        raise fail(f"{dest}: {exc.strerror or exc}; give a writable place") from None
    documents = sum(1 for n in snap.nodes if n["label"] == "Document")
    summary = {
        "documents": documents,
        "nodes": len(snap.nodes),
        "relationships": len(snap.rels),
        "to": to.value,
        "where": where,
        "files": [str(f) for f in files],
    }
    if as_json:
        emit_json(summary)
        return
    typer.echo(
        f"exported {documents} documents ({len(snap.nodes)} nodes, {len(snap.rels)} "
        f"relationships) to {where}"
    )

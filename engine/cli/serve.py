"""``kgp serve``: the HTTP API over the configured graph; ``kgp key``: make an API key."""

from __future__ import annotations

import gc
import ipaddress
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from kgp.cli.context import Context
from kgp.cli.output import err, fail
from kgp.errors import KgpError

if TYPE_CHECKING:
    from kgp.settings import Settings

LOOPBACK_NAMES = {"localhost"}
WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def say(line: str) -> None:
    err.print(f"kgp: {line}", highlight=False, markup=False)


def say_json(line: str, level: str = "warning") -> None:
    """One message as a JSON line (KGP_LOG_FORMAT=json), with the request it is about."""
    from kgp.serve.metrics import current_request_id

    entry = {
        "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "level": level,
        "message": line,
        "request_id": current_request_id() or None,
    }
    sys.stderr.write(json.dumps(entry, ensure_ascii=False) + "\n")
    sys.stderr.flush()


def answered_hosts(host: str, settings: Settings) -> set[str] | None:
    """The host names requests may address: the address listened on (and every loopback
    name, on a loopback address) and KGP_SERVE_HOSTS; None (any) for a server listening on
    every address with no names given."""
    if host in WILDCARD_HOSTS and not settings.serve_hosts:
        return None
    names = {host, *settings.serve_hosts}
    if is_loopback(host) or host in WILDCARD_HOSTS:  # (every address includes loopback)
        names |= {"localhost", "127.0.0.1", "::1"}
    return names


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8000,
    keys: Annotated[
        Path | None,
        typer.Option(help="API keys file (KGP_SERVE_KEYS; make keys with kgp key NAME)."),
    ] = None,
) -> None:
    """Serve the graph over HTTP: /retrieve, /ask, /documents, /stats, /traces, /health
    (OpenAPI at /openapi.json). Each request reads as its API key's groups; without a keys file
    the server answers on loopback only, as KGP_GROUPS (or the default groups).

    Example: kgp serve --keys keys.toml --host 0.0.0.0 --port 8000
    """
    import uvicorn
    from kgp.serve.app import create_app
    from kgp.serve.keys import read_keys
    from kgp.serve.uploads import migrate_uploads

    state: Context = ctx.obj
    try:
        settings = state.settings()
        json_lines = settings.log_format == "json"

        def news(line: str, level: str = "info") -> None:
            say_json(line, level) if json_lines else say(line)

        path = keys or settings.serve_keys
        loaded = read_keys(path, lambda line: news(line, "warning")) if path is not None else None
        if loaded is None and not is_loopback(host):
            raise fail(
                f"--host {host}: without API keys kgp serves on a loopback address only; "
                "make keys with kgp key NAME --groups G and pass --keys FILE"
            )
        kg = state.open(settings.model_copy(update={"groups": ("*",)}))
        kg.encoder.load()
        kg.retriever()  # the default one, with its order's model
        moved = migrate_uploads(kg, settings.data_dir / "uploads")
    except KgpError as exc:
        raise fail(str(exc)) from None
    # the models' objects live as long as the server: kept out of the collector's full passes,
    # which otherwise walk them all every few dozen questions (decisions/0009)
    gc.collect()
    gc.freeze()
    if moved:
        news(f"{len(moved)} uploaded documents moved to their own ids (upload:KEY/FILE)")
    if loaded is None:
        news(f"no API keys: serving on {host} only, as groups {settings.caller}")
    else:
        news(f"{len(loaded.keys)} API keys from {loaded.path}")
    try:
        hosts = answered_hosts(host, settings)
        app = create_app(kg, loaded, settings, hosts=hosts, say=lambda line: news(line, "error"))
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        kg.close()


def key(
    name: Annotated[str, typer.Argument(help="A name for the key (who or what uses it).")],
    groups: Annotated[
        str | None,
        typer.Option(help="Access groups the key reads as, comma-separated; * for all."),
    ] = None,
    keys: Annotated[Path, typer.Option(help="The keys file (made if missing).")] = Path(
        "kgp-keys.toml"
    ),
    upload: Annotated[
        str | None,
        typer.Option(help="Let the key upload documents, which get these groups (its own)."),
    ] = None,
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Remove the key NAME from the file instead.")
    ] = False,
) -> None:
    """Make an API key for kgp serve: its hash goes to the keys file, the key is printed once.
    A running server takes a new key, and refuses a revoked one, within a few seconds.

    Example: kgp key alice --groups hr,staff --upload hr --keys keys.toml
    """
    from kgp.serve.keys import add_key, revoke_key

    try:
        if revoke:
            if groups is not None or upload is not None:
                raise fail("--revoke takes only the key's name (and --keys)")
            revoke_key(keys, name)
            err.print(f"kgp: key {name!r} removed from {keys}", highlight=False)
            return
        if groups is None:
            raise fail("--groups: say which groups the key reads as (e.g. --groups hr,staff)")
        secret = add_key(keys, name, groups, upload)
    except KgpError as exc:
        raise fail(str(exc)) from None
    sys.stdout.write(secret + "\n")
    err.print(f"kgp: key {name!r} added to {keys}; it is shown only now", highlight=False)

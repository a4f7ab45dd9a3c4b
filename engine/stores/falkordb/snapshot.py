"""The embedded graph copied as it is at one moment while it serves (``kgp backup``), and a data
directory started from such a copy (``kgp restore``).

The copy is the server's own snapshot: BGSAVE forks the server, and the child writes what the
graph held at the fork while the parent goes on answering. It is taken while the writes of
every process wait (:class:`kgp.locks.WriteGate`), so it holds each document whole or not at
all, and nobody's questions wait. A restore makes the copy the base of a new append-only file,
which the server loads as it does at every start."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import redis
from kgp.errors import StoreUnavailableError
from kgp.files import PRIVATE_FILE, private_dir
from kgp.locks import WriteGate
from kgp.stores.falkordb.server import EmbeddedServer

T = TypeVar("T")

SNAPSHOT = "dump.rdb"  # the server's snapshot file (redis's default name), in its folder
BASE = "appendonly.aof.1.base.rdb"  # a restored append-only file: the copy as its base
MANIFEST = f"file {BASE} seq 1 type b\n"  # (redis's own manifest format)
SAVE_TIMEOUT_S = 3600.0  # a snapshot of a million passages takes minutes


def take_snapshot(
    server: EmbeddedServer,
    gate: WriteGate,
    dest: Path,
    *,
    pause_timeout: float,
    counted: Callable[[], T],
) -> T:
    """Write the graph as it is now to ``dest``; ``counted()`` runs while writes wait (what the
    copy holds, counted at its moment) and its result is returned."""
    with server.client(timeout=SAVE_TIMEOUT_S) as conn:
        _wait_idle(conn, time.monotonic() + SAVE_TIMEOUT_S)
        with gate.paused(pause_timeout):
            counts = counted()
            _begin_save(conn)
        _wait_saved(conn, time.monotonic() + SAVE_TIMEOUT_S)
    shutil.move(server.home / SNAPSHOT, dest)
    return counts


def _busy(info: dict[str, Any]) -> bool:
    return any(
        int(info.get(name, 0))
        for name in ("rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled")
    )


def _wait_idle(conn: redis.Redis, deadline: float) -> None:
    """Until no compaction or snapshot of the server runs (it takes one at a time)."""
    while _busy(conn.info("persistence")):
        if time.monotonic() >= deadline:
            raise StoreUnavailableError("the embedded server's compaction did not end; try later")
        time.sleep(0.05)


def _begin_save(conn: redis.Redis) -> None:
    """BGSAVE, not scheduled for later: the copy's moment is the fork, done when the server
    answers. A compaction that another process began since the last look is waited for
    (writes stay paused meanwhile)."""
    deadline = time.monotonic() + SAVE_TIMEOUT_S
    while True:
        try:
            conn.bgsave(schedule=False)
            return
        except redis.ResponseError as exc:
            busy = "in progress" in str(exc) or "child process is active" in str(exc)
            if not busy or time.monotonic() >= deadline:
                raise StoreUnavailableError(f"FalkorDB could not take a snapshot: {exc}") from None
        time.sleep(0.05)


def _wait_saved(conn: redis.Redis, deadline: float) -> None:
    while True:
        info = conn.info("persistence")
        if not int(info.get("rdb_bgsave_in_progress", 0)):
            if info.get("rdb_last_bgsave_status") != "ok":
                raise StoreUnavailableError(
                    "FalkorDB could not write its snapshot (see its log, falkordb/server.log)"
                )
            return
        if time.monotonic() >= deadline:
            raise StoreUnavailableError(f"FalkorDB's snapshot took over {SAVE_TIMEOUT_S:.0f} s")
        time.sleep(0.05)


def place_snapshot(data_dir: Path, snapshot: Path) -> Path:
    """A server folder for ``data_dir`` whose append-only file starts from ``snapshot``,
    written beside it under a temporary name and returned (the caller moves it in)."""
    home = private_dir(data_dir / "falkordb.restoring")
    logs = private_dir(home / "appendonlydir")
    shutil.copyfile(snapshot, logs / BASE)
    (logs / BASE).chmod(PRIVATE_FILE)
    (logs / "appendonly.aof.manifest").write_text(MANIFEST, encoding="ascii")
    (logs / "appendonly.aof.manifest").chmod(PRIVATE_FILE)
    return home

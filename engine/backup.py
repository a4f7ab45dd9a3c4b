"""``kgp backup`` and ``kgp restore``: a consistent copy of a data directory taken while it
serves, and a new data directory started from one.

A backup is a folder: the graph's snapshot (``graph.rdb``, the embedded server's own, taken
while the writes of every process wait: :mod:`kgp.stores.falkordb.snapshot`), the vector index
beside it as last saved (an open brings it up to the graph), the audit trail and the uploaded
files as they are, and ``kgp-backup.json``, written last: what the graph held at the snapshot's
moment and each file's size and SHA-256. It is written as ``DEST.incomplete`` and renamed to
``DEST`` when whole, so a backup killed at any point leaves the source as it was and either a
whole backup or a folder whose name says it is not one. A restore checks every file before it
writes anything, fills an empty data directory (marked until it is done, so a killed restore
can be run again) and opens the graph to check it holds what the backup recorded."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgp.access import ADMIN_CALLER
from kgp.errors import BackupError, ConfigurationError
from kgp.files import PRIVATE_FILE, private_dir
from kgp.settings import Settings, StoreKind

if TYPE_CHECKING:
    from kgp.client import KnowledgeGraph

FORMAT = 1  # of the manifest; a restore reads this one only
MANIFEST = "kgp-backup.json"
GRAPH = "graph.rdb"  # the store's snapshot, in the backup
COPIED = ("audit", "uploads")  # folders of the data directory copied as they are
PAUSE_TIMEOUT_S = 120.0  # how long a backup waits for the writes in flight to end
INCOMPLETE = ".incomplete"  # a backup's folder until it is whole
RESTORING = ".kgp-restoring"  # marks a data directory a restore is filling
CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class BackupReport:
    path: Path
    created: str  # ISO 8601, UTC: the snapshot's moment
    documents: int
    passages: int
    bytes: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "created": self.created,
            "documents": self.documents,
            "passages": self.passages,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
        }


def backup(kg: KnowledgeGraph, dest: Path) -> BackupReport:
    """Copy ``kg``'s data directory to the new folder ``dest`` while others go on reading and
    writing it (their writes wait only for the moment the snapshot starts)."""
    started = time.monotonic()
    dest = dest.expanduser().absolute()
    partial = dest.with_name(dest.name + INCOMPLETE)
    if dest.exists():
        raise BackupError(f"{dest} exists; give kgp backup a new folder")
    if partial.exists():
        raise BackupError(
            f"{partial} is left by a backup that did not finish; remove it, or choose "
            "another folder"
        )
    data_dir = kg.settings.data_dir.expanduser().absolute()
    if dest == data_dir or data_dir in dest.parents:
        raise BackupError(
            f"{dest} is inside the data directory {data_dir}; choose a folder outside"
        )
    with _only_backup(data_dir):
        private_dir(partial)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        counts = kg.store.upkeep.snapshot(partial / GRAPH, PAUSE_TIMEOUT_S)
        for name in COPIED:
            if (data_dir / name).is_dir():
                _copy_tree(data_dir / name, partial / name)
        files = {
            str(path.relative_to(partial)): _described(path)
            for path in sorted(partial.rglob("*"))
            if path.is_file()
        }
        manifest = {
            "format": FORMAT,
            "created": created,
            "store": kg.settings.store.value,
            "graph": counts.as_dict(),
            "files": files,
        }
        _write_synced(partial / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
        _sync_dir(partial)
        partial.rename(dest)
        _sync_dir(dest.parent)
    return BackupReport(
        dest,
        created,
        counts.labels.get("Document", 0),
        counts.labels.get("Passage", 0),
        sum(int(f["bytes"]) for f in files.values()),
        time.monotonic() - started,
    )


def restore(settings: Settings, src: Path) -> BackupReport:
    """Fill ``settings``' data directory, empty or missing, from the backup ``src``; the
    restored graph is opened and must hold what the backup recorded."""
    from kgp.client import open as open_graph
    from kgp.stores.falkordb.snapshot import place_snapshot

    started = time.monotonic()
    if settings.store is not StoreKind.EMBEDDED:
        raise BackupError(
            "kgp restore fills an embedded store's data directory; restore Neo4j with "
            "neo4j-admin database load (docs/operations.md)"
        )
    src = src.expanduser().absolute()
    manifest = read_manifest(src)
    for name, expected in manifest["files"].items():
        if _described(src / name) != expected:
            raise BackupError(
                f"{src / name} differs from the backup's record of it; the backup is damaged"
            )
    data_dir = settings.data_dir.expanduser().absolute()
    _clear_for_restore(data_dir)
    private_dir(data_dir)
    marker = data_dir / RESTORING
    _write_synced(marker, str(src))
    for name in COPIED:
        if (src / name).is_dir():
            _copy_tree(src / name, data_dir / name)
    home = place_snapshot(data_dir, src / GRAPH)
    for index in sorted(src.glob("index-*.usearch")):
        shutil.copyfile(index, home / index.name)
        (home / index.name).chmod(PRIVATE_FILE)
    home.rename(data_dir / "falkordb")
    with open_graph(settings=settings) as kg, kg.store.reading_as(ADMIN_CALLER):
        counts = kg.store.counts()
    recorded = manifest["graph"]
    if counts.as_dict() != recorded:
        raise BackupError(
            f"the graph restored in {data_dir} differs from what {src} recorded "
            f"({_difference(recorded, counts.as_dict())}); keep the backup and report this"
        )
    marker.unlink()
    _sync_dir(data_dir)
    return BackupReport(
        src,
        str(manifest["created"]),
        counts.labels.get("Document", 0),
        counts.labels.get("Passage", 0),
        sum(int(f["bytes"]) for f in manifest["files"].values()),
        time.monotonic() - started,
    )


def read_manifest(src: Path) -> dict[str, Any]:
    """The manifest of the backup ``src``, or a one-line error saying why it is not one."""
    if not src.is_dir():
        raise BackupError(f"{src} is not a folder; give kgp restore a folder kgp backup wrote")
    if src.name.endswith(INCOMPLETE):
        raise BackupError(f"{src} is a backup that did not finish; restore a whole one")
    try:
        manifest = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackupError(f"{src} is not a kgp backup (it has no {MANIFEST})") from None
    except (OSError, ValueError) as exc:
        raise BackupError(
            f"{src / MANIFEST} cannot be read ({exc}); the backup is damaged"
        ) from None
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found != FORMAT:
        raise BackupError(
            f"{src / MANIFEST}: backup format {found} is not {FORMAT}; restore it with the kgp "
            "that wrote it"
        )
    if GRAPH not in manifest.get("files", {}):
        raise BackupError(f"{src / MANIFEST} lists no {GRAPH}; the backup is damaged")
    return dict(manifest)


@contextmanager
def _only_backup(data_dir: Path) -> Iterator[None]:
    """One backup of a data directory at a time (the server takes one snapshot at a time)."""
    private_dir(data_dir)
    descriptor = os.open(data_dir / "backup.lock", os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackupError(f"another backup of {data_dir} is running; wait for it") from None
        yield
    finally:
        os.close(descriptor)


def _clear_for_restore(data_dir: Path) -> None:
    """Refuse a data directory that holds anything but a killed restore's files (cleared)."""
    if not data_dir.exists():
        return
    if not data_dir.is_dir():
        raise ConfigurationError(f"data directory {data_dir} is a file; choose a folder")
    entries = list(data_dir.iterdir())
    if not entries:
        return
    if not (data_dir / RESTORING).is_file():
        raise BackupError(
            f"data directory {data_dir} is not empty; restore into a new one "
            "(--data-dir), or move this one aside"
        )
    for entry in entries:  # all of it a restore's that did not finish
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _copy_tree(source: Path, target: Path) -> None:
    """Copy a folder's regular files (owner-only), skipping what vanishes meanwhile (an audit
    file rotated away)."""
    private_dir(target)
    for path in sorted(source.rglob("*")):
        if path.is_symlink():
            continue
        to = target / path.relative_to(source)
        if path.is_dir():
            private_dir(to)
        elif path.is_file():
            try:
                shutil.copyfile(path, to)
            except FileNotFoundError:
                continue
            to.chmod(PRIVATE_FILE)


def _described(path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        raise BackupError(f"{path} is missing; the backup is damaged") from None
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def _write_synced(path: Path, text: str) -> None:
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE), "w") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


def _sync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _difference(recorded: dict[str, Any], found: dict[str, Any]) -> str:
    for kind in ("labels", "relationships", "groups"):
        for name in sorted({*recorded.get(kind, {}), *found.get(kind, {})}):
            a, b = recorded.get(kind, {}).get(name, 0), found.get(kind, {}).get(name, 0)
            if a != b:
                return f"{name}: {a} recorded, {b} restored"
    return "the same counts"

"""The audit trail: who asked what, and which documents they saw or changed.

One JSON object a line in ``<data dir>/audit/audit.log`` (owner-only), appended whole under a
lock by each entry (``O_APPEND``: several processes may write), never rewritten. A file past its
size (``KGP_AUDIT_MAX_MB``) is renamed ``audit-<time>.log`` and a new one begun; renamed files
older than ``KGP_AUDIT_KEEP_DAYS`` are deleted. Reading goes through the renamed files, oldest
first, then the current one, so a rotation loses nothing.

An entry: ``time`` (UTC, ISO 8601), ``key`` (the API key's name, or "local"), ``groups`` (those
it read as), ``action`` (retrieve, ask, upload, remove, regroup, document, neighbours, trace),
``question`` or ``documents`` (what it asked about), ``returned`` (the documents it was shown),
``status`` (the HTTP status) and ``ms``. Only the admin view reads it (``GET /audit``,
``kgp audit``): entries name documents of every group."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kgp.errors import ConfigurationError
from kgp.files import PRIVATE_FILE, private_dir

CURRENT = "audit.log"


@dataclass
class AuditLog:
    """The trail in ``folder``; ``max_bytes`` a file, rotated files kept ``keep_days``."""

    folder: Path
    max_bytes: int = 10 * 1024 * 1024
    keep_days: float = 90.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        return self.folder / CURRENT

    def append(self, entry: dict[str, Any]) -> None:
        """Add one entry (``time`` set now unless given), rotating first if the file is full."""
        line = json.dumps({"time": _now(), **entry}, ensure_ascii=False, default=str) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            private_dir(self.folder)
            if self.path.exists() and self.path.stat().st_size + len(data) > self.max_bytes:
                self._rotate()
            if _torn(self.path):  # (a writer killed mid-line: this entry starts its own)
                data = b"\n" + data
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
            try:
                os.write(descriptor, data)
            finally:
                os.close(descriptor)

    def _rotate(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        os.replace(self.path, self.folder / f"audit-{stamp}.log")
        cutoff = time.time() - self.keep_days * 86400
        for old in self.folder.glob("audit-*.log"):
            if old.stat().st_mtime < cutoff:
                old.unlink(missing_ok=True)

    def files(self) -> list[Path]:
        """The trail's files, oldest first (their names sort by time)."""
        rotated = sorted(self.folder.glob("audit-*.log"))
        return [*rotated, *([self.path] if self.path.exists() else [])]

    def read(
        self,
        *,
        key: str | None = None,
        since: datetime | None = None,
        document: str | None = None,
        action: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The entries, oldest first, of ``key``, from ``since``, naming ``document`` (asked
        about or shown), of ``action``; a line that is not JSON (a torn write) is skipped."""
        for path in self.files():
            with path.open(encoding="utf-8") as lines:
                for line in lines:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if _wanted(entry, key=key, since=since, document=document, action=action):
                        yield entry


def _wanted(
    entry: dict[str, Any],
    *,
    key: str | None,
    since: datetime | None,
    document: str | None,
    action: str | None,
) -> bool:
    if key is not None and entry.get("key") != key:
        return False
    if action is not None and entry.get("action") != action:
        return False
    if since is not None and datetime.fromisoformat(str(entry.get("time"))) < since:
        return False
    named = [*entry.get("documents", ()), *entry.get("returned", ())]
    return document is None or document in named


def _torn(path: Path) -> bool:
    """Whether the file ends inside a line."""
    try:
        with path.open("rb") as file:
            file.seek(-1, os.SEEK_END)
            return file.read(1) != b"\n"
    except (FileNotFoundError, OSError):
        return False  # (none, or empty)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def parse_since(text: str) -> datetime:
    """``--since``: an ISO 8601 time (UTC unless it says), or a span back from now: 30m, 12h,
    7d."""
    value = text.strip()
    units = {"m": 60, "h": 3600, "d": 86400}
    if value[-1:] in units and value[:-1].replace(".", "", 1).isdigit():
        return datetime.now(UTC) - timedelta(seconds=float(value[:-1]) * units[value[-1]])
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigurationError(
            f"--since {text!r}: give a time (2026-12-01 or 2026-12-01T08:00) or a span (12h, 7d)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def documents_of(passages: Sequence[Any]) -> list[str]:
    """The documents of a retrieval's passages, in rank order, each once."""
    return list(dict.fromkeys(str(p.document["id"]) for p in passages))

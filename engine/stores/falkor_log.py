"""The embedded server's append-only file: its size, its compaction into a snapshot, and taking
back what a start wrote when nothing else was written before the server stopped.

A start writes to the log too: it creates again the indexes the snapshot was left without
(:class:`~kgp.stores.falkor.FalkorStore`). Left there, those writes are replayed by the next start,
which then builds the index while it loads before answering anything, which is what leaving it out
of the snapshot was for (a 50,000-passage graph started in 4.2 s, and in 9 to 13 s after each
session that only read). So a start marks where the log ended before its writes, and the last user
to stop the server, if nothing else was written since, cuts the log back to that mark once the
server is gone. Any compaction forgets the mark: the snapshot then holds what is in memory."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import redis
from kgp.errors import StoreUnavailableError
from kgp.files import write_private
from kgp.stores.own_writes import Count, count_of

STAMP_TAIL = 65536  # bytes at the end of each part of the log that its stamp hashes
MARK = "start-writes"  # where the log ended before a start's own writes (JSON)
LOG_DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"
COMPACT_MIN_BYTES = 1024 * 1024  # a log of writes smaller than this is not worth a snapshot


@dataclass(frozen=True, slots=True)
class LogEnd:
    """Where the log ends: its newest part (a file of writes after the snapshot), that part's
    length, and the whole log's size as the server counts it."""

    part: str
    length: int
    size: int


class AppendOnlyLog:
    """The append-only file of the server in ``home``; ``client`` connects to that server."""

    def __init__(self, home: Path, client: Callable[..., redis.Redis]) -> None:
        self.home = home
        self.client = client

    @property
    def mark_file(self) -> Path:
        return self.home / MARK

    def size(self) -> int:
        """The log's size in bytes as the server counts it: it grows with every write."""
        with self.client(timeout=30.0) as conn:
            return int(conn.info("persistence").get("aof_current_size", 0))

    def end(self) -> LogEnd:
        """Where the log ends now (with ``appendfsync always``, every write is on disk)."""
        part = self._newest_part()
        return LogEnd(part, (self.home / LOG_DIR / part).stat().st_size, self.size())

    def _newest_part(self) -> str:
        parts = [name for name, kind in self._parts() if kind == "i"]
        if not parts:
            raise StoreUnavailableError(f"{self.home / LOG_DIR / MANIFEST} names no log file")
        return parts[-1]

    def _parts(self) -> list[tuple[str, str]]:
        """The manifest's files, oldest first, each with its type (b: the snapshot, i: writes
        after it)."""
        parts = []
        for line in (self.home / LOG_DIR / MANIFEST).read_text(encoding="utf-8").splitlines():
            words = line.split()
            fields = dict(zip(words[::2], words[1::2], strict=False))
            if "file" in fields and "type" in fields:
                parts.append((fields["file"], fields["type"]))
        return parts

    def stamp(self) -> str:
        """What the log holds, in a few bytes: a hash of its parts' names, types, sizes and
        last STAMP_TAIL bytes. It changes with every write (each grows the log), a compaction
        and a cut; not with a start, a stop or a read. Read it with the server stopped, or
        where no write can come meanwhile."""
        digest = hashlib.sha256()
        for name, kind in self._parts():
            path = self.home / LOG_DIR / name
            with path.open("rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(max(0, size - STAMP_TAIL))
                tail = handle.read()
            digest.update(f"{name}\0{kind}\0{size}\0".encode())
            digest.update(hashlib.sha256(tail).digest())
        return digest.hexdigest()

    def count(self) -> Count:
        """The server's count of changes (:mod:`kgp.stores.own_writes`)."""
        with self.client(timeout=30.0) as conn:
            return count_of(conn.info("server", "persistence"))

    def loading(self) -> str | None:
        """How far the server's load of its snapshot and log is, in words ("62% of 1.9 GB,
        about 40 s left"), when it says; None when it is not loading or does not answer (it
        answers between parts of its work, not during each)."""
        try:
            with self.client(timeout=1.0) as conn:
                info = conn.info("persistence")
        except (redis.RedisError, OSError):
            return None
        if not int(info.get("loading", 0)):
            return None
        total = int(info.get("loading_total_bytes", 0))
        size = f"{total / 1e9:.1f} GB" if total >= 1e9 else f"{total / 1e6:.0f} MB"
        eta = int(info.get("loading_eta_seconds", 0))
        left = f", about {eta} s left" if eta > 0 else ""
        return f"{float(info.get('loading_loaded_perc', 0.0)):.0f}% of {size}{left}"

    # -- a start's own writes ----------------------------------------------------------------

    def mark(self, before: LogEnd, built: Sequence[str] = ()) -> None:
        """The writes since ``before`` are a start's own (the log's size now is their end);
        ``built``: the indexes only writes use among them (their labels or types)."""
        payload = {"before": asdict(before), "after": self.size(), "built": list(built)}
        write_private(self.mark_file, json.dumps(payload), encoding="ascii")

    def only_start_writes(self) -> bool:
        """Whether nothing but the marked start's writes reached the log since its mark."""
        mark = self._read_mark()
        return mark is not None and mark[1] == self.size()

    def start_built(self) -> tuple[str, ...]:
        """The indexes only writes use that the marked start's writes create, while the log
        holds them after its snapshot (a compaction forgets the mark): empty if none."""
        mark = self._read_mark()
        return mark[2] if mark is not None else ()

    def take_back(self) -> bool:
        """With the server stopped: cut the log back to before the start's writes, if nothing
        else was written (checked by the caller with the server up). True if it did."""
        mark = self._read_mark()
        self.mark_file.unlink(missing_ok=True)
        if mark is None:
            return False
        before = mark[0]
        path = self.home / LOG_DIR / before.part
        try:
            if self._newest_part() != before.part or path.stat().st_size < before.length:
                return False  # a compaction or another log since: nothing to take back
            with path.open("r+b") as handle:
                handle.truncate(before.length)
        except OSError:
            return False
        return True

    def forget_mark(self) -> None:
        self.mark_file.unlink(missing_ok=True)

    def _read_mark(self) -> tuple[LogEnd, int, tuple[str, ...]] | None:
        try:
            payload = json.loads(self.mark_file.read_text(encoding="ascii"))
            built = tuple(str(name) for name in payload.get("built", ()))
            return LogEnd(**payload["before"]), int(payload["after"]), built
        except (OSError, ValueError, KeyError, TypeError):
            return None  # none, or an older kgp's marker: nothing known to take back

    # -- compaction --------------------------------------------------------------------------

    def compact(
        self, *, min_bytes: int | None = None, growth: float = 1.0, timeout: float = 600.0
    ) -> bool:
        """Rewrite the append-only file as a snapshot when its log of writes has grown past
        ``min_bytes`` and ``growth`` times the last snapshot, so the next start loads quickly
        instead of replaying every write (what redis's automatic rewrite would do, run only at
        moments kgp chooses). Waits until the rewrite is done; True if it ran."""
        with self.client(timeout=600.0) as conn:
            info = conn.info("persistence")
            size = int(info.get("aof_current_size", 0))
            base = int(info.get("aof_base_size", 0))
            least = COMPACT_MIN_BYTES if min_bytes is None else min_bytes
            if size - base < least or size < (1.0 + growth) * base:
                return False
            self.forget_mark()  # the snapshot will hold what is now in memory
            try:
                conn.bgrewriteaof()
            except redis.ResponseError as exc:
                if "already in progress" not in str(exc):
                    raise StoreUnavailableError(f"FalkorDB could not compact: {exc}") from None
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                info = conn.info("persistence")
                if not info.get("aof_rewrite_in_progress") and not info.get(
                    "aof_rewrite_scheduled"
                ):
                    return True
                time.sleep(0.05)
        raise StoreUnavailableError(
            f"FalkorDB compaction in {self.home} did not finish in {timeout:.0f} s"
        )

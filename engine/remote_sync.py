"""A folder kept in sync as one key's uploads to ``kgp serve`` (``kgp.connect(...).sync``): what
to send, what to remove, what to skip and why, decided before anything is sent.

A served graph names an upload by its key and file name alone (``upload:<key name>/<name>``),
so a folder's subfolders flatten: a second file of one name is skipped with the reason, as are
names the server refuses or that a form changes on the way (a quotation mark), files over the
server's size limit, links leaving the folder, and files that cannot be read. A file that is
skipped keeps the upload it had, as ``kgp sync`` keeps a document it cannot read again."""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kgp.errors import DocumentError
from kgp.ids import MAX_UPLOAD_FILES, NOT_PLAIN, plain_upload_name
from kgp.ingest.readers import supported_suffixes
from kgp.ingest.removal import check_removal
from kgp.ingest.report import Progress, Skipped, SyncReport
from kgp.ingest.sources import OFFICE_LOCK, walk_files


@dataclass
class Plan:
    """What a remote sync does: the files to send, how many the server holds as they are, the
    key's uploads the folder no longer holds, and the files skipped."""

    send: list[Path]
    unchanged: int
    gone: list[str]
    held: int  # the key's uploads before the sync
    skipped: list[Skipped] = field(default_factory=list)

    def check(self, source: str, share: float, allow_removal: bool) -> None:
        """``kgp sync``'s removal guard, before anything is sent."""
        if not allow_removal:
            check_removal(self.gone, self.held, share, source)

    def batches(self) -> Iterator[list[Path]]:
        """The files to send, as many to a request as the server takes."""
        for start in range(0, len(self.send), MAX_UPLOAD_FILES):
            yield self.send[start : start + MAX_UPLOAD_FILES]

    def progress(
        self, reports: list[SyncReport], on_progress: Callable[[Progress], None] | None
    ) -> None:
        """Tell ``on_progress`` how many of the files to send are sent, after a request."""
        if on_progress is not None and self.send:
            done = min(len(self.send), len(reports) * MAX_UPLOAD_FILES)
            passages = sum(r.passages for r in reports)
            on_progress(Progress(done, len(self.send), passages, str(self.send[done - 1])))

    def report(self, reports: list[SyncReport], removed: list[str]) -> SyncReport:
        """The requests' reports as one, with what the plan skipped and what was removed."""
        total = SyncReport(unchanged=self.unchanged, removed=removed, skipped=list(self.skipped))
        for report in reports:
            total.added += report.added
            total.changed += report.changed
            total.unchanged += report.unchanged
            total.skipped += report.skipped
            total.passages += report.passages
            total.seconds += report.seconds
        return total


def sync_plan(folder: Path, uploads: str, held: dict[str, str], max_bytes: int) -> Plan:
    """Compare ``folder``'s files in formats kgp reads with ``held`` (the key's uploads, id ->
    SHA-256; their ids start with ``uploads``): a file is sent when the server lacks it or
    holds other content; an upload no file names any more is gone."""
    if not folder.is_dir():
        raise DocumentError(f"{folder}: no such folder; give the folder to keep in sync")
    root = folder.resolve()
    suffixes = set(supported_suffixes())
    plan = Plan([], 0, [], len(held))
    named: dict[str, str] = {}  # upload id -> the file that takes it
    linked: list[Path] = []
    # (the file nearest the folder's top takes a name two files share)
    for path in sorted(walk_files(folder, linked), key=lambda p: (len(p.parts), p)):
        shown = path.relative_to(folder).as_posix()
        if path.suffix.lower() not in suffixes or path.name.startswith(OFFICE_LOCK):
            continue
        name = plain_upload_name(path.name)
        if name is None or '"' in name:
            why = f"{NOT_PLAIN}, or holds a quotation mark" if name else NOT_PLAIN
            plan.skipped.append(
                Skipped(shown, f"a served graph names uploads by file name: it {why}; rename it")
            )
            continue
        doc_id = uploads + name
        if doc_id in named:
            plan.skipped.append(
                Skipped(
                    shown,
                    f"{named[doc_id]} has the same name and is sent: a served graph names "
                    "uploads by file name alone; rename one",
                )
            )
            continue
        named[doc_id] = shown
        unread, digest = _read(path, root, max_bytes)
        if unread is not None:
            plan.skipped.append(Skipped(shown, unread))  # (its upload, if any, stays as it was)
        elif held.get(doc_id) != digest:
            plan.send.append(path)
        else:
            plan.unchanged += 1
    plan.gone = sorted(set(held) - set(named))
    plan.skipped += [
        Skipped(
            link.relative_to(folder).as_posix() + "/",
            "symlinked folder: kgp does not follow links to folders; sync its target on its own",
        )
        for link in linked
    ]
    return plan


def _read(path: Path, root: Path, max_bytes: int) -> tuple[str | None, str]:
    """Why the file cannot be sent (None if it can), and its content's SHA-256."""
    try:
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            return "symlink points outside the folder: kgp does not follow it", ""
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file", ""
        if info.st_size > max_bytes:
            limit = max_bytes / 1024 / 1024
            return (
                f"{info.st_size / 1024 / 1024:.1f} MB, over the server's {limit:g} MB a file "
                "(KGP_MAX_FILE_MB)",
                "",
            )
        return None, hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}", ""

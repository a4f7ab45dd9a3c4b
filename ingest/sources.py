"""Where a sync's documents come from: the files of a folder (hidden ones and symlinked folders
left out), or the entries of a ``[{title, text}]`` JSON corpus, each as a :class:`Candidate` that
loads its content when the sync gets to it."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kgp.access import check_groups
from kgp.errors import DocumentError
from kgp.ids import path_id, reserved
from kgp.ingest.access import AccessRules
from kgp.ingest.document import Page, ReadDocument, Section
from kgp.ingest.readers import supported_suffixes
from kgp.ingest.report import Skipped, SyncReport
from kgp.settings import PassageMode, Settings

OFFICE_LOCK = "~$"  # Word, Excel and PowerPoint hold "~$name.docx" beside a file while it is open


@dataclass(frozen=True, slots=True)
class Candidate:
    """A document found in the source: how to get its content."""

    doc_id: str
    path: str
    load: Callable[[], tuple[bytes, ReadDocument | None]]
    size: int
    groups: tuple[str, ...]  # who may read it (kgp.access)


def folder_events(folder: Path, stop: threading.Event | None) -> Iterator[object]:
    """A folder's file changes in debounced bursts, and an empty one every 5 s without any (a
    watch syncs then too, for an event missed), until ``stop`` is set."""
    from watchfiles import watch

    return watch(
        folder,
        debounce=1500,
        step=200,
        rust_timeout=5000,
        yield_on_timeout=True,
        raise_interrupt=True,  # else watchfiles ends the watch as if stopped
        stop_event=stop,
    )


def walk_files(root: Path, linked: list[Path]) -> Iterator[Path]:
    """Files under ``root``, hidden ones left out; symlinked folders are not entered but
    collected in ``linked``."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        keep = []
        for name in sorted(dirnames):
            if name.startswith("."):
                continue
            if (Path(dirpath) / name).is_symlink():
                linked.append(Path(dirpath) / name)
            else:
                keep.append(name)
        dirnames[:] = keep
        for name in filenames:
            if not name.startswith("."):
                yield Path(dirpath) / name


def file_loader(path: Path) -> Callable[[], tuple[bytes, ReadDocument | None]]:
    shown = path_id(str(path))  # (a name that is not UTF-8 cannot be printed as it is)

    def load() -> tuple[bytes, ReadDocument | None]:
        try:
            before = path.stat()
            with open(path, "rb") as handle:
                data = handle.read()
            after = path.stat()
        except FileNotFoundError:
            raise DocumentError(f"{shown}: vanished during the sync") from None
        except PermissionError:
            raise DocumentError(f"{shown}: no read permission; chmod it or remove it") from None
        except OSError as exc:
            raise DocumentError(f"{shown}: cannot read: {exc.strerror or exc}") from None
        if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns) or len(
            data
        ) != after.st_size:
            raise DocumentError(f"{shown}: changed during the sync; sync again when it is written")
        return data, None

    return load


def corpus_candidates(path: Path, prefix: str, default: tuple[str, ...]) -> Iterable[Candidate]:
    """Entries of a ``[{title, text}]`` JSON corpus as documents of one passage each; an entry's
    optional ``"groups": [...]`` names who may read it (else ``default``)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DocumentError(f"{path}: not a readable JSON corpus ({exc})") from None
    if not isinstance(entries, list):
        raise DocumentError(f"{path}: a corpus is a JSON list of {{title, text}} objects")
    if refused := reserved(f"{prefix}/0"):
        raise DocumentError(f"{path}: prefix {prefix!r}: {refused}")
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or "text" not in entry:
            raise DocumentError(f"{path}: entry {n} has no text; expected {{title, text}}")
        title, text = str(entry.get("title", "")), str(entry["text"])
        access = (
            check_groups(entry["groups"], f"{path}: entry {n}") if "groups" in entry else default
        )
        if (title, text, access) in seen:
            continue
        seen.add((title, text, access))
        data = json.dumps({"title": title, "text": text}, ensure_ascii=False).encode()
        # the title leads the passage, as in dense retrievers' "title + text" convention: a
        # Wikipedia-style paragraph often names its subject only in the title
        body = f"{title}\n{text}" if title else text
        read = ReadDocument(title=title, kind="corpus", pages=(Page(1, (Section("", body),)),))
        doc_id = f"{prefix}/{n}"
        yield Candidate(doc_id, doc_id, fixed(data, read), len(data), access)


def fixed(data: bytes, read: ReadDocument) -> Callable[[], tuple[bytes, ReadDocument | None]]:
    return lambda: (data, read)


def corpus_settings(settings: Settings) -> Settings:
    """Benchmark corpora: each paragraph is one passage."""
    return settings.model_copy(update={"passage_mode": PassageMode.WHOLE})


def file_candidates(
    paths: Iterable[Path],
    root: Path,
    report: SyncReport,
    default_groups: tuple[str, ...],
    groups: Iterable[str] | None = None,
    id_prefix: str = "",
) -> list[Candidate]:
    """The given files as documents with ids ``id_prefix`` + their path relative to ``root``,
    with ``groups`` or else those the access files under ``root`` give them (``default_groups``
    where none does); unsupported, outside or unreadable ones, and those whose id would take
    the uploads' space (:mod:`kgp.ids`), go to the report. A bad access file raises before
    anything is written."""
    root = root.resolve()
    rules = AccessRules(root, default_groups)
    explicit = check_groups(list(groups), "groups") if groups is not None else None
    suffixes = set(supported_suffixes())
    found: list[Candidate] = []
    taken: set[str] = set()
    for given in paths:
        path = Path(given).parent.resolve() / Path(given).name  # the file itself may be a link
        if not path.is_relative_to(root):
            report.skipped.append(Skipped(path_id(str(given)), f"not inside {path_id(str(root))}"))
            continue
        rel = path.relative_to(root).as_posix()
        doc_id = id_prefix + path_id(rel)  # what the graph and the report name it by
        if path.suffix.lower() not in suffixes or path.name.startswith(OFFICE_LOCK):
            report.ignored.append(doc_id)
            continue
        try:
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(root):
                    report.skipped.append(
                        Skipped(
                            doc_id, f"symlink points outside the folder ({path_id(str(target))})"
                        )
                    )
                    continue
            info = path.stat()
        except OSError as exc:
            report.skipped.append(Skipped(doc_id, f"cannot stat: {exc.strerror or exc}"))
            continue
        if not stat.S_ISREG(info.st_mode):
            report.ignored.append(doc_id)
            continue
        refused = None if id_prefix else reserved(doc_id)
        if refused:
            report.skipped.append(Skipped(doc_id, refused))
            continue
        if doc_id in taken:  # (a name path_id escaped, which another file has as it is)
            report.skipped.append(Skipped(doc_id, "another file has this id; rename one of them"))
            continue
        taken.add(doc_id)
        access = explicit or rules.groups(rel)
        found.append(Candidate(doc_id, doc_id, file_loader(path), info.st_size, access))
    return found

"""Uploaded files, saved where the server's sync reads them: one owner-only folder per API key,
a plain file name each (NFKC-normalised; no folders, no ``..``, nothing hidden, no control or
bidirectional characters, no look-alike slashes), within the size limit of ``kgp sync``
(``KGP_MAX_FILE_MB``), and only in formats kgp reads. A refused upload leaves nothing behind.
Each becomes the document ``upload:<key name>/<file name>`` (:mod:`kgp.ids`)."""

import hashlib
import os
import tempfile
from pathlib import Path

from fastapi import UploadFile
from kgp.access import ADMIN_CALLER
from kgp.client import KnowledgeGraph
from kgp.files import private_dir, write_private
from kgp.ids import NOT_PLAIN, UPLOAD_PREFIX, plain_upload_name, upload_id, uploader
from kgp.ingest.readers import supported_suffixes
from kgp.serve.errors import HttpError

CHUNK = 1024 * 1024


def clean_name(name: str | None) -> str:
    """The upload's file name, NFKC-normalised, if it is a plain, visible name in a format
    kgp reads."""
    plain = plain_upload_name(name or "")
    if plain is None:
        raise HttpError(422, f"file: {name!r} {NOT_PLAIN}; send a name like report.pdf")
    name = plain
    suffix = Path(name).suffix.lower()
    if suffix not in supported_suffixes():
        readable = ", ".join(supported_suffixes())
        raise HttpError(415, f"file: {name!r}: kgp reads {readable}, not {suffix or 'no suffix'}")
    return name


def save_uploads(
    uploads: list[UploadFile], names: list[str], folder: Path, limit: int
) -> list[Path]:
    """Write the uploads to ``folder`` (made if missing) under ``names`` (as
    :func:`clean_name` gives them). Every file is staged in a temporary file first and moved
    into place only when all of them passed, so a refused or broken upload neither leaves a
    file behind nor replaces an earlier one."""
    private_dir(folder)
    staged: list[Path] = []
    try:
        for upload, name in zip(uploads, names, strict=True):
            staged.append(_stage(upload, name, folder, limit))
        targets = []
        for temporary, name in zip(staged, names, strict=True):
            target = folder / name
            os.replace(temporary, target)
            targets.append(target)
        return targets
    finally:
        for temporary in staged:
            temporary.unlink(missing_ok=True)


def _stage(upload: UploadFile, name: str, folder: Path, limit: int) -> Path:
    handle, path = tempfile.mkstemp(dir=folder, prefix=".upload-")
    temporary = Path(path)
    size = 0
    try:
        with os.fdopen(handle, "wb") as out:
            while chunk := upload.file.read(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise HttpError(
                        413,
                        f"file: {name!r} is over the {limit / 1024 / 1024:g} MB limit "
                        "(KGP_MAX_FILE_MB)",
                    )
                out.write(chunk)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


MIGRATED = ".upload-ids"  # in the uploads folder: its documents have their upload: ids


def migrate_uploads(kg: KnowledgeGraph, uploads: Path) -> list[str]:
    """Once per data directory: move documents uploaded before uploads had their own id space
    (id ``<key>/<file>``, the file still in ``uploads/<key>/``, the same content) to
    ``upload:<key>/<file>``, with their groups; returns the old ids moved. Every folder under
    ``uploads`` is made owner-only."""
    private_dir(uploads)
    if (uploads / MIGRATED).exists():
        return []
    files: dict[str, Path] = {}
    for folder in sorted(p for p in uploads.iterdir() if p.is_dir() and not p.is_symlink()):
        private_dir(folder)
        for file in sorted(folder.iterdir()):
            if file.is_file() and not file.name.startswith("."):
                files[f"{folder.name}/{file.name}"] = file
    moved = []
    with kg.store.reading_as(ADMIN_CALLER):
        nodes = kg.store.fetch_nodes([*files, *(UPLOAD_PREFIX + old for old in files)])
        moving: dict[tuple[str, ...], list[Path]] = {}
        for old, file in files.items():
            node = nodes.get(old, {})
            if node.get("label") != "Document" or UPLOAD_PREFIX + old in nodes:
                continue
            if node.get("sha256") != hashlib.sha256(file.read_bytes()).hexdigest():
                continue  # another document took that id since: not the upload's
            moving.setdefault(tuple(node.get("groups") or ()), []).append(file)
        for groups, paths in moving.items():
            done = kg.add_files(paths, root=uploads, groups=groups, id_prefix=UPLOAD_PREFIX)
            for path in paths:
                old = f"{path.parent.name}/{path.name}"
                new = upload_id(path.parent.name, path.name)
                if new in (*done.added, *done.changed) and kg.remove(old):
                    moved.append(old)
    write_private(uploads / MIGRATED, "")
    return moved


def upload_file(uploads: Path, doc_id: str) -> Path | None:
    """Where the upload ``doc_id`` is kept; None for a document that is no upload."""
    key = uploader(doc_id)
    if key is None:
        return None
    name = doc_id.removeprefix(UPLOAD_PREFIX).partition("/")[2]
    if not name or "/" in name or name.startswith("."):
        return None
    return uploads / key / name

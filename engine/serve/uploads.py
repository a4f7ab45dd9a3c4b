"""Uploaded files, saved where the server's sync reads them: one folder per API key, a plain file
name each (no folders, no ``..``, nothing hidden), within the size limit of ``kgp sync``
(``KGP_MAX_FILE_MB``), and only in formats kgp reads. A refused upload leaves nothing behind."""

import os
import re
import tempfile
from pathlib import Path

from fastapi import UploadFile
from kgp.ingest.readers import supported_suffixes
from kgp.serve.errors import HttpError

CHUNK = 1024 * 1024
_NAME = re.compile(r"[^/\\\x00-\x1f]{1,200}")


def clean_name(name: str | None) -> str:
    """The upload's file name if it is a plain, visible name in a format kgp reads."""
    if not name or not _NAME.fullmatch(name) or name.startswith(".") or ".." in name:
        raise HttpError(
            422, f"file: {name!r} is not a plain file name; send a name like report.pdf"
        )
    suffix = Path(name).suffix.lower()
    if suffix not in supported_suffixes():
        readable = ", ".join(supported_suffixes())
        raise HttpError(415, f"file: {name!r}: kgp reads {readable}, not {suffix or 'no suffix'}")
    return name


def save_uploads(uploads: list[UploadFile], folder: Path, limit: int) -> list[Path]:
    """Write the uploads to ``folder`` (made if missing) under their clean names. Every file is
    staged in a temporary file first and moved into place only when all of them passed, so a
    refused or broken upload neither leaves a file behind nor replaces an earlier one."""
    names = [clean_name(upload.filename) for upload in uploads]
    folder.mkdir(parents=True, exist_ok=True)
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

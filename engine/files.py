"""Files kgp keeps in its data directory hold the documents' text: they are owner-only
(folders 0700, files 0600), whatever the process's umask."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) readable by its owner only; an existing folder
    is narrowed to the owner."""
    missing = []
    for folder in [path, *path.parents]:
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        folder.mkdir(mode=PRIVATE_DIR, exist_ok=True)
    path.chmod(PRIVATE_DIR)
    return path


def write_private(path: Path, text: str, encoding: str = "utf-8") -> Path:
    """Write a file readable by its owner only."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(descriptor, "w", encoding=encoding) as handle:
        handle.write(text)
    path.chmod(PRIVATE_FILE)
    return path


def replace_private(path: Path, text: str, encoding: str = "utf-8") -> Path:
    """Write a file readable by its owner only, whole: a reader sees the old file or the new
    one, never a part (a new temporary file beside it, then a rename)."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding=encoding) as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, PRIVATE_FILE)
        os.replace(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return path

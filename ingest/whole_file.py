"""The whole matrix (:mod:`kgp.ingest.whole`) saved beside the graph, so that the next process to
open it links by the matrix from its first add instead of asking the vector index (or reading
every vector back from the server: 146 s at 1M passages). A process that holds the matrix when
it stops the server saves it (:meth:`GraphStore.on_last_stop`) with the stamp of the log the stop
leaves; one whose server loaded that same log, and that has written nothing since, restores it
(:meth:`GraphStore.log_stamp`). Any write in between, by any process, changes the log, and the
file is not used: a stale file is never trusted, only replaced by the next save.

The file: a header (magic, JSON), then at page-aligned offsets the ids (UTF-8, one per line,
grouped by document), each passage's degree and weakest score, and the vectors as float32 rows
with free rows after them (a sparse tail): the restore maps them copy-on-write, so the vectors
are read from the page cache as the products need them and rows added later go in the free
ones. Written to a temporary file, synced and renamed: a file is whole or absent."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import numpy as np
from kgp.files import PRIVATE_FILE
from kgp.ingest.whole import Whole
from kgp.stores.base import GraphStore

if TYPE_CHECKING:
    from kgp.ingest.memory import Memory

logger = logging.getLogger(__name__)

MAGIC = b"kgp whole matrix 1\n"
PAGE = 4096
CHUNK_ROWS = 65_536  # rows written at a time (96 MB of vectors at 384 dimensions)
NAME = "vectors"  # the file's name beside the graph (GraphStore.saved_file)


def free_rows(count: int) -> int:
    """Free rows after ``count`` saved ones: adds until the next save need no copy; pure."""
    return max(1024, count // 16)


def _aligned(offset: int) -> int:
    return -(-offset // PAGE) * PAGE


def save(path: Path, whole: Whole, stamp: str) -> None:
    """Save what ``whole`` holds (every passage's vector and neighbour-list summary) with the
    log's ``stamp``, replacing the file at ``path``."""
    ids, rows, documents = whole.saved_rows()
    count = len(ids)
    if not count:
        return  # an empty graph: a first sync starts its matrix anyway
    dimension = int(whole.vectors_of(rows[:1]).shape[1])
    degrees, weakest = whole.lists_of(rows)
    blob = "\n".join(ids).encode("utf-8")
    names = "\n".join(doc_id for doc_id, _ in documents).encode("utf-8")
    if blob.count(b"\n") != count - 1 or names.count(b"\n") != len(documents) - 1:
        return  # an id with a line break: not saved (it could not be read back)
    parts = {
        "ids": blob,
        "documents": names,
        "passages": np.asarray([n for _, n in documents], dtype=np.int32).tobytes(),
        "degrees": degrees.astype(np.int32).tobytes(),
        "weakest": weakest.astype(np.float64).tobytes(),
    }
    at, sections = PAGE, {}
    for name, part in parts.items():  # each section at a page after the header's page
        sections[name] = [at, len(part)]
        at = _aligned(at + len(part))
    matrix_at, capacity = at, count + free_rows(count)
    header = {
        "stamp": stamp,
        "k": whole.k,
        "count": count,
        "dimension": dimension,
        "capacity": capacity,
        "sections": sections,
        "matrix": matrix_at,
    }
    head = json.dumps(header).encode("utf-8")
    if len(MAGIC) + 8 + len(head) > PAGE:
        raise ValueError(f"a saved matrix's header of {len(head)} bytes is past its page")
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(MAGIC + len(head).to_bytes(8, "little") + head)
            for name, part in parts.items():
                handle.seek(sections[name][0])
                handle.write(part)
            handle.seek(matrix_at)
            for start in range(0, count, CHUNK_ROWS):
                vectors = whole.vectors_of(rows[start : start + CHUNK_ROWS])
                handle.write(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
            handle.truncate(matrix_at + 4 * dimension * capacity)  # the free rows: a hole
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def read_header(handle: BinaryIO) -> dict[str, Any] | None:
    """A saved matrix's header, read from the start of its file; None if it is not one."""
    if handle.read(len(MAGIC)) != MAGIC:
        return None
    return dict(json.loads(handle.read(int.from_bytes(handle.read(8), "little"))))


def restore(path: Path, stamp: str, k: int) -> Whole | None:
    """The matrix saved at ``path``, if it was saved with ``stamp`` for lists of ``k``
    neighbours; None otherwise (absent, stale, another k, or unreadable: said in the log)."""
    try:
        with path.open("rb") as handle:
            header = read_header(handle)
            if header is None:
                logger.warning("%s is not a saved matrix of this kgp: not used", path)
                return None
            if header["stamp"] != stamp or header["k"] != k:
                return None  # stale: another graph's, or another k's
            count, dimension = int(header["count"]), int(header["dimension"])
            parts = {}
            for name, (offset, length) in header["sections"].items():
                handle.seek(offset)
                parts[name] = handle.read(length)
        ids = parts["ids"].decode("utf-8").split("\n") if count else []
        names = parts["documents"].decode("utf-8").split("\n") if count else []
        passages = np.frombuffer(parts["passages"], dtype=np.int32).tolist()
        degrees = np.frombuffer(parts["degrees"], dtype=np.int32)
        weakest = np.frombuffer(parts["weakest"], dtype=np.float64)
        documents = list(zip(names, passages, strict=True))
        size = path.stat().st_size
        capacity = int(header["capacity"])
        if (
            len(ids) != count
            or len(degrees) != count
            or len(weakest) != count
            or sum(passages) != count
            or size < header["matrix"] + 4 * dimension * capacity
        ):
            raise ValueError("its parts do not add up")
        if not count:
            raise ValueError("it holds no passage")
        matrix = np.memmap(path, np.float32, "c", header["matrix"], (capacity, dimension))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        logger.warning("saved matrix %s is unreadable (%s): not used", path, exc)
        return None
    return Whole.restored(k, ids, documents, matrix, degrees, weakest)


def saved(
    store: GraphStore, k: int, alone: Callable[[], AbstractContextManager[object]]
) -> Whole | None:
    """The matrix saved beside ``store``'s graph by the last process that held it, while the
    graph is still the one it was saved from; None otherwise. Looked at within ``alone()``, in
    which none of the caller's writes is under way (one counted but not yet made would not
    show in the store's stamp)."""
    with alone():
        stamp = store.log_stamp()
        path = store.saved_file(NAME)
        return None if stamp is None or path is None else restore(path, stamp, k)


def save_at_stop(store: GraphStore, memory: Memory) -> None:
    """Have ``store`` save the matrix ``memory`` holds when its close stops the server, if it
    holds every passage and no other process wrote since (a store that keeps no files beside
    its graph saves nothing)."""
    path, era = store.saved_file(NAME), memory.held_era()
    if path is None or era is None:
        return
    whole = memory.whole
    # a client's kept linker counts its own syncers beside the store's era: (era, syncers)
    store_era = era[0] if isinstance(era, tuple) else era
    store.on_last_stop(cast(int, store_era), lambda stamp: save(path, whole, stamp))


def saved_state(store: GraphStore) -> dict[str, object] | None:
    """What ``kgp stats`` says of the matrix saved beside ``store``'s graph: its passages, its
    megabytes on disk, and whether it was saved with the log this store's start loaded
    (``current``: the next write restores it), with another (``stale``: never used, replaced by
    the next holder's save) or neither can be told (``unknown``: a store that joined a running
    server or wrote since); ``unreadable``; None without one."""
    path = store.saved_file(NAME)
    if path is None:
        return None
    try:
        with path.open("rb") as handle:
            header = read_header(handle)
        if header is None:
            raise ValueError("not a saved matrix")
        passages, saved_stamp = int(header["count"]), str(header["stamp"])
        disk = round(path.stat().st_blocks * 512 / 1e6, 1)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return {"state": "unreadable", "path": str(path)}
    stamp = store.log_stamp()
    state = "unknown" if stamp is None else "current" if stamp == saved_stamp else "stale"
    return {"state": state, "passages": passages, "disk_mb": disk, "path": str(path)}

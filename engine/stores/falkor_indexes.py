"""FalkorDB's indexes: which there are, and waiting for them to be built for as long as the
build goes on.

FalkorDB builds its indexes in the background (after loading a snapshot, and the vector index
after every start of kgp's embedded server, which sets it aside at the last close), and a write
waits until they are complete. The HNSW vector index is built entry by entry, in time that grows
faster than the graph (3 s at 10,000 passages here, 84 s at 100,000, 581 s at 307,000), so a
fixed limit (900 s until 2026-11-26) would refuse every write from a new process to a graph of
about a million passages, and each refusal's close drops the half-built index, so the next try
starts over. So the wait has no fixed end: it gives up only when the build stops moving (no entry
indexed for ``stall`` seconds), and tells a caller how far it is."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kgp.errors import StoreUnavailableError

INDEX_STALL_SECONDS = 600.0  # a build that indexes no entry for this long is stuck
NOTICE_SECONDS = 15.0  # how often a caller is told how far a long build is
_PROGRESS = re.compile(r"(\d+)\s*/\s*(\d+)")


def progress(status: str) -> tuple[int, int] | None:
    """Entries indexed and to index, from FalkorDB's status text ("[Indexing] 10068/60001:
    UNDER CONSTRUCTION"); None when it gives no count."""
    found = _PROGRESS.search(status)
    return (int(found.group(1)), int(found.group(2))) if found else None


def indexes_of(
    rows: Iterable[Mapping[str, Any]],
) -> tuple[set[tuple[str, str, str]], dict[str, Any]]:
    """``db.indexes()``'s rows (``list_indexes``) as (label or type, property, kind), and the
    passage vector index's options (dimension, efRuntime, ...; empty without one); pure."""
    indexed: set[tuple[str, str, str]] = set()
    vector: dict[str, Any] = {}
    for row in rows:
        label = str(row["label"])
        for prop, kinds in dict(row["types"]).items():
            indexed.update((label, str(prop), str(kind)) for kind in kinds)
        options = dict(row["options"] or {})
        if label == "Passage" and "embedding" in options:
            vector = dict(options["embedding"])
    return indexed, vector


def describe(building: Mapping[str, str]) -> str:
    """The labels being indexed and how far each is, for a person."""
    parts = []
    for label, status in sorted(building.items()):
        counted = progress(status)
        parts.append(f"{label} ({counted[0]:,} of {counted[1]:,})" if counted else label)
    return ", ".join(parts)


def wait_for_indexes(
    building: Callable[[], Mapping[str, str]],
    *,
    what: str,
    stall: float = INDEX_STALL_SECONDS,
    notice: Callable[[str], None] | None = None,
    poll: float = 0.05,
) -> None:
    """Wait until ``building()`` (label -> status of each index not yet complete) is empty.
    Raises :class:`StoreUnavailableError` naming ``what`` when no status changed for ``stall``
    seconds; tells ``notice`` how far the build is every ``NOTICE_SECONDS``."""
    started = moved = time.monotonic()
    told = started
    last: Mapping[str, str] | None = None
    while True:
        now_building = building()
        if not now_building:
            return
        now = time.monotonic()
        if now_building != last:
            last, moved = dict(now_building), now
        elif now - moved > stall:
            raise StoreUnavailableError(
                f"{what}: indexes of {describe(now_building)} built no further in {stall:.0f} s "
                "(the server may be stuck); stop every kgp process using this data directory "
                "and try again: the next start builds them anew"
            )
        if notice is not None and now - told >= NOTICE_SECONDS:
            told = now
            notice(
                f"waiting for the indexes FalkorDB builds after a start: {describe(now_building)} "
                f"entries, {now - started:.0f} s so far"
            )
        time.sleep(poll)

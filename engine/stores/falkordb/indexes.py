"""FalkorDB's indexes: which there are, and waiting for them to be built for as long as the
build goes on.

FalkorDB builds its indexes in the background (after loading a snapshot, or when a write creates
one), and a query meanwhile sees part of the graph: kgp waits until they are complete. The wait
has no fixed end, since a large graph's build takes long: it gives up only when the build stops
moving (no entry indexed for ``stall`` seconds), and tells a caller how far it is.

Indexes off the open path: FalkorDB 4.16 builds every index of a snapshot while it loads it,
before it answers anything. So the last user to stop the server leaves a snapshot without the
indexes only writes use (WRITE_INDEXES), and a write session builds them again and waits for
them (FalkorUpkeep.prepare_writes). The passages' vectors are in no FalkorDB index at all
(kgp.stores.falkordb.vectors)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kgp.access import ADMIN_CALLER
from kgp.errors import StoreUnavailableError
from kgp.stores.base import GraphStore
from kgp.text import index_terms

Indexed = set[tuple[str, str, str]]  # (label or relationship type, property, kind)

# Range indexes: (label or relationship type, query, properties).
RANGE_INDEXES = (
    ("Document", "index_document", ("id",)),
    ("Page", "index_page", ("id", "doc_id")),
    ("Table", "index_table", ("id", "doc_id")),
    ("Passage", "index_passage", ("id", "doc_id")),
    ("Passage", "index_passage_text_hash", ("text_hash",)),
    ("Passage", "index_passage_vkey", ("vkey",)),
    ("Keyword", "index_keyword", ("term",)),
    ("SIMILAR", "index_similar_score", ("score",)),
    ("NEEDS_KNN", "index_knn_flag", ("flag",)),
)


# Indexes only writes use (keywords looked up by term, edges by score, flags), set aside by the
# last user to stop the server (FalkorStore._park_indexes): a start loads every index of the
# snapshot before it answers, so a start without them is quicker
# (docs/decisions/0010-reopening-a-large-graph.md).
# (label or relationship type, property, query creating it, query dropping it.)
WRITE_INDEXES = (
    ("Keyword", "term", "index_keyword", "drop_index_keyword"),
    ("SIMILAR", "score", "index_similar_score", "drop_index_similar_score"),
    ("NEEDS_KNN", "flag", "index_knn_flag", "drop_index_knn_flag"),
)

INDEX_STALL_SECONDS = 600.0  # a build that indexes no entry for this long is stuck
NOTICE_SECONDS = 15.0  # how often a caller is told how far a long build is
_PROGRESS = re.compile(r"(\d+)\s*/\s*(\d+)")

PARK_SECONDS = 20.0  # how long a close waits for the dropped indexes to go, if nothing moves
# ...and for the snapshot without them: past it the server stops with the snapshot it has, and
# the next start builds those indexes while it loads, so this is long: a large graph's snapshot
# takes tens of seconds (docs/decisions/0010-reopening-a-large-graph.md)
PARK_COMPACT_SECONDS = 1800.0


def before_terms(store: GraphStore) -> bool:
    """Whether the graph records a schema older than 6, whose passages get their vector keys
    only in the migration: the open leaves the vector index beside the graph to it."""
    with store.reading_as(ADMIN_CALLER):
        rows = store.run("graph_schema")
    return bool(rows) and rows[0]["schema"] is not None and int(rows[0]["schema"]) < 6


def index_passage_terms(run: Callable[..., list[dict[str, Any]]], indexed: Indexed) -> bool:
    """Schema 6 (``run``: the store's): every passage gets its terms (kgp.text.index_terms), and
    the full-text index holds them instead of the texts; False where it did already. Writes
    every passage, so an older kgp's FalkorDB vector index goes first (FalkorDB 4.16 would keep
    an orphan vector for each), and the index of the texts too (each write would split its text
    again); stopped anywhere, the next open does it all again."""
    texts, terms = (("Passage", p, "FULLTEXT") in indexed for p in ("text", "terms"))
    if terms and not texts and not run("any_passage_without_terms"):
        return False
    if ("Passage", "embedding", "VECTOR") in indexed:
        run("drop_passage_vector", write=True)
    if texts or terms:  # (one full-text index a label: both go, and terms come back last)
        run("drop_passage_fulltext", write=True)
    documents = [str(r["id"]) for r in run("list_documents")]
    for at in range(0, len(documents), 500):
        rows = run("document_passage_texts", {"doc_ids": documents[at : at + 500]})
        for start in range(0, len(rows), 2000):
            batch = rows[start : start + 2000]
            given = [{"id": r["id"], "terms": index_terms(str(r["text"] or ""))} for r in batch]
            run("set_passage_terms", {"rows": given}, write=True)
    run("index_passage_fulltext", write=True)
    return True


def progress(status: str) -> tuple[int, int] | None:
    """Entries indexed and to index, from FalkorDB's status text ("[Indexing] 10068/60001:
    UNDER CONSTRUCTION"); None when it gives no count."""
    found = _PROGRESS.search(status)
    return (int(found.group(1)), int(found.group(2))) if found else None


def indexes_of(rows: Iterable[Mapping[str, Any]]) -> Indexed:
    """``db.indexes()``'s rows (``list_indexes``) as (label or type, property, kind); pure."""
    indexed: Indexed = set()
    for row in rows:
        label = str(row["label"])
        for prop, kinds in dict(row["types"]).items():
            indexed.update((label, str(prop), str(kind)) for kind in kinds)
    return indexed


def unfinished(rows: Iterable[Sequence[Any]]) -> dict[str, str]:
    """The labels whose indexes are being built, with FalkorDB's status of each, from
    ``index_status``'s rows (label, types, status); pure."""
    return {
        str(label): str(status) for label, _, status in rows if "OPERATIONAL" not in str(status)
    }


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
        seen = now_building
        if seen != last:
            last, moved = seen, now
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

"""FalkorDB's indexes: which there are, and waiting for them to be built for as long as the
build goes on.

FalkorDB builds its indexes in the background (after loading a snapshot, and the vector index
after every start of kgp's embedded server, which sets it aside at the last close), and a write
waits until they are complete. The HNSW vector index is built entry by entry, in time that grows
faster than the graph (3 s at 10,000 passages here, 84 s at 100,000, 581 s at 307,000), so a
fixed limit (900 s until 2026-11-26) would refuse every write from a new process to a graph of
about a million passages, and each refusal's close drops the half-built index, so the next try
starts over. So the wait has no fixed end: it gives up only when the build stops moving (no entry
indexed for ``stall`` seconds), and tells a caller how far it is.

Indexes off the open path: FalkorDB 4.16 builds every index of a snapshot while it loads it,
before it answers anything, and the HNSW vector index entry by entry (37 s at 50,000 passages).
So the last user to stop the server leaves a snapshot without the vector index and without the
indexes only writes use (WRITE_INDEXES); a start loads the graph without them and builds the
vector index again in the background, answering meanwhile (searches exact until it is
complete), and writes build the others again and wait for all (FalkorStore.prepare_writes). A
stop after nothing but that build takes it back out of the log instead (kgp.stores.falkor_log)."""

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


# Indexes only writes use (keywords looked up by term, edges by score, flags), set aside with
# the vector index by the last user to stop the server (FalkorStore._park_indexes): a start
# loads every index of the snapshot before it answers (a 50,000-passage graph: 4.25 s with
# these, 2.42 s without). (label or relationship type, property, query creating it, query
# dropping it.) None is on Passage: an index added to the passages' label would orphan every
# vector (see above).
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
# the next start builds those indexes while it loads (at 1M passages the HNSW index alone takes
# many minutes), so this is long: writing the snapshot took 19 s at 305,000 passages
PARK_COMPACT_SECONDS = 1800.0


def before_terms(store: GraphStore) -> bool:
    """Whether the graph records a schema older than 6, whose migration writes every passage
    with the vector index set aside, then builds it: the open leaves it to the migration
    (dropped during a build the open began, it waited for a batch of it: 3.3 s of a 100k
    graph's migration). A graph that records none builds it at the open, as before."""
    with store.reading_as(ADMIN_CALLER):
        rows = store.run("graph_schema")
    return bool(rows) and rows[0]["schema"] is not None and int(rows[0]["schema"]) < 6


def index_passage_terms(run: Callable[..., list[dict[str, Any]]], indexed: Indexed) -> bool:
    """Schema 6 (``run``: the store's): every passage gets its terms (kgp.text.index_terms), and
    the full-text index holds them instead of the texts; False where it did already. Writes
    every passage, so the vector index goes first (FalkorDB 4.16 would keep an orphan vector
    for each; the store builds it again), and the index of the texts too (each write would
    split its text again); stopped anywhere, the next open does it all again."""
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


def indexes_of(rows: Iterable[Mapping[str, Any]]) -> tuple[Indexed, dict[str, Any]]:
    """``db.indexes()``'s rows (``list_indexes``) as (label or type, property, kind), and the
    passage vector index's options (dimension, efRuntime, ...; empty without one); pure."""
    indexed: Indexed = set()
    vector: dict[str, Any] = {}
    for row in rows:
        label = str(row["label"])
        for prop, kinds in dict(row["types"]).items():
            indexed.update((label, str(prop), str(kind)) for kind in kinds)
        options = dict(row["options"] or {})
        if label == "Passage" and "embedding" in options:
            vector = dict(options["embedding"])
    return indexed, vector


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

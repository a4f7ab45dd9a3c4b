"""The embedded store's upkeep: the vector index beside the graph counted, sampled and built
again; the write indexes the last stop set aside built again before writes
(docs/decisions/0002-falkordb-workarounds.md, 7); checkpoints that compact the append-only file
and save the vector index; snapshots for backups, which pause the writes of every process on
the data directory for their first moment; and the schema steps only this store takes."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from kgp.access import ADMIN_CALLER
from kgp.locks import WriteGate
from kgp.stores.falkordb.indexes import (
    INDEX_STALL_SECONDS,
    WRITE_INDEXES,
    Indexed,
    index_passage_terms,
)
from kgp.stores.falkordb.server import EmbeddedServer
from kgp.stores.falkordb.snapshot import take_snapshot
from kgp.stores.falkordb.vectors import PassageVectors
from kgp.stores.health import IndexHealth
from kgp.stores.maintenance import KeptStore, Row, Upkeep
from kgp.stores.model import GraphCounts


class KeptFalkorStore(KeptStore, Protocol):
    """What the embedded store's upkeep needs of it (kgp.stores.falkordb.FalkorStore)."""

    vectors: PassageVectors
    server: EmbeddedServer

    def _indexes(self) -> Indexed: ...

    def _wait_for_indexes(self, stall: float = INDEX_STALL_SECONDS) -> None: ...

    def _seal_indexes(self) -> None: ...

    def _locked_write(self, name: str, parameters: Mapping[str, Any], what: str) -> None: ...

    def _open_vectors(self) -> None: ...

    def counts(self) -> GraphCounts: ...


class FalkorUpkeep(Upkeep):
    """``FalkorStore.upkeep``."""

    store: KeptFalkorStore

    @cached_property
    def gate(self) -> WriteGate:
        """Every process's writes on the data directory, which a backup pauses."""
        return WriteGate(self.store.server.home)

    def vector_index_entries(self) -> int:
        self.store.vectors.catch_up()
        return len(self.store.vectors)

    def rebuild_vector_index(self) -> None:
        """Build the index beside the graph anew from the graph's vectors (kgp maintain)."""
        self.store.vectors.clear()
        self.store._open_vectors()

    def index_health(self, sample: int = 10) -> IndexHealth:
        """The index's entries and its recall@10 against exact search, over about ``sample``
        passages drawn at random (drawn again, wider, where a draw kept none)."""
        with self.store.reading_as(ADMIN_CALLER):
            live = self.vector_index_entries()
            if not live:
                return IndexHealth("none", 0)
            share, rows = min(1.0, 2.0 * sample / live), list[Row]()
            while sample and not rows:
                rows = self._run("sample_passages", {"share": share, "limit": sample})
                if share >= 1.0:
                    break
                share = min(1.0, 4.0 * share)
        if not rows:
            return IndexHealth("complete", live)
        recall = self.store.vectors.recall_at_10([row["embedding"] for row in rows])
        return IndexHealth("complete", live, len(rows), recall)

    def prepare_writes(self) -> None:
        """Build the write indexes the last stop set aside and wait until they are complete."""
        with self.store.reading_as(ADMIN_CALLER):
            indexed = self.store._indexes()
        built: list[str] = []
        if any((label, prop, "RANGE") not in indexed for label, prop, _, _ in WRITE_INDEXES):
            # (one process builds them)
            with self.store.server.locked(), self.store.reading_as(ADMIN_CALLER):
                built = self._build_write_indexes()
        self.store._wait_for_indexes()
        if built:
            self.store._seal_indexes()

    def _build_write_indexes(self) -> list[str]:
        """Create the indexes only writes use that the graph lacks, under the server's lock
        (held by the caller); the labels or types of those it created."""
        indexed = self.store._indexes()
        if ("Passage", "id", "RANGE") not in indexed:
            return []  # no schema yet: ensure_schema makes every index
        built = []
        for label, prop, create, _ in WRITE_INDEXES:
            if (label, prop, "RANGE") not in indexed:
                self.store._locked_write(create, {}, "cannot build an index writes use")
                built.append(label)
        return built

    def checkpoint(self, *, force: bool = False) -> bool:
        """Compact the append-only file: safe whenever (a failed write reloads the server); and
        save the index beside the graph, with ``force`` or once enough of it changed."""
        if force or self.store.vectors.due():
            self.store.vectors.save()
        log = self.store.server.log
        return log.compact(min_bytes=0, growth=-1.0) if force else log.compact()

    def writes(self) -> AbstractContextManager[None]:
        return self.gate.writing()

    def snapshot(self, path: Path, pause_timeout: float) -> GraphCounts:
        """The server's snapshot to ``path`` and, beside it, the index beside the graph as this
        process has it (a start brings it up to the graph, as every open does)."""

        def counted() -> GraphCounts:
            with self.store.reading_as(ADMIN_CALLER):
                return self.store.counts()

        counts = take_snapshot(
            self.store.server, self.gate, path, pause_timeout=pause_timeout, counted=counted
        )
        self.store.vectors.save()
        index = self.store.vectors.path
        if index is not None and index.is_file():
            shutil.copyfile(index, path.parent / index.name)
            (path.parent / index.name).chmod(0o600)
        return counts

    def _migrate_to_6(self) -> list[str]:
        if not index_passage_terms(self._run, self.store._indexes()):
            return []
        self.store._wait_for_indexes()  # (the new full-text index: questions need it)
        return ["schema 6: the full-text index holds each passage's stemmed terms"]

    def _migrate_to_7(self) -> list[str]:
        """Schema 7: FalkorDB's vector index goes; each passage gets its key in the index beside
        the graph (.vectors), which is built from the stored vectors. Nothing to say
        where neither was needed (a graph kgp 7 wrote, recorded older by hand)."""
        done = ("Passage", "embedding", "VECTOR") in self.store._indexes()
        if done:
            self._run("drop_passage_vector", write=True)
        while keyed := int(self._run("key_passages", {"limit": 5000}, write=True)[0]["n"]):
            done = done or keyed > 0
        self.store._open_vectors()
        return ["schema 7: vectors in an index beside the graph"] if done else []

"""FalkorDB's schema as the embedded store makes it: its indexes, and the vector index's
options and rebuild (:class:`~kgp.stores.falkor.FalkorStore` polls the server for their builds)."""

from __future__ import annotations

from typing import Any

from kgp import errors
from kgp.errors import ConfigurationError
from kgp.stores import health
from kgp.stores.base import GraphStore
from kgp.stores.falkor_indexes import INDEX_STALL_SECONDS, RANGE_INDEXES, Indexed, indexes_of
from kgp.stores.health import too_many_orphans


class FalkorSchema(GraphStore):
    """The indexes of :class:`~kgp.stores.falkor.FalkorStore`'s graph."""

    ef_runtime: int | None  # the vector index's efRuntime; None: by the graph's size
    vector_m: int  # and its M (HNSW links per entry)

    def _wait_for_indexes(self, stall: float = INDEX_STALL_SECONDS, vectors: bool = True) -> None:
        raise NotImplementedError  # (the store's: it polls its server)

    def _seal_indexes(self) -> None:
        raise NotImplementedError  # (the store's: a compaction)

    def rebuild_vector_index(self) -> None:
        """Drop the vector index and build it again from the passages: FalkorDB 4.16 never
        removes a vector from it (the vector of a deleted passage, or the old one of a passage
        written again, stays as an orphan that takes a place in every nearby answer; FalkorDB
        issue #2179). Waits until the new index is complete. A graph without one (a first
        sync stopped while it was set aside: defer_vector_index) gets it built."""
        indexed = self.vector_dimension()
        dimension = self.dimension or indexed
        if dimension is None:
            return  # no schema yet
        self.dimension = dimension
        params = self.vector_options(dimension)  # (a read: first)
        if indexed is not None:
            self.run("drop_passage_vector", write=True)
        self.run("index_passage_vector", params, write=True)
        self._wait_for_indexes()

    def needs_healing(self) -> bool:
        """Past a fifth of the index's entries orphaned, and at least health.ORPHAN_MIN."""
        return too_many_orphans(*self.vector_index_entries())

    def vector_dimension(self) -> int | None:
        dimension = self._indexes()[1].get("dimension")  # (no options without an index)
        return None if dimension is None else int(dimension)

    def search_breadth(self) -> int:
        return int(self._indexes()[1].get("efRuntime", 0))

    def vector_ef(self) -> int:
        """KGP_VECTOR_EF, or by the graph's size (ef_for: each start builds the index again)."""
        return self.ef_runtime or health.ef_for(self.count_passages())

    def vector_options(self, dimension: int) -> dict[str, int]:
        """``index_passage_vector``'s parameters: a vector index built now (KGP_VECTOR_M)."""
        return {"dimension": dimension, "ef_runtime": self.vector_ef(), "m": self.vector_m}

    def _indexes(self) -> tuple[Indexed, dict[str, Any]]:
        """The indexes as (label or type, property, kind), and the vector index's options."""
        return indexes_of(self.run("list_indexes"))

    def ensure_schema(self, dimension: int) -> None:
        """Create the indexes the graph lacks (each checked first, so making it again after a
        stuck server's restart is safe: FalkorDB 4.16 deadlocked at a new graph's first one)."""
        errors.again_after_restart(lambda: self._ensure_schema(dimension))

    def _ensure_schema(self, dimension: int) -> None:
        indexed, vector = self._indexes()
        if vector and int(vector["dimension"]) != dimension:
            raise ConfigurationError(
                f"{self.describe()} holds {vector['dimension']}-dimension embeddings but the "
                f"encoder gives {dimension}; use the graph's encoder or a new data directory"
            )
        created = added_to_passages = False
        for label, query, props in RANGE_INDEXES:
            if not all((label, prop, "RANGE") in indexed for prop in props):
                self.run(query, write=True)
                created = True
                added_to_passages |= label == "Passage"
        if ("Passage", "terms", "FULLTEXT") not in indexed:
            self.run("index_passage_fulltext", write=True)
            created = added_to_passages = True
        if ("Passage", "embedding", "VECTOR") not in indexed:
            self.run("index_passage_vector", self.vector_options(dimension), write=True)
            created = True
        elif added_to_passages and self.vector_index_bound():
            self.rebuild_vector_index()
        self._wait_for_indexes(vectors=created)  # (a start's build: prepare_writes' to wait for)
        if created:
            self._seal_indexes()
        self.dimension = dimension

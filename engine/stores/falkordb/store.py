"""``FalkorStore``: the embedded default, a FalkorDB graph in kgp's data directory."""

from __future__ import annotations

import atexit
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from hashlib import sha256
from pathlib import Path
from typing import Any, Self

import redis
from falkordb import FalkorDB, Graph
from kgp import cypher, errors
from kgp.access import ADMIN_CALLER
from kgp.errors import (
    ConfigurationError,
    StoreError,
    StoreRestartedError,
    StoreUnavailableError,
)
from kgp.stores.base import GraphStore
from kgp.stores.coverage import reads_all
from kgp.stores.falkordb.indexes import (
    INDEX_STALL_SECONDS,
    PARK_COMPACT_SECONDS,
    PARK_SECONDS,
    RANGE_INDEXES,
    WRITE_INDEXES,
    Indexed,
    before_terms,
    indexes_of,
    unfinished,
    wait_for_indexes,
)
from kgp.stores.falkordb.params import params_header, plain
from kgp.stores.falkordb.reply import Reads
from kgp.stores.falkordb.server import LOAD_TIMEOUT, STALL_SECONDS, EmbeddedServer
from kgp.stores.falkordb.stall import StallWatch
from kgp.stores.falkordb.upkeep import FalkorUpkeep
from kgp.stores.falkordb.vectors import PassageVectors
from kgp.stores.maintenance import Row
from kgp.stores.model import DocumentGraph, StoredPassage, passage_document, stored_passage
from kgp.stores.rows import documents_rows, write_whole
from kgp.stores.tracer import Tracer


class FalkorStore(GraphStore):
    """The embedded store. ``open()`` starts (or joins) the data directory's server. Ids are
    unique by construction: a document's nodes are deleted and re-created by one atomic query,
    with ids derived from the document id, and indexed. FalkorDB's unique constraints crashed
    FalkorDB 4.16 (SIGSEGV in ``EnforceUniqueEntity``) in the contract tests."""

    dialect = "falkordb"
    fulltext_or = " | "  # (RediSearch's query syntax)
    covered_reads = True  # one server, one graph: a client's queries see it in one order
    short_writes = True  # FalkorDB 4.16 at times drops a write's keyword links (rows.write_whole)
    terms_indexed = True  # a start builds its full-text index again: kgp stems (kgp.text)
    upkeep_kind = FalkorUpkeep

    def __init__(
        self,
        *,
        data_dir: Path,
        graph: str = "kgp",
        tracer: Tracer | None = None,
        start_timeout: float = 30.0,
        stall_seconds: float = STALL_SECONDS,
        load_timeout: float = LOAD_TIMEOUT,
    ) -> None:
        super().__init__(tracer=tracer)
        self.server = EmbeddedServer(
            data_dir, start_timeout=start_timeout, load_timeout=load_timeout
        )
        self.server.on_wait = self.waiting  # its load: told to on_wait as it is set then
        self.graph_name = graph
        self._db: FalkorDB | None = None
        self._graph: Graph | None = None
        self._reads: Reads | None = None  # reads' own connections (RESP3)
        # the passages' vectors, in an index of kgp's own beside the graph (.vectors)
        self.vectors = PassageVectors(self._run_admin, vectors_path(self.server.home, graph))
        # stops a server that holds a query unanswered without working (kgp.stores.falkordb.stall)
        self._watch = StallWatch(self.server.server_pid, seconds=stall_seconds)

    def describe(self) -> str:
        return f"embedded FalkorDB in {self.server.home} (graph {self.graph_name!r})"

    def open(self) -> Self:
        if self._graph is not None:
            return self
        self.server.start()
        atexit.register(self.close)
        self._connect()
        if not before_terms(self):  # (a migration opens the index after it)
            self._open_vectors()
        return self

    def _open_vectors(self) -> None:
        self.vectors.open(self.vector_dimension())

    def _run_admin(self, name: str, parameters: Mapping[str, Any] | None = None) -> list[Row]:
        """A read of the index beside the graph's upkeep, which sees every passage whoever
        searches (a search reads back only what its caller may read: knn_passages)."""
        with self.reading_as(ADMIN_CALLER):
            return self.run(name, parameters)

    def close(self) -> None:
        atexit.unregister(self.close)
        try:
            if self._graph is not None and self.vectors.due():
                self.vectors.save()
            park = self._park_indexes if self._graph is not None else None
            self.server.stop(before_shutdown=park)  # the last user sets indexes aside
        finally:
            self._watch.close()
            self._disconnect()
            self._graph = None

    # -- schema: the graph's indexes (its vectors are in .vectors, not among them) ------------

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

    # -- indexes off the open path (why: kgp.stores.falkordb.indexes) ------------------------

    def _park_indexes(self) -> None:
        """Before the last user stops the server: the indexes only writes use go, and the
        snapshot is written without them."""
        with self.reading_as(ADMIN_CALLER):
            indexed = self._indexes()
        drops = [d for label, prop, _, d in WRITE_INDEXES if (label, prop, "RANGE") in indexed]
        for name in drops:
            self._locked_write(name, {}, "cannot set an index aside")
        if drops:
            self._wait_for_indexes(stall=PARK_SECONDS)
            self.server.log.compact(min_bytes=0, growth=-1.0, timeout=PARK_COMPACT_SECONDS)

    def _seal_indexes(self) -> None:
        """Compact new indexes into the snapshot: FalkorDB 4.16 cannot use an index its log
        creates until the replay ends, so replayed lookups scan and a start after a killed first
        sync is minutes instead of seconds (docs/decisions/0010-reopening-a-large-graph.md).
        Writes need not wait for it: they go to the log's part after the new snapshot (a kill
        before the snapshot is done replays them with scans)."""
        self.server.log.compact(min_bytes=0, growth=-1.0, wait=False)

    def _locked_write(self, name: str, parameters: Mapping[str, Any], what: str) -> None:
        """A schema write under the data directory's lock: not by run(), whose reload takes it."""
        try:
            self.graph.query(params_header(parameters) + cypher.load(self.dialect, name))
        except redis.ResponseError as exc:
            raise StoreError(f"{self.describe()}: {what}: {exc}") from None

    # -- vectors (.vectors) ------------------------------------------------------------------

    def write_documents(self, graphs: Sequence[DocumentGraph]) -> None:
        if not graphs:
            return
        rows = documents_rows(graphs, self.dimension, with_terms=self.terms_indexed)
        written = write_whole(self, rows)
        self.vectors.removed(written.get("replaced_keys") or [])
        new = rows["passages"] + rows["table_passages"]
        first = int(written.get("first_key") or 0)
        vectors = {first + r["slot"]: r["embedding"] for r in new}
        self.vectors.added(vectors, first, first + len(new))

    def delete_document(self, doc_id: str) -> bool:
        rows = self.run("delete_document", {"id": doc_id}, write=True)
        self.vectors.removed(rows[0]["keys"] if rows else [])
        return bool(rows and rows[0]["found"])

    def passage_vectors(self, ids: Iterable[str]) -> dict[str, StoredPassage]:
        """Passages by id, their vectors from the index beside the graph (no floats sent as
        text); the graph's for keys the index does not hold yet (another process wrote them
        since its last catch-up)."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        rows = self.run("passage_texts", {"ids": id_list})  # (with each passage's key)
        held = self.vectors.get([int(r["vkey"]) for r in rows if r["vkey"] is not None])
        out: dict[str, StoredPassage] = {}
        for row in rows:
            vector = held.get(int(row["vkey"])) if row["vkey"] is not None else None
            if vector is not None:
                out[str(row["id"])] = replace(stored_passage(row), embedding=vector)
        missing = [str(r["id"]) for r in rows if str(r["id"]) not in out]
        return out | super().passage_vectors(missing) if missing else out

    def _knn_candidates(self, rows: list[dict[str, Any]]) -> list[Row]:
        """``knn_candidates``' rows from the index beside the graph: each row's keys to its
        depth, read back through the graph with the caller's access filter."""
        found, ids = self._searched(rows)
        if self.vectors.behind(ids.pop(-1, None)):  # another process wrote: caught up, again
            self.vectors.catch_up()
            found, ids = self._searched(rows)
            ids.pop(-1, None)
        bound, answers = len(self.vectors), []
        for row, entries in zip(rows, found, strict=True):
            bar = -2.0 if row["bar"] is None else float(row["bar"])
            entries = entries[: row["limit"]]
            exclude = set(row["exclude"])
            hits = []
            for key, similarity in entries:
                pid = str(ids[key]) if similarity > bar and ids.get(key) is not None else None
                if pid is None or pid in exclude or passage_document(pid) == row["exclude_doc"]:
                    continue
                hits.append([pid, similarity])
            lowest = entries[-1][1] if entries else None
            answers.append({"i": row["i"], "bound": bound, "lowest": lowest, "hits": hits})
        return answers

    def _searched(
        self, rows: list[dict[str, Any]]
    ) -> tuple[list[list[tuple[int, float]]], dict[int, Any]]:
        """Each row's keys to its depth, and the passage id of each key above its row's bar
        (None: gone, or not the caller's to read); under the key -1, the graph's key counter,
        which the same query reads."""
        found = self.vectors.search([r["vector"] for r in rows], max(r["limit"] for r in rows))
        wanted: set[int] = set()
        for row, entries in zip(rows, found, strict=True):
            bar = -2.0 if row["bar"] is None else float(row["bar"])
            wanted.update(key for key, sim in entries[: row["limit"]] if sim > bar)
        every = reads_all(self, self.caller_now())  # (a query that reads no document)
        query = "knn_passages_all" if every else "knn_passages"
        joined = self.run(query, {"keys": sorted(wanted)})
        if not joined:  # (no graph yet)
            return found, {-1: None}
        # (a key another process removed gets no id: this index keeps it until its next open)
        ids: dict[int, Any] = {int(key): pid for key, pid in joined[0]["found"]}
        ids[-1] = int(joined[0]["next"])
        return found, ids

    def _index_rows(self) -> list[list[Any]]:
        """``index_status``'s rows: each index version's label, fields and status."""
        try:
            return list(self.graph.ro_query(cypher.load(self.dialect, "index_status")).result_set)
        except redis.ResponseError:
            return []  # no graph yet: nothing to index
        except (redis.ConnectionError, redis.TimeoutError) as exc:  # (closed under a keeper)
            raise StoreUnavailableError(f"lost {self.describe()}: {exc}") from None

    def _opened(self) -> tuple[Graph, Reads]:
        if self._graph is None or self._reads is None:
            raise StoreUnavailableError(f"{self.describe()} is not open; call open() first")
        return self._graph, self._reads

    @property
    def graph(self) -> Graph:
        return self._opened()[0]

    def _execute(self, query: str, parameters: Mapping[str, Any], *, write: bool) -> list[Row]:
        text = params_header(parameters) + query
        for attempt in (1, 2):
            try:
                if not write:  # (over RESP3: kgp.stores.falkordb.reply)
                    with self._watch.watching():
                        return self._opened()[1].rows(text)
                with self._watch.watching():
                    result = self.graph.query(text)
                break
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                if self._watch.killed_now():
                    lost, crashed = self._watch.stopped(self.describe(), write=write), False
                elif self.server.crashed_now():  # (read before the start rotates its log)
                    lost, crashed = self.server.lost(exc), True
                else:
                    raise StoreUnavailableError(self.server.lost(exc)) from None
                if self.server.holding:  # the restart takes the lock this process holds
                    raise StoreUnavailableError(f"{lost}; the next open starts it again") from None
                self._reload(crashed=crashed)
                if write or attempt == 2:  # a read is asked again, once
                    raise StoreRestartedError(
                        f"{lost}; it was started again from its log, which holds every write it "
                        "acknowledged; run the command again"
                    ) from None
            except redis.ResponseError as exc:
                if not write and "empty key" in str(exc):
                    return []  # the graph does not exist yet: reads find nothing
                reason = str(exc).splitlines()[0]
                if write:
                    self._reload()
                    raise StoreError(
                        f"FalkorDB rejected a write ({reason}); nothing of it was kept"
                    ) from None
                raise StoreError(f"FalkorDB rejected a query: {reason}") from None
        header = [column[1] for column in (result.header or [])]
        names = [h.decode() if isinstance(h, bytes) else str(h) for h in header]
        return [dict(zip(names, map(plain, row), strict=True)) for row in result.result_set]

    def _connect(self) -> None:
        """Connect and wait for the indexes."""
        self._db = FalkorDB(unix_socket_path=str(self.server.socket_path), socket_timeout=600)
        self._graph = self._db.select_graph(self.graph_name)
        self._reads = Reads(self.server.socket_path, self.graph_name)
        self._wait_for_indexes()

    def _wait_for_indexes(self, stall: float = INDEX_STALL_SECONDS) -> None:
        """After a start or reload, FalkorDB rebuilds indexes in the background, and queries
        meanwhile see part of the graph: wait until every index is operational, as long as the
        build goes on (:mod:`kgp.stores.falkordb.indexes`)."""
        building = lambda: unfinished(self._index_rows())  # noqa: E731
        wait_for_indexes(building, what=self.describe(), stall=stall, notice=self.on_wait)

    def _disconnect(self) -> None:
        clients, self._db, self._reads = (self._db and self._db.connection, self._reads), None, None
        for client in filter(None, clients):
            client.close()

    def _reload(self, *, crashed: bool = False) -> None:
        """Reload the graph from the append-only file, which never holds a failed query: after a
        failed write (its rollback is not trusted) or a stuck server's stop (server.reload), or
        start it again after a crash (server.revive: FalkorDB 4.16 crashes at times)."""
        self._disconnect()
        self.server.revive() if crashed else self.server.reload()
        self._connect()


def vectors_path(home: Path, graph: str) -> Path:
    """Where the index of ``graph``'s vectors lives, beside the server's files (owner-only)."""
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", graph)[:40]
    return home / f"index-{readable}-{sha256(graph.encode()).hexdigest()[:8]}.usearch"

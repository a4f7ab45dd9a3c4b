"""``FalkorStore``: the embedded default, a FalkorDB graph in kgp's data directory."""

from __future__ import annotations

import atexit
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import redis
from falkordb import FalkorDB, Graph
from kgp import cypher
from kgp.access import ADMIN_CALLER
from kgp.errors import StoreError, StoreRestartedError, StoreUnavailableError
from kgp.stores import health
from kgp.stores.falkor_indexes import (
    INDEX_STALL_SECONDS,
    PARK_COMPACT_SECONDS,
    PARK_SECONDS,
    WRITE_INDEXES,
    IndexPolls,
    before_terms,
    index_passage_terms,
    progress,
    unfinished,
    wait_for_indexes,
)
from kgp.stores.falkor_params import params_header, plain
from kgp.stores.falkor_reply import Reads
from kgp.stores.falkor_saved import LoadedLog, SavedBeside
from kgp.stores.falkor_schema import FalkorSchema
from kgp.stores.falkor_server import LOAD_TIMEOUT, STALL_SECONDS, EmbeddedServer
from kgp.stores.health import IndexHealth, built_with, sampled_recall
from kgp.stores.maintenance import Row
from kgp.stores.own_writes import OwnWrites, server_count
from kgp.stores.stall import StallWatch
from kgp.stores.tracer import Tracer


class FalkorStore(SavedBeside, FalkorSchema):
    """The embedded store. ``open()`` starts (or joins) the data directory's server. Ids are
    unique by construction: a document's nodes are deleted and re-created by one atomic query,
    with ids derived from the document id, and indexed. FalkorDB's unique constraints crashed
    FalkorDB 4.16 (SIGSEGV in ``EnforceUniqueEntity``) in the contract tests."""

    dialect = "falkordb"
    covered_reads = True  # one server, one graph: a client's queries see it in one order
    short_writes = True  # FalkorDB 4.16 at times drops a write's keyword links (rows.write_whole)
    terms_indexed = True  # a start builds its full-text index again: kgp stems (kgp.text)

    def __init__(
        self,
        *,
        data_dir: Path,
        graph: str = "kgp",
        tracer: Tracer | None = None,
        start_timeout: float = 30.0,
        ef_runtime: int | None = None,
        vector_m: int | None = None,
        park: bool = True,
        stall_seconds: float = STALL_SECONDS,
        load_timeout: float = LOAD_TIMEOUT,
    ) -> None:
        super().__init__(tracer=tracer)
        self.server = EmbeddedServer(
            data_dir, start_timeout=start_timeout, load_timeout=load_timeout
        )
        self.server.on_wait = self.waiting  # its load: told to on_wait as it is set then
        self.graph_name = graph
        self.ef_runtime = ef_runtime  # the vector index's efRuntime; None: by the graph's size
        self.vector_m = vector_m or health.VECTOR_M  # and its M (HNSW links per entry)
        self._db: FalkorDB | None = None
        self._graph: Graph | None = None
        self._build_seen: tuple[float, int] | None = None  # a vector index build first seen
        self._reads: Reads | None = None  # reads' own connections (RESP3)
        self._vectors_ready = True  # False while the vector index is built after a start
        # stops a server that holds a query unanswered without working (kgp.stores.stall)
        self._watch = StallWatch(self.server.server_pid, seconds=stall_seconds)
        self._own = OwnWrites(lambda: server_count(self._db))  # whether others wrote (writes_era)
        self._log = LoadedLog(self._own)  # whether it is the graph the server loaded (log_stamp)
        self.park = park  # the last user to close sets the vector index aside (see below)

    def describe(self) -> str:
        return f"embedded FalkorDB in {self.server.home} (graph {self.graph_name!r})"

    def open(self) -> Self:
        if self._graph is not None:
            return self
        self.server.start()
        atexit.register(self.close)
        self._connect(vectors=False)  # (a vector index built after a killed server's log)
        self._log.opened(self.server.loaded)
        if before_terms(self) or self.restore_vector_index():  # (a migration's: after it)
            return self
        if self._vectors_ready and self.server.launched:
            # a replayed log that creates the vector index (an older kgp's) leaves orphans
            self.heal_vector_index()
        return self

    def close(self) -> None:
        atexit.unregister(self.close)
        try:
            park = self._park_indexes if self.park and self._graph is not None else None
            before, after = self._log.stopping(park)  # the last user sets indexes aside
            self.server.stop(before_shutdown=before, after_shutdown=after)
        finally:
            self._watch.close()
            self._disconnect()
            self._graph = None

    # -- indexes off the open path (why: kgp.stores.falkor_indexes) ------------------------

    def _park_indexes(self) -> bool:
        """Before the last user stops the server; True when the stop is to take the start's
        index build back out of the log (nothing else written since, no write index loaded)."""
        with self.reading_as(ADMIN_CALLER):
            indexed, vector = self._indexes()
            present = [
                (label, d)
                for label, prop, _, d in WRITE_INDEXES
                if (label, prop, "RANGE") in indexed
            ]
            log = self.server.log  # (write indexes the start built go back with its writes)
            if log.only_start_writes() and {p for p, _ in present} <= set(log.start_built()):
                return True
            drops = [d for _, d in present]
            if vector and self.run("any_passage_vector"):  # (an empty one costs nothing)
                # first: its build, still going on after a first sync, held each other drop
                drops.insert(0, "drop_passage_vector")  # back (100k: the close 35 -> 8 s)
        for name in drops:
            self._locked_write(name, {}, "cannot set an index aside")
        if drops:
            self._wait_for_indexes(stall=PARK_SECONDS)
            self.server.log.compact(min_bytes=0, growth=-1.0, timeout=PARK_COMPACT_SECONDS)
        return False

    def defer_vector_index(self) -> bool:  # HNSW inserts: a quarter of a 50k first sync
        with self.reading_as(ADMIN_CALLER):
            empty = self.vector_dimension() is not None and not self.count_passages()
        if empty:
            self.run("drop_passage_vector", write=True)
            # a busy FalkorDB 4.16 listed the dropped index to a later query (a first write
            # then saw it): the writes wait until the drop shows, a few seconds at most
            deadline = time.monotonic() + 5.0
            while self.vector_dimension() is not None and time.monotonic() < deadline:
                time.sleep(0.05)
        return empty

    def restore_vector_index(self, *, wait: bool = False) -> bool:
        """Build the vector index again if the graph was loaded (or a first sync wrote it)
        without one, and first the indexes only writes use the graph lacks; True if it started
        a build (``wait``: and saw it complete)."""
        with self.server.locked(), self.reading_as(ADMIN_CALLER):  # one process builds it
            if self.vector_dimension() is not None:
                return False
            rows = self.run("any_passage_vector")
            if not rows:
                return False  # no passages yet: the first sync creates the index
            dimension = len(rows[0]["embedding"])
            params = self.vector_options(dimension)
            before = self.server.log.end()
            built = self._build_write_indexes()  # first: an HNSW build holds back later ones
            self._locked_write("index_passage_vector", params, "cannot build the vector index")
            self.server.log.mark(before, built)  # the stop takes them back if nothing else
        self.dimension = dimension  # is written
        self._vectors_ready = False
        if wait:
            self._wait_for_indexes()
        return True

    def prepare_writes(self, *, vectors: bool = True) -> None:
        """Build the write indexes the last stop set aside; wait until every index is complete
        (``vectors=False``: but the vector index, for writes that never search it, linking by
        a matrix of every passage: FalkorDB takes them between batches of its build)."""
        with self.reading_as(ADMIN_CALLER):
            indexed, vector = self._indexes()
        # set aside by a first sync that stopped (defer_vector_index): its build makes the write
        # indexes too, which the start's mark records (start_built)
        started = not vector and self.restore_vector_index()
        built: list[str] = []
        missing = ((label, prop, "RANGE") not in indexed for label, prop, _, _ in WRITE_INDEXES)
        if not started and any(missing):
            with self.server.locked(), self.reading_as(ADMIN_CALLER):  # one process builds them
                built = self._build_write_indexes()
        if vectors:
            self.await_vector_index()  # waits for every index
        else:
            self._wait_for_indexes(vectors=False)
        if built or self.server.log.start_built():  # (a start's: in the log, not the snapshot)
            self._seal_indexes()

    def _build_write_indexes(self) -> list[str]:
        """Create the indexes only writes use that the graph lacks, under the server's lock
        (held by the caller); the labels or types of those it created. At a start they go
        before the vector index: FalkorDB 4.16 builds one index at a time, and those made
        during an HNSW build waited for all of it (40 minutes at a million passages)."""
        indexed, _ = self._indexes()
        if ("Passage", "id", "RANGE") not in indexed:
            return []  # no schema yet: ensure_schema makes every index
        built = []
        for label, prop, create, _ in WRITE_INDEXES:
            if (label, prop, "RANGE") not in indexed:
                self._locked_write(create, {}, "cannot build an index writes use")
                built.append(label)
        return built

    def _seal_indexes(self) -> None:
        """Compact new indexes into the snapshot before writes use them: FalkorDB 4.16 cannot
        use an index its log creates until the replay ends, so replayed lookups scan (a killed
        first sync at 9,000 passages: start 257 s -> 3.5 s; docs/benchmarks.md, Scale)."""
        self.checkpoint(force=True)

    def _locked_write(self, name: str, parameters: Mapping[str, Any], what: str) -> None:
        """A schema write under the data directory's lock: not by run(), whose reload takes it."""
        try:
            with self._own.around() as own:
                own(self.graph.query(params_header(parameters) + cypher.load(self.dialect, name)))
        except redis.ResponseError as exc:
            raise StoreError(f"{self.describe()}: {what}: {exc}") from None

    def index_health(self, sample: int = 10) -> IndexHealth:
        with self.reading_as(ADMIN_CALLER):
            vector = self._indexes()[1]
            if not vector:
                return IndexHealth("none", 0, 0)
            live, orphans = self.vector_index_entries()
            built = built_with(vector, self.vector_ef(), self.vector_m)
            if "Passage" in self._building():
                return IndexHealth("building", live, orphans, **built)
        sampled, recall = sampled_recall(self, sample, live)
        return IndexHealth("complete", live, orphans, sampled, recall, **built)

    def await_vector_index(self) -> None:
        if not self._vectors_ready or self._building():  # (another process's start, too)
            self._wait_for_indexes()

    def _knn_candidates(self, rows: list[dict[str, Any]]) -> list[Row]:
        if self._vectors_ready or "Passage" not in self._building():
            self._vectors_ready = True
            try:
                return super()._knn_candidates(rows)
            except StoreError as exc:  # no index: another process is building it again
                if "queryNodes" not in str(exc):
                    raise
                self._vectors_ready = False
        exact = [self.run("knn_exact", {"row": r, "limit": r["limit"]}) for r in rows]
        return [row for found in exact for row in found]

    def vector_index_build(self) -> tuple[int, float | None]:
        """The seconds left come from the build's rate since this store first saw it."""
        status = self._building().get("Passage")
        counted = progress(status) if status is not None else None
        if counted is None:
            return (0, 0.0) if status is None else (self.vector_index_bound(), None)
        now, (done, total) = time.monotonic(), counted
        if self._build_seen is None or done < self._build_seen[1]:
            self._build_seen = (now, done)
        began, first = self._build_seen
        rate = (done - first) / (now - began) if done > first and now > began else 0.0
        return total - done, (total - done) / rate if rate else None

    def _building(self) -> dict[str, str]:
        """The labels whose indexes are being built, with FalkorDB's status of each."""
        return unfinished(self._index_rows())

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
                if not write:  # (over RESP3: kgp.stores.falkor_reply)
                    with self._watch.watching():
                        return self._opened()[1].rows(text)
                self._log.data_writes += 1
                with self._watch.watching(), self._own.around() as own:
                    result = self.graph.query(text)
                    own(result)  # (what it changed: OwnWrites)
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

    def writes_era(self) -> int:
        with self._watch.watching():  # (a stuck server answers no INFO either)
            return self._own.now()

    def checkpoint(self, *, force: bool = False) -> bool:
        """Compact the append-only file: safe whenever (a failed write reloads the server)."""
        try:
            log = self.server.log
            return log.compact(min_bytes=0, growth=-1.0) if force else log.compact()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailableError(f"lost {self.describe()}: {exc}") from None

    def _connect(self, vectors: bool = True) -> None:
        """Connect and wait for the indexes (``vectors=False``: all but a vector index)."""
        self._db = FalkorDB(unix_socket_path=str(self.server.socket_path), socket_timeout=600)
        self._graph = self._db.select_graph(self.graph_name)
        self._reads = Reads(self.server.socket_path, self.graph_name)
        self._wait_for_indexes(vectors=vectors)

    def _wait_for_indexes(self, stall: float = INDEX_STALL_SECONDS, vectors: bool = True) -> None:
        """After a start or reload, FalkorDB rebuilds indexes in the background, and queries
        meanwhile see part of the graph: wait until every index is operational, as long as the
        build goes on (:mod:`kgp.stores.falkor_indexes`); ``vectors=False``: but a vector
        index, which searches do without meanwhile (whose build holds the others back)."""
        polls, what = IndexPolls(self._index_rows, vectors=vectors), self.describe()
        busy = None if vectors else polls.every
        wait_for_indexes(polls.waited, what=what, stall=stall, notice=self.on_wait, busy=busy)
        self._vectors_ready = vectors or "Passage" not in polls.every()

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

    def _fulltext_query(self, terms: Sequence[str]) -> str:
        return " | ".join(terms)

    def _migrate_to_6(self) -> list[str]:
        if not index_passage_terms(self.run, self._indexes()[0]):
            return []
        self._wait_for_indexes(vectors=False)  # (the new full-text index: questions need it)
        return ["schema 6: the full-text index holds each passage's stemmed terms"]

"""``Neo4jStore``: the production store, through the official ``neo4j`` driver (server 5.26+).

One server or a cluster (or Aura) behind the same code. Every query is one managed transaction
of the driver (``execute_query``), and three things a cluster needs come from that:

- **routing**: with a ``neo4j://`` (``neo4j+s://``) URI the driver fetches the cluster's routing
  table; reads (``write=False``: retrieval, listings, counts, ``open()``'s probe) run with
  ``RoutingControl.READ`` on followers and read replicas, writes with ``RoutingControl.WRITE``
  on the leader. ``bolt://`` talks to the one server named and routes nothing.
- **retries**: a write that meets a leader change before it commits (``NotALeader``, a dropped
  connection, a transient error) is rolled back by the server and run again by the driver on the
  leader of a fresh routing table, for up to 30 s; kgp adds no retry of its own. A replay would
  be safe even after a commit: each kgp write replaces what it writes whole (a document's
  subgraph, a passage's k-NN edges) or sets and merges by id; only a saved trace creates a node
  each time. A connection lost while the commit itself is in flight is not retried
  (``IncompleteCommit``): the write may or may not have happened, and kgp says so.
- **bookmarks**: ``execute_query`` passes every transaction through the driver's
  ``execute_query_bookmark_manager``, so a read made after a write through the same store (one
  driver, shared by its threads) waits on the reader until that write has arrived there.

docs/cluster.md says how to deploy it; tests/test_neo4j_cluster.py checks all of this against
scripted Bolt servers (tests/bolt_stub.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Self
from urllib.parse import urlsplit

import neo4j
from kgp.errors import ConfigurationError, StoreError, StoreUnavailableError
from kgp.settings import redact_url
from kgp.stores.base import GraphStore
from kgp.stores.maintenance import Row
from kgp.stores.tracer import Tracer
from neo4j import GraphDatabase, RoutingControl
from neo4j import exceptions as neo4j_errors

MINIMUM_SERVER = (5, 26)
ROUTING_SCHEMES = frozenset({"neo4j", "neo4j+s", "neo4j+ssc"})
SCHEMA_QUERIES = (
    "constraint_document",
    "constraint_page",
    "constraint_table",
    "constraint_passage",
    "constraint_keyword",
    "index_page_doc",
    "index_table_doc",
    "index_passage_doc",
    "index_passage_text_hash",
    "index_passage_fulltext",
    "index_similar_score",
)


def server_version(agent: str) -> tuple[int, ...]:
    """``Neo4j/5.26.1`` → (5, 26, 1); calendar versions such as ``Neo4j/2025.01.0`` work too."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", agent)
    if match is None:
        return (0,)
    return tuple(int(part) for part in match.groups() if part is not None)


def routing_refusal(exc: BaseException) -> str | None:
    """Why the routers a ``neo4j://`` URI names gave no routing table when one of them answered
    (an error code, an empty table); None when none was reached. The driver's "Unable to
    retrieve routing information" carries each router's answer in its cause."""
    cause = exc.__cause__
    answers = cause.exceptions if isinstance(cause, BaseExceptionGroup) else (cause,)
    for answer in answers:
        if isinstance(answer, neo4j_errors.Neo4jError):
            return str(answer.code or type(answer).__name__)
        if isinstance(
            answer, neo4j_errors.RoutingServiceUnavailable | neo4j_errors.ReadServiceUnavailable
        ):
            return str(answer)
    return None


class Neo4jStore(GraphStore):
    """Neo4j, a Neo4j cluster or Aura. ``open()`` connects and checks the server; each query
    is one transaction, routed to a reader or to the leader (see the module's docstring)."""

    dialect = "neo4j"
    fulltext_or = " OR "

    def __init__(
        self,
        *,
        uri: str,
        user: str,
        password: str,
        database: str = "neo4j",
        tracer: Tracer | None = None,
    ) -> None:
        super().__init__(tracer=tracer)
        self.uri = uri
        self.user = user
        self._password = password
        self.database = database
        # one driver per store: its connection pool, routing table and bookmark manager are
        # shared by every thread using the store, so each read follows the store's writes
        self._driver: neo4j.Driver | None = None

    @property
    def routed(self) -> bool:
        """Whether the URI asks the server for a routing table (``neo4j://``, ``neo4j+s://``)."""
        return urlsplit(self.uri).scheme in ROUTING_SCHEMES

    def describe(self) -> str:
        where = redact_url(self.uri)
        return f"Neo4j at {where} (database {self.database!r}, user {self.user!r})"

    def open(self) -> Self:
        if self._driver is not None:
            return self
        try:
            driver = GraphDatabase.driver(self.uri, auth=(self.user, self._password))
        except (ValueError, neo4j_errors.ConfigurationError) as exc:
            raise ConfigurationError(
                f"invalid Neo4j URI {redact_url(self.uri)!r} (KGP_NEO4J_URI): "
                f"{redact_url(str(exc))}"
            ) from None
        try:
            info = driver.get_server_info()  # the member that answers: a reader, in a cluster
            self._driver = driver
            self._execute("RETURN 1 AS ok", {}, write=False)
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
            driver.close()
            self._driver = None
            raise self._translate(exc) from None
        except BaseException:
            driver.close()
            self._driver = None
            raise
        version = server_version(info.agent)
        if version < MINIMUM_SERVER:
            self.close()
            raise StoreUnavailableError(
                f"{self.describe()} runs {info.agent}; kgp needs Neo4j 5.26 or newer"
            )
        return self

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
        self._driver = None

    def _translate(self, exc: Exception) -> Exception:
        where = self.describe()
        if isinstance(exc, neo4j_errors.AuthError):
            return StoreUnavailableError(
                f"{where} refused the login; check KGP_NEO4J_USER and KGP_NEO4J_PASSWORD"
            )
        if isinstance(exc, neo4j_errors.IncompleteCommit):
            return StoreUnavailableError(
                f"{where} dropped the connection while committing a write, which may or may "
                "not have been applied; run it again (a sync rewrites each document whole)"
            )
        refused_write = neo4j_errors.NotALeader | neo4j_errors.ForbiddenOnReadOnlyDatabase
        if isinstance(exc, refused_write | neo4j_errors.WriteServiceUnavailable):
            if not self.routed:
                return StoreUnavailableError(
                    f"{where} takes no writes: it is not its cluster's leader; use a neo4j:// "
                    "URI, which routes writes to the leader"
                )
            return StoreUnavailableError(
                f"{where}: no member took the write before the driver's retries ran out; is "
                "the database read-only, or the cluster without a leader (a quorum of primaries)?"
            )
        if self.routed and isinstance(exc, neo4j_errors.ServiceUnavailable):
            reason = routing_refusal(exc)
            if reason is not None:
                return StoreUnavailableError(
                    f"{where} gave no routing table ({reason}); a neo4j:// URI needs a Neo4j "
                    "server, cluster member or Aura that routes: for one server that does not, "
                    "use bolt://"
                )
        if self.routed and isinstance(exc, neo4j_errors.SessionExpired):
            return StoreUnavailableError(
                f"{where}: cannot reach the servers its routing table names ({exc}); the "
                "members' advertised addresses (server.bolt.advertised_address) must be "
                "reachable from here, and the cluster needs a leader"
            )
        if isinstance(exc, neo4j_errors.ServiceUnavailable | neo4j_errors.SessionExpired | OSError):
            return StoreUnavailableError(
                f"cannot reach {where}: {exc}; is the server running? (docker compose -f "
                "docker/compose.yaml up -d)"
            )
        code = getattr(exc, "code", "") or ""
        if "DatabaseNotFound" in code:
            return StoreUnavailableError(
                f"{where}: database {self.database!r} does not exist; create it or set "
                "KGP_NEO4J_DATABASE"
            )
        message = getattr(exc, "message", None) or str(exc)
        return StoreError(f"Neo4j rejected a query ({code or type(exc).__name__}): {message}")

    def _execute(self, query: str, parameters: Mapping[str, Any], *, write: bool) -> list[Row]:
        if self._driver is None:
            raise StoreUnavailableError(f"{self.describe()} is not open; call open() first")
        try:
            # a managed transaction: retried by the driver on a leader change, bookmarked by
            # its execute_query_bookmark_manager (see the module's docstring); kgp adds no retry
            records, _, _ = self._driver.execute_query(
                query,
                dict(parameters),
                database_=self.database,
                routing_=RoutingControl.WRITE if write else RoutingControl.READ,
            )
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
            raise self._translate(exc) from None
        return [record.data() for record in records]

    def vector_dimension(self) -> int | None:
        rows = self.run("vector_index_dimension")
        return int(rows[0]["dimension"]) if rows and rows[0]["dimension"] is not None else None

    def ensure_schema(self, dimension: int) -> None:
        # schema changes are writes: they run on the leader, which replicates them
        for name in SCHEMA_QUERIES:
            self.run(name, write=True)
        indexed = self.vector_dimension()
        if indexed is not None and indexed != dimension:
            raise ConfigurationError(
                f"{self.describe()} holds {indexed}-dimension embeddings but the "
                f"encoder gives {dimension}; use the graph's encoder or a new database"
            )
        self.run("index_passage_vector", {"dimension": dimension}, write=True)
        self.dimension = dimension

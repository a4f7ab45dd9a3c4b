"""``Neo4jStore``: the production store, through the official ``neo4j`` driver (server 5.26+)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Self

import neo4j
from kgp.errors import ConfigurationError, StoreError, StoreUnavailableError
from kgp.settings import redact_url
from kgp.stores.base import GraphStore
from kgp.stores.maintenance import Row
from kgp.stores.tracer import Tracer
from neo4j import GraphDatabase, RoutingControl
from neo4j import exceptions as neo4j_errors

MINIMUM_SERVER = (5, 26)
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


class Neo4jStore(GraphStore):
    """Neo4j (or Aura). ``open()`` connects and checks the server; writes are one transaction."""

    dialect = "neo4j"

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
        self._driver: neo4j.Driver | None = None

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
            info = driver.get_server_info()
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
            records, _, _ = self._driver.execute_query(
                query,
                dict(parameters),
                database_=self.database,
                routing_=RoutingControl.WRITE if write else RoutingControl.READ,
            )
        except (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError) as exc:
            raise self._translate(exc) from None
        return [record.data() for record in records]

    def _fulltext_query(self, terms: Sequence[str]) -> str:
        return " OR ".join(terms)

    def vector_dimension(self) -> int | None:
        rows = self.run("vector_index_dimension")
        return int(rows[0]["dimension"]) if rows and rows[0]["dimension"] is not None else None

    def ensure_schema(self, dimension: int) -> None:
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

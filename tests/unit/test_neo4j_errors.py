"""Neo4j errors become one-line KgpErrors. The driver builds its exceptions from server codes the
same way (``Neo4jError._hydrate_neo4j``), so these run without a server; the contract tests cover
the rest when KGP_TEST_NEO4J_URI is set."""

from __future__ import annotations

import pytest
from kgp.errors import ConfigurationError, StoreError, StoreUnavailableError
from kgp.stores import Neo4jStore
from kgp.stores.neo4j import server_version
from neo4j import exceptions as neo4j_errors


def store() -> Neo4jStore:
    return Neo4jStore(uri="neo4j://db.example:7687", user="kgp", password="pw-123", database="kb")


def hydrate(code: str, message: str) -> Exception:
    return neo4j_errors.Neo4jError._hydrate_neo4j(code=code, message=message)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("error", "kind", "text"),
    [
        (
            hydrate("Neo.ClientError.Security.Unauthorized", "bad"),
            StoreUnavailableError,
            "refused the login; check KGP_NEO4J_USER and KGP_NEO4J_PASSWORD",
        ),
        (
            hydrate("Neo.ClientError.Database.DatabaseNotFound", "Graph not found: kb"),
            StoreUnavailableError,
            "database 'kb' does not exist; create it or set KGP_NEO4J_DATABASE",
        ),
        (neo4j_errors.ServiceUnavailable("no route"), StoreUnavailableError, "cannot reach Neo4j"),
        (
            hydrate("Neo.ClientError.Statement.SyntaxError", "Invalid input"),
            StoreError,
            "Neo.ClientError.Statement.SyntaxError",
        ),
    ],
)
def test_driver_errors_are_translated(error: Exception, kind: type, text: str) -> None:
    translated = store()._translate(error)
    assert type(translated) is kind
    assert text in str(translated)
    assert "pw-123" not in str(translated) and "\n" not in str(translated)


def test_invalid_uri_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="invalid Neo4j URI 'mongodb://x'"):
        Neo4jStore(uri="mongodb://x", user="u", password="p").open()


def test_server_versions() -> None:
    assert server_version("Neo4j/5.26.1") == (5, 26, 1)
    assert server_version("Neo4j/2025.01.0") >= (5, 26)
    assert server_version("Neo4j/5.13.0") < (5, 26)

"""No value a caller sends can change a query, in either dialect. FalkorDB has no parameters on
the wire, so kgp writes each value into the query's ``CYPHER name=value`` header: every string
comes back as itself and a NUL (up to which the server reads the text) is refused before
anything is sent. Neo4j's values travel in Bolt's own parameter map, apart from the query text,
which is the query file's as it is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kgp import cypher
from kgp.access import ADMIN_CALLER
from kgp.errors import StoreError
from kgp.stores import FalkorStore, Neo4jStore

from tests.bolt_stub import BoltStub, Reply, Request, Rows
from tests.graphs import write

ATTEMPTS = [
    '" RETURN 1 AS v //',
    '\\" RETURN 1 AS v //',
    "\\",
    '\\\\"',
    "'}) MATCH (n) DETACH DELETE n //",
    '"}) MATCH (n) DETACH DELETE n //',
    "x` RETURN 1 AS `v",
    "line one\nMATCH (n) DETACH DELETE n",
    "\u202eevil\u2066",
    "$v",
]
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


@pytest.fixture(scope="module")
def falkor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FalkorStore]:
    with FalkorStore(data_dir=tmp_path_factory.mktemp("values")) as store:
        write(store, "MERGE (:Keep {id: 'kept'})")
        yield store


def kept(store: FalkorStore) -> int:
    return int(store._execute("MATCH (k:Keep) RETURN count(k) AS n", {}, write=False)[0]["n"])


def _echo(store: FalkorStore, value: object) -> object:
    rows = store._execute("RETURN $v AS v, $w AS w", {"v": value, "w": "after"}, write=False)
    assert rows[0]["w"] == "after", "the header ended where kgp wrote it"
    return rows[0]["v"]


@pytest.mark.parametrize("value", ATTEMPTS)
def test_falkordb_gives_back_each_crafted_string_as_itself(falkor: FalkorStore, value: str) -> None:
    assert _echo(falkor, value) == value
    assert _echo(falkor, [value, {"k": value}]) == [value, {"k": value}]
    assert kept(falkor) == 1


@settings(max_examples=200, deadline=None)
@given(value=TEXT)
def test_falkordb_gives_back_any_string_as_itself(falkor: FalkorStore, value: str) -> None:
    assert _echo(falkor, value) == value


def test_falkordb_refuses_a_nul_before_sending_anything(falkor: FalkorStore) -> None:
    with falkor.reading_as(ADMIN_CALLER), pytest.raises(StoreError, match="NUL character"):
        falkor.fetch_nodes(["a\x00b"])
    assert kept(falkor) == 1


def test_neo4j_sends_values_apart_from_the_query_text() -> None:
    def answer(request: Request) -> Reply:
        return Rows(("ok",), ((1,),)) if request.query == "RETURN 1 AS ok" else None

    stub = BoltStub("neo4j", script=answer)
    try:
        store = Neo4jStore(uri=f"bolt://{stub.address}", user="kgp", password="pw")
        with store, store.reading_as(ADMIN_CALLER):
            store.fetch_nodes([*ATTEMPTS, "a\x00b"])
        sent = [r for r in stub.seen("RUN") if r.query != "RETURN 1 AS ok"]
        assert [r.query for r in sent] == [cypher.load("neo4j", "fetch_nodes")]
        assert sent[0].fields[1]["ids"] == [*ATTEMPTS, "a\x00b"]
    finally:
        stub.close()

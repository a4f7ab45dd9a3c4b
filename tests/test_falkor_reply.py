"""The embedded store's reads over RESP3 (kgp.stores.falkordb.reply) give what the FalkorDB client
gives over RESP2, value for value and type for type, vectors as the same float32s."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kgp.errors import StoreError, StoreUnavailableError
from kgp.stores import FalkorStore
from kgp.stores.falkordb.params import cypher_value, params_header, plain

from tests.graphs import write

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
SCALARS = (
    st.none()
    | st.booleans()
    | INT64
    | st.floats(allow_nan=False, allow_infinity=False)
    # (no NUL: FalkorDB's parser ends the query's parameter header at one, whichever client)
    | st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.from_regex(r"[a-z]\w{0,3}", fullmatch=True), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.fixture(scope="module")
def falkor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FalkorStore]:
    with FalkorStore(data_dir=tmp_path_factory.mktemp("reply") / "kb") as store:
        write(store, "MERGE (:V {i: 0})")  # (a graph to read: an empty key reads nothing)
        yield store


def both(store: FalkorStore, query: str, parameters: dict[str, Any] | None = None) -> tuple:
    """The rows the store reads (RESP3) and the rows the FalkorDB client parses (RESP2)."""
    ours = store._execute(query, parameters or {}, write=False)
    result = store.graph.ro_query(params_header(parameters or {}) + query)
    names = [str(column[1]) for column in result.header]
    theirs = [dict(zip(names, map(plain, row), strict=True)) for row in result.result_set]
    return ours, theirs


def typed(value: Any) -> Any:
    """A value with the type of each part spelled out, so 1 and 1.0 and True differ."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(VALUES)
def test_any_value_reads_back_as_the_client_parses_it(falkor: FalkorStore, value: Any) -> None:
    ours, theirs = both(falkor, "RETURN $value AS value, 1 AS one", {"value": value})
    assert typed(ours) == typed(theirs)
    assert ours[0]["one"] == 1


def test_vectors_read_back_as_the_float32s_written(falkor: FalkorStore) -> None:
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(20, 384)).astype(np.float32)
    vectors[0, :4] = [1e-45, -3.4e38, 1.1754944e-38, -0.0]  # the smallest, largest, subnormal
    falkor.graph.query(
        "CYPHER rows="
        + cypher_value([v.tolist() for v in vectors])
        + " UNWIND range(0, size($rows) - 1) AS i CREATE (:W {i: i, e: vecf32($rows[i])})"
    )
    ours, theirs = both(falkor, "MATCH (w:W) RETURN w.i AS i, w.e AS e ORDER BY w.i")
    back = np.asarray([row["e"] for row in ours], dtype=np.float32)
    assert np.array_equal(back, vectors)
    assert typed(ours) == typed(theirs)
    assert both(falkor, "MATCH (w:W) WHERE w.i < 0 RETURN w.e AS e") == ([], [])


def test_a_graph_entity_or_a_temporal_value_in_a_read_is_refused(falkor: FalkorStore) -> None:
    with pytest.raises(TypeError, match="graph entity"):
        falkor._execute("MATCH (v:V) RETURN v", {}, write=False)
    with pytest.raises(TypeError, match="temporal value"):
        falkor._execute("RETURN date('2020-01-01') AS d", {}, write=False)


def test_a_read_is_not_sent_again_by_the_connection(falkor: FalkorStore) -> None:
    """A lost server is the store's to handle (a stuck one stopped, a crashed one started
    again: FalkorStore._execute), never the connection's retry, which would send a read again
    after its timeout or into a closed pool."""
    reads = falkor._reads
    assert reads is not None and reads.client.get_retry()._retries == 0


def test_a_runtime_error_is_the_stores_error(falkor: FalkorStore) -> None:
    with pytest.raises(StoreError, match="FalkorDB rejected a query: Division by zero"):
        falkor._execute("UNWIND [1, 0] AS x RETURN 1 / x AS y", {}, write=False)
    ours, _ = both(falkor, "MATCH (v:V) RETURN count(v) AS n")  # and the next read goes on
    assert ours == [{"n": 1}]


def test_a_closed_store_refuses_reads(tmp_path: Path) -> None:
    store = FalkorStore(data_dir=tmp_path / "kb").open()
    write(store, "MERGE (:V)")
    store.close()
    with pytest.raises(StoreUnavailableError, match="is not open"):
        store._execute("MATCH (v:V) RETURN count(v) AS n", {}, write=False)

"""FalkorDB's parameter text: vectors go as 9-digit decimals that give back the same float32s;
result values come back as plain lists and dicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from kgp.stores import FalkorStore
from kgp.stores.falkordb.params import cypher_value, plain

from tests.graphs import write

FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(st.lists(FLOAT32, min_size=16, max_size=64))
def test_a_float32_vector_is_written_so_each_value_parses_back_exactly(values: list[float]) -> None:
    text = cypher_value(values)
    assert text.startswith("[") and text.endswith("]")
    parsed = [float(item) for item in text[1:-1].split(",")]
    assert np.array_equal(np.asarray(parsed, dtype=np.float32), np.asarray(values, np.float32))
    assert all(len(item.lstrip("-").replace(".", "")) <= 15 for item in text[1:-1].split(","))


def test_other_lists_keep_every_digit() -> None:
    doubles = [0.1] * 16  # not float32 values: repr, whole
    assert cypher_value(doubles) == "[" + ",".join(["0.1"] * 16) + "]"
    assert cypher_value([1, 2.5, "a", None, True]) == '[1,2.5,"a",null,true]'


def test_vectors_read_back_from_the_store_are_the_float32s_sent(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(3, 384)).astype(np.float32)
    vectors[0, :4] = [1e-45, -3.4e38, 1.1754944e-38, -0.0]  # the smallest, largest, subnormal
    with FalkorStore(data_dir=tmp_path / "kb") as store:
        write(
            store,
            "UNWIND range(0, size($rows) - 1) AS i MERGE (v:V {i: i}) SET v.e = vecf32($rows[i])",
            {"rows": [v.tolist() for v in vectors]},
        )
        rows = store.graph.ro_query("MATCH (v:V) RETURN v.i, v.e ORDER BY v.i").result_set
    back = np.asarray([row[1] for row in rows], dtype=np.float32)
    assert np.array_equal(back, vectors)


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner) | st.lists(inner).map(tuple) | st.dictionaries(st.text(max_size=3), inner)
    ),
    max_leaves=20,
)


def walked(value: Any) -> Any:
    """What ``plain`` gives, spelled out: tuples become lists, at every level."""
    if isinstance(value, dict):
        return {str(k): walked(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [walked(v) for v in value]
    return value


@given(VALUES)
def test_result_values_come_back_as_plain_lists_and_dicts(value: Any) -> None:
    out = plain(value)
    assert out == walked(value)
    assert type(out) is type(walked(value))
    pending = [out]
    while pending:  # no tuple left at any depth
        item = pending.pop()
        assert not isinstance(item, tuple)
        if isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())

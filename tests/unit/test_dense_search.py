"""A sync's searches of many vectors at once, answered by a matrix product with a copy of the
index's vectors (``kgp.stores.falkordb.vectors``): the same keys as an exact search, in step with
adds, replacements and removals, and let go when the index is saved."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kgp.stores.falkordb import vectors as module
from kgp.stores.falkordb.vectors import PassageVectors


def no_graph(name: str, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return []  # (a graph with nothing written: the index is fed by ``added`` alone)


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "EXACT_BELOW", 50)
    monkeypatch.setattr(module, "DENSE_FROM", 8)
    monkeypatch.setattr(module, "PRODUCT_ROWS", 5)  # several blocks per search


def test_many_vectors_at_once_get_the_exact_answer(small_limits: None) -> None:
    rng = np.random.default_rng(7)
    index = PassageVectors(no_graph, None)
    index.open(None)
    first = rng.standard_normal((400, 24)).astype(np.float32)
    index.added({k: v for k, v in enumerate(first, start=1)}, 1, 401)
    queries = rng.standard_normal((20, 24)).astype(np.float32).tolist()

    def exact_keys(depth: int) -> list[list[int]]:
        return [[k for k, _ in hits] for hits in index.search(queries, depth, exact=True)]

    found = index.search(queries, 30)
    assert index._dense is not None  # (the copy was made for this search)
    assert [[k for k, _ in hits] for hits in found] == exact_keys(30)
    for hits, truth in zip(found, index.search(queries, 30, exact=True), strict=True):
        assert [s for _, s in hits] == pytest.approx([s for _, s in truth], abs=1e-5)

    more = rng.standard_normal((100, 24)).astype(np.float32)
    index.added({k: v for k, v in enumerate(more, start=401)}, 401, 501)
    index.added({3: -first[3]}, 501, 501)  # a key written again: its new vector alone
    index.removed(range(10, 60))
    found = [[k for k, _ in hits] for hits in index.search(queries, 40)]
    assert found == exact_keys(40)
    assert not set().union(*map(set, found)) & set(range(10, 60))
    assert found == [[k for k, _ in hits] for hits in index.search(queries, 40)]

    few = index.search(queries[:3], 40)  # fewer than DENSE_FROM: the index's own search
    assert [len(hits) for hits in few] == [40, 40, 40]
    index.save()
    assert index._dense is None


def test_a_search_deeper_than_the_index_returns_every_live_vector(small_limits: None) -> None:
    index = PassageVectors(no_graph, None)
    index.open(None)
    rng = np.random.default_rng(3)
    index.added({k: v for k, v in enumerate(rng.standard_normal((60, 8)), start=1)}, 1, 61)
    index.removed([1, 2])
    queries = rng.standard_normal((10, 8)).tolist()
    found = index.search(queries, 14)  # depth x 4 < 58 live: not exact by the index's rule
    assert [[k for k, _ in hits] for hits in found] == [
        [k for k, _ in hits] for hits in index.search(queries, 14, exact=True)
    ]

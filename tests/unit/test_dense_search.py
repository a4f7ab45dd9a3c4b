"""A sync's searches of many vectors at once, answered by a matrix product with a copy of the
index's vectors (``kgp.stores.falkordb.vectors``): the same keys as an exact search, in step with
adds, replacements and removals, and let go when the index is saved."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kgp.stores.falkordb import vectors as module
from kgp.stores.falkordb.vectors import PassageVectors, _Dense


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


def test_the_copy_answers_to_every_depth_and_never_with_a_removed_key() -> None:
    rng = np.random.default_rng(3)
    dense = _Dense(8, 4)  # room for 4: grown as it fills
    keys = np.arange(1, 11, dtype=np.uint64)
    dense.add(keys[:6], rng.standard_normal((6, 8)).astype(np.float32))
    dense.add(keys[6:], rng.standard_normal((4, 8)).astype(np.float32))
    dense.remove([1, 2])
    queries = rng.standard_normal((3, 8)).astype(np.float32)
    for depth in (1, 5, 8, 50):  # fewer than, as many as and more than the 8 live rows
        found = dense.search(queries, depth)
        assert [len(hits) for hits in found] == [min(depth, 8)] * 3
        for hits in found:
            assert {1, 2}.isdisjoint(k for k, _ in hits)
            assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert sorted(k for k, _ in dense.search(queries, 8)[0]) == list(range(3, 11))
    dense.add(keys[2:3], -queries[:1])  # key 3 again: the opposite of the first question
    assert dense.search(queries[:1], 8)[0][-1][0] == 3
    dense.remove(range(1, 11))
    assert dense.search(queries, 5) == [[], [], []]

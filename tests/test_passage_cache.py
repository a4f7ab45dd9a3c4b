"""The retriever's passage cache reads texts without embeddings (most of what the store sends),
and an embedding once, when a scorer or an order asks for it."""

from __future__ import annotations

import numpy as np
from kgp.agents.passages import PassageCache
from kgp.stores import FalkorStore, GraphStore
from kgp.stores.model import passage_id

from tests.graphs import make_document


def test_texts_come_without_embeddings_and_each_embedding_is_read_once(store: GraphStore) -> None:
    store.write_documents([make_document("a.txt", 4)])
    ids = [passage_id("a.txt", j) for j in range(4)]
    stored = store.passage_vectors(ids)
    cache, ran = PassageCache(store), []
    # (the embedded store reads the vectors from its index beside the graph, by the keys
    # passage_texts gives)
    vectors_read = "passage_texts" if isinstance(store, FalkorStore) else "passage_vectors"
    store.tracer, before = ran.append, store.tracer
    try:
        assert cache.texts(ids[:3]) == {i: stored[i].text for i in ids[:3]}
        assert [e.name for e in ran] == ["passage_texts"]
        assert all(p.embedding is None for p in cache.get(ids[:3], vectors=False).values())
        vectors = cache.vectors(ids[1:])  # two held without their embeddings, one not held
        assert [e.name for e in ran] == ["passage_texts", vectors_read]
        assert ran[1].parameters["ids"] == ids[1:]
        for pid in ids[1:]:
            np.testing.assert_allclose(vectors[pid], stored[pid].embedding, rtol=1e-6)
        cache.texts(ids)
        cache.vectors(ids[1:])
        assert len(ran) == 2  # everything asked for again was held
        assert cache.get(ids)[ids[3]].page == stored[ids[3]].page
        assert [e.name for e in ran][2:] == [vectors_read]  # the first one's embedding
    finally:
        store.tracer = before

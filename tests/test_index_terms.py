"""The embedded store's full-text index holds each passage's terms, stemmed by kgp
(``kgp.text.index_terms``), not its text, so a start no longer stems every word of the graph
before it answers: what a word matches is what it matched, every form of it; and a graph whose
index held the texts (schema 5) gets its terms when it opens, whole."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import kgp
import pytest
from kgp.ingest.embedding import Encoder
from kgp.stores.falkordb.store import FalkorStore
from kgp.stores.maintenance import SCHEMA_VERSION
from kgp.stores.tracer import TraceLog
from kgp.text import index_terms, stems

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents"


def test_a_passages_terms_are_the_distinct_stems_of_its_words() -> None:
    text = "The stations' pumps were running; a station runs its pump, and Running Creek's ran."
    # (a full-text index's tokens: "Creek's" is two; stop words kept, for a question of them)
    assert index_terms(text) == "the station pump were run a it and creek s ran"
    assert index_terms("Of the, and!") == "of the and" and index_terms("") == ""
    assert stems(["Stations", "stationed", "station"]) == ["Station", "station"]  # (lower first)
    assert index_terms("Zürich Straße 1,031 mm") == "zürich straße 1 031 mm"


def test_stemming_gives_the_same_terms_from_many_threads() -> None:
    """A PyStemmer object is not safe to share between threads: each thread has its own."""
    texts = [f"stations running {i} generously organised flooding pumps" for i in range(300)]
    wanted = [index_terms(t) for t in texts]
    got: dict[int, list[str]] = {}

    def run(n: int) -> None:
        got[n] = [index_terms(t) for t in texts]

    threads = [threading.Thread(target=run, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g == wanted for g in got.values()) and len(got) == 6


def test_a_word_matches_every_form_of_it_and_the_index_holds_terms(
    tmp_path: Path, encoder: Encoder
) -> None:
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        kg.sync(EXAMPLES)
        store = kg.store
        assert isinstance(store, FalkorStore)
        indexed = store._indexes()
        assert ("Passage", "terms", "FULLTEXT") in indexed
        assert ("Passage", "text", "FULLTEXT") not in indexed
        assert ("Passage", "embedding", "VECTOR") not in indexed
        served = "stations.md#passage=9"  # "Cedar Hollow station serves the northern farms."
        for question in ("Which station serves farms?", "stations serving the farm", "SERVED"):
            assert served in [h.id for h in store.fulltext_search(question, 5)], question
        # a question of stop words alone is searched by them, as the index of texts did
        assert served in [h.id for h in store.fulltext_search("The", 50)]
        rows = store.run("passage_texts", {"ids": [served]})
        stored = store._execute(
            "MATCH (p:Passage {id: $id}) RETURN p.terms AS terms", {"id": served}, write=False
        )
        assert stored[0]["terms"] == index_terms(rows[0]["text"])


@pytest.mark.parametrize(
    "layout", ["texts indexed", "stopped before the terms", "before the index"]
)
def test_a_graph_whose_index_held_the_texts_gets_terms_when_it_opens(
    tmp_path: Path, encoder: Encoder, layout: str
) -> None:
    """Schema 5's layout (no terms, the index of the texts), or what a migration stopped on the
    way leaves (no full-text index, with or without the terms), is made from a graph of today's,
    so the migrated graph must equal it node for node: every passage's terms, the index of terms
    alone, the same full-text answers; and (schema 7) FalkorDB's vector index of those schemas
    gone, every passage in the index beside the graph."""
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    questions = ("Which station recorded the most rain?", "sandbags flood plain", "pump hours")
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        kg.sync(docs)
        clean = kg.store.upkeep.dump()
        answers = [kg.store.fulltext_search(q, 10) for q in questions]
        if layout != "before the index":
            kg.store._execute("MATCH (p:Passage) REMOVE p.terms", {}, write=True)
        kg.store.run("drop_passage_fulltext", write=True)
        if layout == "texts indexed":
            old = "CREATE FULLTEXT INDEX FOR (p:Passage) ON (p.text)"
            kg.store._execute(old, {}, write=True)
        old = (  # (an older kgp's vector index)
            "CREATE VECTOR INDEX FOR (p:Passage) ON (p.embedding) "
            "OPTIONS {dimension: $d, similarityFunction: 'cosine'}"
        )
        kg.store._execute(old, {"d": encoder.dimension}, write=True)
        kg.store.run("set_graph_schema", {"schema": 5}, write=True)
        assert kg.store.upkeep.dump() != clean
    log = TraceLog()
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*", tracer=log) as kg:
        store = kg.store
        assert isinstance(store, FalkorStore)
        assert store.run("graph_schema")[0]["schema"] == SCHEMA_VERSION
        assert "drop_passage_vector" in log.names()
        assert store.upkeep.dump() == clean
        indexed = store._indexes()
        assert ("Passage", "terms", "FULLTEXT") in indexed
        assert ("Passage", "text", "FULLTEXT") not in indexed
        assert ("Passage", "embedding", "VECTOR") not in indexed
        assert [store.fulltext_search(q, 10) for q in questions] == answers
        assert store.upkeep.vector_index_entries() == store.links.count_passages()
        kg.sync(docs)  # a sync after it writes nothing
        assert store.upkeep.dump() == clean

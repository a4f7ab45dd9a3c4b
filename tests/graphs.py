"""Document graphs for tests: a hand-made builder and a Hypothesis strategy; a test's own write
to the embedded graph."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import strategies as st
from kgp.errors import again_after_restart
from kgp.stores import FalkorStore
from kgp.stores.model import (
    DocumentGraph,
    DocumentRecord,
    PassageRecord,
    SimilarEdge,
    TableRecord,
    passage_id,
)

DIM = 16


def write(store: FalkorStore, query: str, parameters: dict[str, object] | None = None) -> None:
    """A test's own write, through the store's stall watch and made again after a restart, as
    kgp's writes are: a raw client's write waits ten minutes when FalkorDB 4.16 deadlocks at a
    new graph's first write. ``query`` must be the same made twice (MERGE, not CREATE)."""
    again_after_restart(lambda: store._execute(query, parameters or {}, write=True))


def make_document(
    doc_id: str,
    passages: int = 5,
    *,
    pages: int = 2,
    keywords: tuple[str, ...] = ("alpha", "beta"),
    seed: int = 0,
    tables: int = 1,
    similar_to: tuple[str, ...] = (),
    text: str = "passage {j} of {doc}",
    table_rows: int = 0,
) -> DocumentGraph:
    rng = np.random.default_rng(seed)
    record = DocumentRecord(
        id=doc_id,
        path=doc_id,
        title=f"Title of {doc_id}",
        sha256=hashlib.sha256(f"{doc_id}{passages}{seed}".encode()).hexdigest(),
        bytes=100 * passages,
        kind="text",
        pages=pages,
        ingested_at="2026-11-22T00:00:00+00:00",
    )
    records = tuple(
        PassageRecord(
            page=1 if j >= passages - table_rows else 1 + j % pages,
            ordinal=j,
            text=text.format(j=j, doc=doc_id),
            embedding=tuple(float(x) for x in rng.standard_normal(DIM)),
            keywords=(*keywords, f"{doc_id}-kw{j}"),
            table=(1, 0) if j >= passages - table_rows else None,  # the last ones: table rows
        )
        for j in range(passages)
    )
    table_records = tuple(
        TableRecord(page=1, index=i, markdown=f"| a | b |\n|---|---|\n| {i} | x |", rows=2, cols=2)
        for i in range(tables)
    )
    edges = tuple(SimilarEdge(passage_id(doc_id, 0), target, 0.5, "knn") for target in similar_to)
    return DocumentGraph(document=record, passages=records, tables=table_records, similar=edges)


_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=0,
    max_size=60,
)
_term = st.text("abcdefghijklmnopqrstuvwxyzé'\"\\ ", min_size=1, max_size=12).filter(
    lambda s: s.strip() == s
)
_ids = st.text(min_size=1, max_size=30).filter(
    lambda s: s[0] > " " and s[-1] > " " and all(ch >= " " for ch in s)
)


@st.composite
def document_graphs(draw: st.DrawFn, doc_id: str | None = None) -> DocumentGraph:
    """Random, consistent document graphs: any text, quotes and backslashes included."""
    ident = doc_id or draw(_ids)
    pages = draw(st.integers(1, 4))
    count = draw(st.integers(0, 8))
    ordinals = draw(st.lists(st.integers(0, 10_000), min_size=count, max_size=count, unique=True))
    passages = tuple(
        PassageRecord(
            page=draw(st.integers(1, pages)),
            ordinal=ordinal,
            text=draw(_text),
            embedding=tuple(draw(st.lists(st.floats(-1, 1, width=32), min_size=DIM, max_size=DIM))),
            keywords=tuple(draw(st.lists(_term, max_size=4, unique=True))),
        )
        for ordinal in ordinals
    )
    table_count = draw(st.integers(0, 3))
    tables = tuple(
        TableRecord(
            page=draw(st.integers(1, pages)),
            index=i,
            markdown=draw(_text),
            rows=draw(st.integers(0, 50)),
            cols=draw(st.integers(0, 20)),
            caption=draw(_text),
        )
        for i in range(table_count)
    )
    if tables:  # some passages hold a table's rows (on the table's page)
        holders = [draw(st.one_of(st.none(), st.sampled_from(tables))) for _ in passages]
        passages = tuple(
            replace(p, page=t.page, table=(t.page, t.index)) if t is not None else p
            for p, t in zip(passages, holders, strict=True)
        )
    own = [passage_id(ident, p.ordinal) for p in passages]
    similar: tuple[SimilarEdge, ...] = ()
    if len(own) >= 2:
        pairs = draw(st.lists(st.tuples(st.sampled_from(own), st.sampled_from(own)), max_size=5))
        similar = tuple(SimilarEdge(a, b, 0.25, "knn") for a, b in dict.fromkeys(pairs) if a != b)
    record = DocumentRecord(
        id=ident,
        path=ident,
        title=draw(_text),
        sha256=hashlib.sha256(ident.encode()).hexdigest(),
        bytes=draw(st.integers(0, 10**9)),
        kind=draw(st.sampled_from(["pdf", "text", "markdown"])),
        pages=pages,
        ingested_at="2026-11-22T00:00:00+00:00",
    )
    return DocumentGraph(document=record, passages=passages, tables=tables, similar=similar)


def random_documents(folder: Path, *, seed: int, documents: int, sentences: int) -> Path:
    """``documents`` files d00.md, d01.md, ... of ``sentences`` sentences of 8 words drawn from
    300, numbered so no two are alike."""
    folder.mkdir()
    rng = np.random.default_rng(seed)
    words = [f"w{n}" for n in range(300)]
    for d in range(documents):
        text = " ".join(
            f"{' '.join(rng.choice(words, 8))} item {d} {i}.".capitalize() for i in range(sentences)
        )
        (folder / f"d{d:02d}.md").write_text(text)
    return folder

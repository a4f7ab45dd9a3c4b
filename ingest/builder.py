"""From a read document to a ``DocumentGraph``: passages, keywords and embeddings (SIMILAR edges
are added by the linker, which needs the store)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
from kgp.ingest.document import Page, ReadDocument, Section
from kgp.ingest.keywords import KeywordExtractor
from kgp.ingest.tables import table_chunks
from kgp.ingest.text import carried_over, normalise, sentences, windows
from kgp.settings import PassageMode, Settings
from kgp.stores.model import DocumentGraph, DocumentRecord, PassageRecord, stored_vectors

# nodes (documents, passages, tables) per write query: large enough that the query's own cost
# is small beside its rows, small enough that its parameters stay a few megabytes
WRITE_BATCH_ROWS = 256


@dataclass(frozen=True, slots=True)
class Source:
    """One document to ingest: its id, the path shown to users and its bytes' hash."""

    doc_id: str
    path: str
    sha256: str
    size: int
    groups: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Draft:
    """A document before embedding: its graph with empty embeddings, and what the encoder
    reads of each passage (its text; a table's rows without Markdown, :func:`table_chunks`)."""

    source: Source
    graph: DocumentGraph
    reads: tuple[str, ...]

    @property
    def texts(self) -> list[str]:
        return [p.text for p in self.graph.passages]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split(text: str, settings: Settings) -> list[str]:
    """Passages of a section by the passage mode; a piece longer than ``max_passage_chars`` (a
    line without sentence ends, say) is cut into windows, so no passage is unbounded."""
    if settings.passage_mode is PassageMode.WINDOW:
        return windows(text, settings.window_chars, settings.window_overlap)
    if settings.passage_mode is PassageMode.WHOLE:
        flat = normalise(text)
        pieces = [flat] if flat else []
    else:
        pieces = sentences(text)
    return [
        cut
        for piece in pieces
        for cut in (
            windows(piece, settings.window_chars, settings.window_overlap)
            if len(piece) > settings.max_passage_chars
            else [piece]
        )
    ]


def flowing(pages: tuple[Page, ...]) -> list[tuple[int, Section]]:
    """Each page's sections in order, with a sentence that a page break cuts whole on the page
    it starts on (:func:`kgp.ingest.text.carried_over`), unless the next page opens a section."""
    out = [(page.number, section) for page in pages for section in page.sections]
    for n in range(len(out) - 1):
        (page, before), (next_page, after) = out[n], out[n + 1]
        if next_page != page and not after.heading:
            text, rest = carried_over(before.text, after.text)
            out[n] = (page, replace(before, text=text))
            out[n + 1] = (next_page, replace(after, text=rest))
    return out


def draft(source: Source, read: ReadDocument, settings: Settings) -> Draft:
    """Passages (page, position, heading), the passages of each table's rows, and their
    keywords; pure."""
    pieces: list[tuple[int, str, str, tuple[int, int] | None]] = []
    reads: list[str] = []
    for number, section in flowing(read.pages):
        for text in split(section.text, settings):
            pieces.append((number, text, section.heading, None))
            reads.append(text)
    for table in read.tables:
        chunks = table_chunks(table.markdown, table.caption, header_rows=table.header_rows)
        for text, encoded in chunks:
            pieces.append((table.page, text, "", (table.page, table.index)))
            reads.append(encoded)
    extractor = KeywordExtractor(count=settings.keywords_per_passage)
    keywords = extractor.extract(
        [text for _, text, _, _ in pieces],
        title=read.title,
        extra=[
            (heading,) if heading and heading != read.title else () for _, _, heading, _ in pieces
        ],
    )
    passages = tuple(
        PassageRecord(
            page=page, ordinal=i, text=text, embedding=(), keywords=keywords[i], table=table
        )
        for i, (page, text, _, table) in enumerate(pieces)
    )
    record = DocumentRecord(
        id=source.doc_id,
        path=source.path,
        title=read.title,
        sha256=source.sha256,
        bytes=source.size,
        kind=read.kind,
        pages=max(1, len(read.pages)),
        ingested_at=datetime.now(UTC).isoformat(timespec="seconds"),
        groups=source.groups,
    )
    graph = DocumentGraph(document=record, passages=passages, tables=read.tables)
    return Draft(source, graph, tuple(reads))


def embed_drafts(
    drafts: Sequence[Draft],
    encode: Callable[[list[str]], np.ndarray],
    known: dict[str, np.ndarray],
) -> list[np.ndarray]:
    """Embeddings of every draft's passages in one encoder call, each as the encoder reads it
    (``Draft.reads``), at the precision the graph keeps (:func:`stored_vectors`); texts in
    ``known`` (unchanged passages of the stored version) are not embedded again."""
    reads = {t: r for d in drafts for t, r in zip(d.texts, d.reads, strict=True) if t not in known}
    wanted = list(reads)
    fresh = encode([reads[t] for t in wanted]) if wanted else np.zeros((0, 0), dtype=np.float32)
    table = {**known, **{text: fresh[i] for i, text in enumerate(wanted)}}
    return [
        stored_vectors(np.stack([table[t] for t in d.texts]))
        if d.texts
        else np.zeros((0, 0), dtype=np.float32)
        for d in drafts
    ]


def with_embeddings(graph: DocumentGraph, vectors: np.ndarray) -> DocumentGraph:
    passages = tuple(
        replace(p, embedding=tuple(vectors[i].tolist())) for i, p in enumerate(graph.passages)
    )
    return replace(graph, passages=passages)


def write_batches(
    documents: list[tuple[DocumentGraph, bool, np.ndarray]],
) -> Iterator[list[tuple[DocumentGraph, bool, np.ndarray]]]:
    """Documents in order, several per write query: a query per one-passage document would
    cost more than the passage (each document is still whole or absent: a query is atomic)."""
    batch: list[tuple[DocumentGraph, bool, np.ndarray]] = []
    rows = 0
    for item in documents:
        batch.append(item)
        rows += len(item[0].passages) + len(item[0].tables) + 1
        if rows >= WRITE_BATCH_ROWS:
            yield batch
            batch, rows = [], 0
    if batch:
        yield batch

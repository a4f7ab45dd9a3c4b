"""The reading half of a sync: candidates read, split, given keywords and embedded, in windows
large enough for the encoder, then cut into the smaller groups that are linked and written
together (nothing here writes a document).

The encoder batches only texts of one token length (see ``Encoder.encode``), so the more texts
one call sees, the fuller its batches: the 6,119 passages of the 2Wiki train corpus embedded in
calls of about 1,200 took 7 to 13 % longer than in one call. Linking wants smaller groups: a
group's new passages are compared with each other (quadratic) and its k-NN floor is set per
group."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from kgp.errors import DocumentError, KgpError
from kgp.ingest.builder import Draft, Source, draft, embed_drafts, sha256
from kgp.ingest.embedding import Encoder
from kgp.ingest.readers import reader_for
from kgp.ingest.report import Skipped, SyncReport
from kgp.ingest.sources import Candidate
from kgp.settings import Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import DocumentSummary, text_hash

WINDOW_TEXTS = 8192  # texts embedded by one encoder call, at most (a larger document: all of it)
WINDOW_DOCUMENTS = 8192  # candidates read per window, at most (unchanged ones included)
LINK_PASSAGES = 2048  # new passages linked and written together, at most
LINK_DOCUMENTS = 2048

Prepared = tuple[Draft, bool]  # a document to write, and whether it replaces a stored version


@dataclass
class Window:
    """Documents read and embedded together: what to write, and how far the sync is."""

    drafts: list[Prepared] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    read: int = 0  # candidates consumed, unchanged and skipped ones included
    last: str = ""  # the path of the last of them

    def groups(self) -> Iterator[tuple[list[Prepared], list[np.ndarray]]]:
        """The window's documents in order, in groups to link and write together."""
        start, passages = 0, 0
        for end, (made, _) in enumerate(self.drafts, start=1):
            passages += len(made.graph.passages)
            if passages >= LINK_PASSAGES or end - start >= LINK_DOCUMENTS:
                yield self.drafts[start:end], self.vectors[start:end]
                start, passages = end, 0
        if start < len(self.drafts):
            yield self.drafts[start:], self.vectors[start:]


class Reader:
    """Turns a sync's candidates into windows of embedded drafts."""

    def __init__(
        self,
        *,
        store: GraphStore,
        settings: Settings,
        encoder: Encoder,
        guard: Callable[[], AbstractContextManager[object]],
    ) -> None:
        self.store = store
        self.settings = settings
        self.encoder = encoder
        self.guard = guard

    def windows(
        self,
        candidates: Iterable[Candidate],
        stored: Mapping[str, DocumentSummary],
        report: SyncReport,
    ) -> Iterator[Window]:
        """Windows of drafts with their vectors; unchanged documents are counted, unreadable
        ones reported, and documents whose readers alone changed are regrouped (a write)."""
        window = Window()
        regrouped: dict[str, tuple[str, ...]] = {}
        texts = 0
        for cand in candidates:
            window.read += 1
            window.last = cand.path
            made = self._draft(cand, stored, report, regrouped)
            if made is not None:
                window.drafts.append(made)
                texts += len(made[0].graph.passages)
            if texts >= WINDOW_TEXTS or window.read >= WINDOW_DOCUMENTS:
                yield self._embedded(window, regrouped, report)
                window, regrouped, texts = Window(), {}, 0
        if window.read:
            yield self._embedded(window, regrouped, report)

    def _draft(
        self,
        cand: Candidate,
        stored: Mapping[str, DocumentSummary],
        report: SyncReport,
        regrouped: dict[str, tuple[str, ...]],
    ) -> Prepared | None:
        """Read, split and extract keywords of one candidate; None when there is nothing to
        write (unchanged, only regrouped, or unreadable: reported)."""
        try:
            data, read = cand.load()
        except DocumentError as exc:
            report.skipped.append(Skipped(cand.path, reason(exc, cand.path)))
            return None
        digest = sha256(data)
        old = stored.get(cand.doc_id)
        if old is not None and old.sha256 == digest:
            if old.groups != cand.groups:  # who may read it changed, not its content
                regrouped[cand.doc_id] = cand.groups
            else:
                report.unchanged += 1
            return None
        try:
            if read is None:
                reader = reader_for(Path(cand.path))
                assert reader is not None
                read = reader.read(Path(cand.path), data, tables=self.settings.tables)
            source = Source(cand.doc_id, cand.path, digest, len(data), cand.groups)
            made = draft(source, read, self.settings)
            if not made.graph.passages and not made.graph.tables:
                raise DocumentError(f"{cand.path}: no text to index")
        except DocumentError as exc:
            report.skipped.append(Skipped(cand.path, reason(exc, cand.path)))
            return None
        report.notices += [f"{cand.path}: {notice}" for notice in read.notices]
        return made, old is not None

    def _embedded(
        self, window: Window, regrouped: dict[str, tuple[str, ...]], report: SyncReport
    ) -> Window:
        if regrouped:
            with self.guard():
                self.store.set_document_groups(regrouped)  # one query for the window's documents
            report.regrouped += regrouped
        if window.drafts:
            # a text the graph already holds (an unchanged passage of a replaced document, or
            # the same text anywhere) reuses its stored vector: identical texts share one vector
            drafts = [made for made, _ in window.drafts]
            hashes = {text_hash(t): t for made in drafts for t in made.texts}
            known = {
                hashes[h]: np.asarray(v, dtype=np.float32)
                for h, v in self.store.links.vectors_by_text_hash(hashes).items()
            }
            window.vectors = embed_drafts(drafts, self.encoder.encode, known)
        return window


def reason(exc: KgpError, path: str) -> str:
    """The error without the path it starts with (a report lists the path beside it)."""
    text = str(exc)
    return text[len(path) + 2 :] if text.startswith(path + ": ") else text

"""The one interface of a graph, embedded or served: what ``kgp.open`` (a
:class:`~kgp.client.KnowledgeGraph`) and ``kgp.connect`` (a :class:`~kgp.remote.RemoteGraph`)
both give, with the same signatures and the same result types, so an application moves from
one to the other by changing the line that opens it; :class:`AsyncGraph` is the same with
``await`` (``kgp.connect_async``). ``tests/test_clients.py`` keeps the signatures equal and runs
one scenario through both."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kgp.agents.reader import Answer
    from kgp.agents.results import Retrieval
    from kgp.ingest.report import Progress, SyncReport
    from kgp.stores.model import DocumentSummary, DocumentView, GraphCounts

# what both implement, in this order in the docs
METHODS = (
    "sync",
    "retrieve",
    "ask",
    "ask_stream",
    "add",
    "remove",
    "documents",
    "document",
    "stats",
    "traces",
    "trace",
    "close",
)


class Graph(Protocol):
    def sync(
        self,
        folder: str | Path,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        allow_removal: bool = False,
    ) -> SyncReport:
        """Make the documents equal to ``folder``: add new files, replace changed ones, remove
        those it no longer holds (refused, and nothing changed, when that is every document or
        more than half of 10 or more, unless ``allow_removal``). Embedded, ids are paths
        relative to ``folder``; served, the key's uploads, ``upload:<key name>/<file name>``."""
        ...

    def retrieve(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Retrieval:
        """Evidence for ``question``: up to ``k`` passages (default: the settings' budget), in
        the order chosen (``order``), each with its score, path and document."""
        ...

    def ask(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Answer:
        """An answer from the configured chat model, citing the passages it used; without a
        model, or when it fails, ``answer`` is None and ``error`` says why."""
        ...

    def ask_stream(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Iterator[str | Answer]:
        """``ask`` as the model writes: the reply's pieces, then the :class:`Answer`, last."""
        ...

    def add(
        self,
        *paths: str | Path,
        root: str | Path | None = None,
        groups: Iterable[str] | None = None,
    ) -> SyncReport:
        """Add or replace files. Embedded, each id is its path relative to ``root`` (default:
        the files' common folder); served, ``upload:<key name>/<file name>`` (``root`` is
        refused). ``groups``: who may read them."""
        ...

    def remove(self, doc_id: str) -> bool:
        """Remove one document; False when there is none the caller may see."""
        ...

    def documents(self) -> list[DocumentSummary]:
        """The documents the caller may read, with their pages, tables and passages counted."""
        ...

    def document(self, doc_id: str) -> DocumentView | None:
        """One document's record and pages; None when there is none the caller may read."""
        ...

    def stats(self) -> GraphCounts:
        """Nodes by label, relationships by type and documents by group, as the caller reads."""
        ...

    def traces(self, limit: int = 25) -> list[dict[str, Any]]:
        """The saved questions the caller may read, newest first."""
        ...

    def trace(self, trace_id: str) -> dict[str, Any] | None:
        """One saved question with its evidence and paths; None when none the caller may read."""
        ...

    def close(self) -> None: ...


class AsyncGraph(Protocol):
    """:class:`Graph` with ``await`` (and ``async for`` for ``ask_stream``)."""

    async def sync(
        self,
        folder: str | Path,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        allow_removal: bool = False,
    ) -> SyncReport: ...

    async def retrieve(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Retrieval: ...

    async def ask(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Answer: ...

    def ask_stream(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> AsyncIterator[str | Answer]: ...

    async def add(
        self,
        *paths: str | Path,
        root: str | Path | None = None,
        groups: Iterable[str] | None = None,
    ) -> SyncReport: ...

    async def remove(self, doc_id: str) -> bool: ...

    async def documents(self) -> list[DocumentSummary]: ...

    async def document(self, doc_id: str) -> DocumentView | None: ...

    async def stats(self) -> GraphCounts: ...

    async def traces(self, limit: int = 25) -> list[dict[str, Any]]: ...

    async def trace(self, trace_id: str) -> dict[str, Any] | None: ...

    async def aclose(self) -> None: ...

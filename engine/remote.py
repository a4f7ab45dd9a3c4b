"""A graph served by ``kgp serve``, used like one opened with ``kgp.open``: the same methods
(``retrieve``, ``ask``, ``ask_stream``, ``add``, ``remove``, ``documents``, ``stats``,
``traces``) and the same result types, so an application moves from embedded to served by
changing one line::

    with kgp.connect("http://kb.internal:8000", api_key=key) as kg:     # was kgp.open(...)
        kg.retrieve("Which station recorded the most rain?").passages

``kgp.connect_async`` gives the same with ``await``. The server's JSON errors become kgp's
exceptions with the server's message: 401 and 403 :class:`~kgp.errors.AccessDeniedError`, 404
:class:`~kgp.errors.DocumentError`, other 4xx :class:`~kgp.errors.ConfigurationError`, 5xx and
an unreachable server :class:`~kgp.errors.StoreUnavailableError`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import httpx
from kgp.agents.reader import Answer
from kgp.agents.results import Retrieval, RetrievedPassage
from kgp.closing import Closing
from kgp.errors import (
    AccessDeniedError,
    ConfigurationError,
    DocumentError,
    KgpError,
    StoreUnavailableError,
)
from kgp.ingest.report import Progress, Skipped, SyncReport
from kgp.remote_sync import Plan, sync_plan
from kgp.serve.events import EventReader, read_events
from kgp.settings import load_settings
from kgp.stores.model import (
    DocumentSummary,
    DocumentView,
    GraphCounts,
    PageContent,
    PagePassage,
    PageTable,
)

TIMEOUT = httpx.Timeout(120.0, connect=10.0)


def _error(response: httpx.Response) -> KgpError:
    try:
        message = str(response.json()["error"])
    except (ValueError, KeyError, TypeError):
        message = response.text[:200] or response.reason_phrase
    where = f"{response.request.method} {response.request.url.path}"
    text = f"{where}: {response.status_code} {message}"
    if response.status_code in (401, 403):
        return AccessDeniedError(text)
    if response.status_code == 404:
        return DocumentError(text)
    if response.status_code < 500:
        return ConfigurationError(text)
    return StoreUnavailableError(text)


def _checked(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise _error(response)
    return response.json()


def _query(question: str, k: int | None, *choices: str | None) -> dict[str, Any]:
    """A question's body: what is left unset is the server's setting."""
    body = dict(
        zip(
            ("question", "k", "scorer", "seeder", "order", "method"),
            (question, k, *choices),
            strict=True,
        )
    )
    return {key: value for key, value in body.items() if value is not None}


def _passages(rows: list[dict[str, Any]]) -> list[RetrievedPassage]:
    names = {f.name for f in fields(RetrievedPassage)}
    return [RetrievedPassage(**{k: v for k, v in row.items() if k in names}) for row in rows]


def _retrieval(body: dict[str, Any]) -> Retrieval:
    names = {f.name for f in fields(Retrieval)} - {"passages"}
    retrieval = Retrieval(**{k: v for k, v in body.items() if k in names})
    retrieval.passages = _passages(body.get("passages", []))
    return retrieval


def _answer(body: dict[str, Any]) -> Answer:
    names = {f.name for f in fields(Answer)} - {"passages"}
    answer = Answer(**{k: v for k, v in body.items() if k in names})
    answer.passages = _passages(body.get("passages", []))
    return answer


def _streamed(name: str, data: Any, evidence: list[dict[str, Any]]) -> str | Answer | None:
    """What one event of a streamed ``/ask`` gives (see :mod:`kgp.serve.events`): a piece of
    the reply, the Answer, or nothing (``evidence`` keeps the passages sent first until the
    answer comes)."""
    if name == "evidence":
        evidence[:] = data.get("passages", [])
    elif name == "token":
        return str(data["text"])
    elif name == "answer":
        return _answer({**data, "passages": evidence})
    return None


def _documents(rows: list[dict[str, Any]]) -> list[DocumentSummary]:
    names = {f.name for f in fields(DocumentSummary)} - {"groups"}
    return [
        DocumentSummary(
            **{k: v for k, v in row.items() if k in names}, groups=tuple(row.get("groups") or ())
        )
        for row in rows
    ]


def _view(body: dict[str, Any]) -> DocumentView:
    pages = tuple(
        PageContent(
            doc_id=page["doc_id"],
            number=page["number"],
            passages=tuple(PagePassage(**p) for p in page["passages"]),
            tables=tuple(PageTable(**t) for t in page["tables"]),
        )
        for page in body["pages"]
    )
    return DocumentView(**{**body, "groups": tuple(body["groups"]), "pages": pages})


def _report(body: dict[str, Any]) -> SyncReport:
    return SyncReport(
        added=list(body.get("added", [])),
        changed=list(body.get("changed", [])),
        unchanged=len(body.get("unchanged", [])),
        skipped=[Skipped(s["path"], s["reason"]) for s in body.get("skipped", [])],
        passages=int(body.get("passages", 0)),
        seconds=float(body.get("seconds", 0.0)),
    )


def _planned(
    folder: Path, me: dict[str, Any], documents: list[DocumentSummary], allow_removal: bool
) -> Plan:
    """The remote sync's plan (:mod:`kgp.remote_sync`) for the key ``/me`` describes, checked by
    the removal guard with the user's ``KGP_MAX_REMOVAL_SHARE``."""
    uploads = str(me["uploads"])
    held = {d.id: d.sha256 for d in documents if d.id.startswith(uploads)}
    plan = sync_plan(folder, uploads, held, int(float(me["max_file_mb"]) * 1024 * 1024))
    plan.check(str(folder), load_settings().max_removal_share, allow_removal)
    return plan


def _uploaded(paths: tuple[str | Path, ...], root: str | Path | None) -> list[Path]:
    if root is not None:
        raise ConfigurationError(
            "root: a served graph names an upload by its key and file name; leave root out"
        )
    if not paths:
        raise DocumentError("add: give one file or more")
    return [Path(p) for p in paths]


def _document_path(doc_id: str) -> str:
    """The URL path of a document: its id quoted (an id may hold spaces, ``#`` or ``?``)."""
    return "/documents/" + quote(doc_id, safe="/")


def _groups(groups: Iterable[str] | None) -> dict[str, str] | None:
    return None if groups is None else {"groups": ",".join(groups)}


def _files(paths: list[Path]) -> list[tuple[str, tuple[str, bytes, str]]]:
    out = []
    for path in paths:
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise DocumentError(f"{path}: cannot read the file ({exc.strerror})") from None
        out.append(("file", (path.name, content, "application/octet-stream")))
    return out


class RemoteGraph(Closing):
    """A served graph (``kgp.connect``): the methods of :class:`kgp.client.KnowledgeGraph`
    that a reader or uploader uses."""

    def __init__(self, url: str, *, api_key: str | None = None, timeout: Any = TIMEOUT) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return _checked(self._http.request(method, path, **kwargs))
        except httpx.HTTPError as exc:
            raise StoreUnavailableError(f"{self.url}: cannot reach kgp serve ({exc})") from None

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
        return _retrieval(
            self._call("POST", "/retrieve", json=_query(question, k, scorer, seeder, order, method))
        )

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
        return _answer(
            self._call("POST", "/ask", json=_query(question, k, scorer, seeder, order, method))
        )

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
        """``ask`` as the model writes: the reply's pieces as they come, then the Answer, last
        (as ``KnowledgeGraph.ask_stream``)."""
        body = {**_query(question, k, scorer, seeder, order, method), "stream": True}
        try:
            with self._http.stream("POST", "/ask", json=body) as response:
                if response.status_code >= 400:
                    response.read()
                    raise _error(response)
                evidence: list[dict[str, Any]] = []
                for name, data in read_events(response.iter_lines()):
                    item = _streamed(name, data, evidence)
                    if item is not None:
                        yield item
        except httpx.HTTPError as exc:
            raise StoreUnavailableError(f"{self.url}: cannot reach kgp serve ({exc})") from None

    def add(
        self,
        *paths: str | Path,
        root: str | Path | None = None,
        groups: Iterable[str] | None = None,
    ) -> SyncReport:
        """Upload files; each becomes ``upload:<key name>/<file name>`` with the key's upload
        groups, or ``groups`` when they are among the key's own."""
        files = _files(_uploaded(paths, root))
        return _report(self._call("POST", "/documents", files=files, data=_groups(groups)))

    def remove(self, doc_id: str) -> bool:
        """As ``KnowledgeGraph.remove``: False when there is none the caller may see."""
        try:
            return bool(self._call("DELETE", _document_path(doc_id))["removed"])
        except DocumentError:
            return False

    def sync(
        self,
        folder: str | Path,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        allow_removal: bool = False,
    ) -> SyncReport:
        """Make this key's uploads equal to ``folder``: send new and changed files (those the
        server holds as they are stay unsent), remove uploads the folder no longer holds,
        with the removal guard of ``kgp sync`` (``allow_removal``), which is checked before
        anything is sent. ``on_progress`` hears after each request of up to 20 files."""
        me = self._call("GET", "/me")
        plan = _planned(Path(folder), me, self.documents(), allow_removal)
        reports: list[SyncReport] = []
        for batch in plan.batches():
            reports.append(self.add(*batch))
            plan.progress(reports, on_progress)
        removed = [doc_id for doc_id in plan.gone if self.remove(doc_id)]
        return plan.report(reports, removed)

    def documents(self) -> list[DocumentSummary]:
        return _documents(self._call("GET", "/documents"))

    def document(self, doc_id: str) -> DocumentView | None:
        """As ``KnowledgeGraph.document``: None when there is none the caller may read."""
        try:
            return _view(self._call("GET", _document_path(doc_id)))
        except DocumentError:
            return None

    def stats(self) -> GraphCounts:
        return GraphCounts(**self._call("GET", "/stats"))

    def traces(self, limit: int = 25) -> list[dict[str, Any]]:
        return list(self._call("GET", "/traces", params={"limit": limit}))

    def trace(self, trace_id: str) -> dict[str, Any] | None:
        try:
            return dict(self._call("GET", f"/traces/{quote(trace_id, safe='')}"))
        except DocumentError:
            return None

    def close(self) -> None:
        self._http.close()


class AsyncRemoteGraph:
    """:class:`RemoteGraph` with ``await`` (``kgp.connect_async``)."""

    def __init__(self, url: str, *, api_key: str | None = None, timeout: Any = TIMEOUT) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=timeout)

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return _checked(await self._http.request(method, path, **kwargs))
        except httpx.HTTPError as exc:
            raise StoreUnavailableError(f"{self.url}: cannot reach kgp serve ({exc})") from None

    async def retrieve(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Retrieval:
        return _retrieval(
            await self._call(
                "POST", "/retrieve", json=_query(question, k, scorer, seeder, order, method)
            )
        )

    async def ask(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> Answer:
        return _answer(
            await self._call(
                "POST", "/ask", json=_query(question, k, scorer, seeder, order, method)
            )
        )

    async def ask_stream(
        self,
        question: str,
        k: int | None = None,
        *,
        scorer: str | None = None,
        seeder: str | None = None,
        order: str | None = None,
        method: str | None = None,
    ) -> AsyncIterator[str | Answer]:
        """``RemoteGraph.ask_stream`` with ``async for``."""
        body = {**_query(question, k, scorer, seeder, order, method), "stream": True}
        try:
            async with self._http.stream("POST", "/ask", json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _error(response)
                evidence: list[dict[str, Any]] = []
                reader = EventReader()
                async for line in response.aiter_lines():
                    done = reader.feed(line)
                    item = _streamed(*done, evidence) if done is not None else None
                    if item is not None:
                        yield item
        except httpx.HTTPError as exc:
            raise StoreUnavailableError(f"{self.url}: cannot reach kgp serve ({exc})") from None

    async def add(
        self,
        *paths: str | Path,
        root: str | Path | None = None,
        groups: Iterable[str] | None = None,
    ) -> SyncReport:
        files = _files(_uploaded(paths, root))
        return _report(await self._call("POST", "/documents", files=files, data=_groups(groups)))

    async def remove(self, doc_id: str) -> bool:
        try:
            return bool((await self._call("DELETE", _document_path(doc_id)))["removed"])
        except DocumentError:
            return False

    async def sync(
        self,
        folder: str | Path,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        allow_removal: bool = False,
    ) -> SyncReport:
        me, documents = await self._call("GET", "/me"), await self.documents()
        plan = await asyncio.to_thread(_planned, Path(folder), me, documents, allow_removal)
        reports: list[SyncReport] = []
        for batch in plan.batches():
            reports.append(await self.add(*batch))
            plan.progress(reports, on_progress)
        removed = [doc_id for doc_id in plan.gone if await self.remove(doc_id)]
        return plan.report(reports, removed)

    async def documents(self) -> list[DocumentSummary]:
        return _documents(await self._call("GET", "/documents"))

    async def document(self, doc_id: str) -> DocumentView | None:
        try:
            return _view(await self._call("GET", _document_path(doc_id)))
        except DocumentError:
            return None

    async def stats(self) -> GraphCounts:
        return GraphCounts(**(await self._call("GET", "/stats")))

    async def traces(self, limit: int = 25) -> list[dict[str, Any]]:
        return list(await self._call("GET", "/traces", params={"limit": limit}))

    async def trace(self, trace_id: str) -> dict[str, Any] | None:
        try:
            return dict(await self._call("GET", f"/traces/{quote(trace_id, safe='')}"))
        except DocumentError:
            return None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

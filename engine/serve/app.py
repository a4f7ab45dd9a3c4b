"""The HTTP API of ``kgp serve``: one graph and its models shared by every request, each request
read as the caller its API key names (``Authorization: Bearer <key>``), or, without a keys file,
as the settings' caller on a loopback address only.

The graph is opened with a caller no document can have, so a request that did not bind its own
caller reads nothing. A request for a document the caller may not read gets 404, as one that does
not exist. Errors are JSON ``{"error": "..."}`` naming the problem; never a traceback."""

import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Form, Header, Request, UploadFile
from fastapi import Query as Parameter
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from kgp.access import ADMIN_CALLER, Caller, check_groups
from kgp.agents.reader import Answer, answer_from
from kgp.audit import AuditLog, documents_of, parse_since
from kgp.client import KnowledgeGraph
from kgp.errors import (
    AccessDeniedError,
    ConfigurationError,
    KgpError,
    StoreError,
    StoreUnavailableError,
)
from kgp.ids import MAX_UPLOAD_FILES, UPLOAD_PREFIX, upload_id, uploader
from kgp.serve.edge import Edge, KeyLimits, request_key
from kgp.serve.errors import HttpError
from kgp.serve.events import answer_events
from kgp.serve.keys import Key, Keys, upload_groups
from kgp.serve.metrics import RequestIds, ServeMetrics, add_routes
from kgp.serve.replies import (
    AuditEntry,
    Counts,
    Document,
    Health,
    Me,
    Neighbours,
    Regrouped,
    Removed,
    Retrieved,
    Trace,
    TraceSummary,
    Uploaded,
)
from kgp.serve.requests import Query, Regrouping, plain_id
from kgp.serve.trail import Trail
from kgp.serve.uploads import clean_name, save_uploads, upload_file
from kgp.settings import MAX_QUESTION_CHARS, Settings
from kgp.stores.model import DocumentView, EdgeKind, passage_document
from starlette.exceptions import HTTPException as StarletteHTTPException

STATIC = Path(__file__).with_name("static")  # the page's HTML, CSS and JavaScript
PAGE_HEADERS = {  # the page loads nothing from elsewhere and runs no inline script
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
STREAMED: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The answer; streamed: server-sent events evidence, token..., answer",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def asked(question: str) -> dict[str, Any]:
    """A question as the audit trail keeps it: as much as a retrieval reads, and the length of
    one that was longer."""
    if len(question) <= MAX_QUESTION_CHARS:
        return {"question": question}
    return {"question": question[:MAX_QUESTION_CHARS], "question_chars": len(question)}


def create_app(
    kg: KnowledgeGraph,
    keys: Keys | None,
    local: Settings | None = None,
    *,
    hosts: Iterable[str] | None = None,
    say: Callable[[str], None] | None = None,
) -> FastAPI:
    """The API over ``kg``; with ``keys``, every request but ``/health`` and the page needs
    one. Without, every request reads as ``local`` (the user's settings: ``KGP_GROUPS``, else
    the default groups; ``kg``'s own by default), and may write only when ``KGP_GROUPS`` is
    unset there (the data directory's operator). ``hosts``: the host names requests may
    address (None: any); ``say`` hears what went wrong inside, which clients are not told."""
    say = say or (lambda line: None)
    app = FastAPI(
        title="kgp",
        version="1",
        summary="Knowledge Graph Prompting over HTTP",
        docs_url=None,  # the interactive pages load scripts from a CDN: /openapi.json only
        redoc_url=None,
    )
    uploads = kg.settings.data_dir / "uploads"
    limit = int(kg.settings.max_file_mb * 1024 * 1024)
    nobody = Caller((f"kgp:nobody:{secrets.token_hex(8)}",))  # no document has this group
    kg.store.caller = nobody
    local = local or kg.settings
    fallback = local.caller if keys is None else nobody
    operator = keys is None and local.groups is None

    local_key = Key("local", fallback, b"", b"", local.default_groups if operator else ())
    settings = kg.settings
    trail = Trail(
        AuditLog(
            settings.data_dir / "audit",
            int(settings.audit_max_mb * 1024 * 1024),
            settings.audit_keep_days,
        )
    )
    limits = KeyLimits(
        local.serve_requests_per_minute, local.serve_uploads_per_key, local.serve_write_queue
    )
    app.add_middleware(
        Edge,
        keys=keys,
        refused=trail.refused,
        limits=limits,
        body_stall_s=local.serve_body_stall_s,
        hosts=hosts,
        key_pattern=local.serve_key_pattern,
        upload_bytes=MAX_UPLOAD_FILES * limit + 1024 * 1024,  # the files and their form's headers
    )
    metrics = ServeMetrics(kg, writes_waiting=lambda: limits.writing)
    app.add_middleware(RequestIds, metrics=metrics, routes=lambda: app.routes)  # (outermost)
    add_routes(app, kg, metrics)

    def requester(request: Request) -> Key:
        if keys is None:
            return local_key
        key = request_key(request)
        if key is None:  # (the Edge lets no request without a key reach an endpoint)
            raise HttpError(401, "a valid API key is needed: Authorization: Bearer <key>")
        return key

    def caller(key: Annotated[Key, Depends(requester)]) -> Caller:
        return key.caller

    Who = Annotated[Caller, Depends(caller)]
    Requester = Annotated[Key, Depends(requester)]

    @contextmanager
    def reading(who: Caller) -> Iterator[None]:
        try:
            with kg.store.reading_as(who):
                yield
        except AccessDeniedError as exc:
            raise HttpError(403, str(exc)) from None
        except ConfigurationError as exc:
            raise HttpError(400, str(exc)) from None
        except StoreUnavailableError as exc:  # the engine's own words stay in the server's log
            say(f"the graph store is unavailable: {exc}")
            raise HttpError(503, "the graph store is unavailable; try again shortly") from None
        except StoreError as exc:
            say(f"the graph store failed: {exc}")
            raise HttpError(503, "the graph store failed this request; its log says why") from None
        except KgpError as exc:
            raise HttpError(503, str(exc)) from None

    @app.exception_handler(HttpError)
    def _http_error(request: Request, exc: HttpError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(part) for part in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
            for e in exc.errors()
        ]
        return JSONResponse({"error": "; ".join(problems)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    def _starlette(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        say(f"internal error on {request.method} {request.url.path}: {type(exc).__name__}: {exc}")
        return JSONResponse({"error": f"internal error ({type(exc).__name__})"}, status_code=500)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        """The web page: upload, list, ask, and the answer with its evidence and paths."""
        return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/health")
    def health() -> Health:
        """Whether the server and its store answer (no key needed)."""
        return Health(status="ok", keys=keys is not None)

    @app.get("/me")
    def me(key: Requester) -> Me:
        """Who a request with this key reads as, and where its uploads go (``kgp.connect``'s
        ``sync`` compares a folder with the documents under ``uploads``)."""
        groups = ["*"] if key.caller.admin else list(key.caller.groups)
        return Me(
            key=key.name,
            groups=groups,
            upload=list(key.upload),
            uploads=upload_id(key.name, ""),
            max_file_mb=kg.settings.max_file_mb,
        )

    @app.get("/stats")
    def stats(who: Who) -> Counts:
        """Nodes, relationships and documents by group that the caller may read."""
        with reading(who):
            return Counts(**kg.stats().as_dict())

    @app.get("/documents")
    def documents(who: Who) -> list[Document]:
        """The documents the caller may read."""
        with reading(who):
            found = kg.documents()
        return [Document(**{**asdict(d), "groups": list(d.groups or ())}) for d in found]

    @app.get("/documents/{doc_id:path}")
    def document(doc_id: str, key: Requester) -> DocumentView:
        """One document as kgp holds it: its record and its pages, each with its passages and
        tables in reading order. 404 when the caller may not read it or it does not exist."""
        with trail.request(key, "document", documents=[doc_id]) as entry:
            plain_id(doc_id)
            with reading(key.caller):
                view = kg.document(doc_id)
            if view is None:
                raise HttpError(404, f"no document {doc_id!r}")
            entry["returned"] = [doc_id]
            return view

    @app.get("/neighbours/{passage_id:path}")
    def neighbours(
        passage_id: str, key: Requester, kinds: str = "similar,next,keyword", limit: int = 8
    ) -> Neighbours:
        """A passage and its neighbours (``kinds``: comma-separated among similar, next and
        keyword; at most ``limit`` of each), only passages the caller may read. 404 when the
        caller may not read it or it does not exist."""
        about = {"documents": [passage_document(passage_id)], "passage": passage_id}
        with trail.request(key, "neighbours", **about) as entry:
            plain_id(passage_id)
            try:
                chosen = [EdgeKind(kind.strip()) for kind in kinds.split(",") if kind.strip()]
            except ValueError:
                raise HttpError(
                    422, f"kinds: {kinds!r}; give some of similar, next, keyword"
                ) from None
            with reading(key.caller):
                near = kg.neighbourhood(passage_id, chosen, limit=max(1, min(limit, 50)))
            if near is None:
                raise HttpError(404, f"no passage {passage_id!r}")
            entry["returned"] = sorted({near.node.doc_id, *(n.doc_id for n in near.nodes)})
            return Neighbours.model_validate(near.as_dict())

    @app.delete("/documents/{doc_id:path}")
    def remove(doc_id: str, key: Requester) -> Removed:
        """Remove a document: any, with the admin view (or as the operator of a server without
        keys); else only what this key uploaded. 404 when the caller may not read it or it
        does not exist."""
        with trail.request(key, "remove", documents=[doc_id]):
            return removing(doc_id, key)

    def removing(doc_id: str, key: Key) -> Removed:
        plain_id(doc_id)
        with reading(key.caller):
            if kg.store.fetch_nodes([doc_id]).get(doc_id, {}).get("label") != "Document":
                raise HttpError(404, f"no document {doc_id!r}")
            if not (key.caller.admin or operator or uploader(doc_id) == key.name):
                raise HttpError(
                    403,
                    f"key {key.name!r} may remove only what it uploaded; removing other "
                    "documents needs the admin view",
                )
        started = time.perf_counter()
        with reading(ADMIN_CALLER):
            removed = kg.remove(doc_id)
        metrics.wrote("remove", None, time.perf_counter() - started)
        kept = upload_file(uploads, doc_id)
        if kept is not None:  # an upload removed leaves no file behind
            kept.unlink(missing_ok=True)
        return Removed(removed=removed, id=doc_id)

    @app.patch("/documents/{doc_id:path}")
    def regroup(doc_id: str, change: Regrouping, key: Requester) -> Regrouped:
        """Let other groups read a document (the admin view, or the operator of a server
        without keys): ``{"groups": ["hr", "staff"]}``."""
        with trail.request(key, "regroup", documents=[doc_id], to=change.groups):
            return regrouping(doc_id, change, key)

    def regrouping(doc_id: str, change: Regrouping, key: Key) -> Regrouped:
        plain_id(doc_id)
        if not (key.caller.admin or operator):
            raise HttpError(403, "changing a document's groups needs the admin view")
        try:
            chosen = check_groups(change.groups, "groups")
        except ConfigurationError as exc:
            raise HttpError(422, str(exc)) from None
        started = time.perf_counter()
        with reading(ADMIN_CALLER):
            if not kg.regroup(doc_id, chosen):
                raise HttpError(404, f"no document {doc_id!r}")
        metrics.wrote("regroup", None, time.perf_counter() - started)
        return Regrouped(id=doc_id, groups=list(chosen))

    @app.post("/documents")
    def upload(
        key: Requester,
        file: list[UploadFile],
        groups: Annotated[str | None, Form(description="comma-separated")] = None,
    ) -> Uploaded:
        """Add or replace documents (multipart field ``file``, one or many) through the same
        sync as ``kgp sync``: each becomes ``upload:<key name>/<file name>`` (a key reaches
        only its own uploads) with the key's upload groups, or with ``groups`` (a form field)
        when they are among the key's own (any, for an admin key or the operator). Changing
        the groups of a document already uploaded needs the admin view. Files kgp cannot read
        are listed under ``skipped`` with the reason."""
        names = [str(f.filename) for f in file]
        with trail.request(key, "upload", files=names) as entry:
            report = uploading(key, file, groups)
            entry["documents"] = [*report.added, *report.changed, *report.unchanged]
            return report

    def uploading(key: Key, file: list[UploadFile], groups: str | None) -> Uploaded:
        if not key.upload:
            raise HttpError(403, f"key {key.name!r} may not upload (kgp key --upload GROUPS)")
        if len(file) > MAX_UPLOAD_FILES:
            raise HttpError(
                422, f"file: {len(file)} files; send at most {MAX_UPLOAD_FILES} a request"
            )
        chosen = key.upload
        admin = key.caller.admin or operator
        if groups is not None:
            owner = ADMIN_CALLER if keys is None else key.caller  # without keys: the operator
            try:
                chosen = upload_groups(groups, owner, "groups")
            except ConfigurationError as exc:
                raise HttpError(422, str(exc)) from None
        names = [clean_name(f.filename) for f in file]
        ids = [upload_id(key.name, name) for name in names]
        if not admin:
            with reading(ADMIN_CALLER):
                stored = kg.store.fetch_nodes(ids)
            for doc_id, node in stored.items():
                if set(node.get("groups") or ()) != set(chosen):
                    raise HttpError(
                        403,
                        f"{doc_id!r} is readable by {', '.join(node.get('groups') or ())}; "
                        "changing a document's groups needs the admin view "
                        "(PATCH /documents/ID)",
                    )
        saved = save_uploads(file, names, uploads / key.name, limit)  # all or none
        with reading(ADMIN_CALLER):  # one sync for the whole request
            done = kg.add_files(saved, root=uploads, groups=chosen, id_prefix=UPLOAD_PREFIX)
        metrics.wrote("upload", done, done.seconds)
        skipped = {s.path: s.reason for s in done.skipped}
        report: dict[str, Any] = {"added": [], "changed": [], "unchanged": [], "skipped": []}
        report.update(passages=done.passages, seconds=round(done.seconds, 3))
        for path, doc_id in zip(saved, ids, strict=True):
            if doc_id in skipped:  # the broken file is not kept (the graph keeps any earlier one)
                path.unlink(missing_ok=True)
                reason = skipped[doc_id].replace(str(path), doc_id)
                report["skipped"].append({"path": doc_id, "reason": reason})
                continue
            kind = (
                "added" if doc_id in done.added else "changed" if doc_id in done.changed else None
            )
            report[kind or "unchanged"].append(doc_id)
        return Uploaded.model_validate(report)

    @app.post("/retrieve", response_model=Retrieved)  # (checked once, by FastAPI)
    def retrieve(query: Query, key: Requester) -> dict[str, Any]:
        """What ``kgp retrieve --json`` prints: passages with their paths, seeds, timings."""
        with trail.request(key, "retrieve", **asked(query.question)) as entry:
            with reading(key.caller):
                result = kg.retrieve(query.question, query.k, **query.choices())
                trace = None
                if query.save_trace:
                    trace = kg.save_trace(
                        result,
                        scorer=query.scorer or settings.scorer,
                        seeder=query.seeder or settings.seeder,
                    )
            entry["returned"] = documents_of(result.passages)
            metrics.retrieved(result.timings)
            if trace is not None:
                entry["trace"] = trace
            return {**result.as_dict(), "trace": trace}

    @app.post("/ask", response_model=Answer, responses=STREAMED)
    def ask(query: Query, key: Requester, accept: Annotated[str, Header()] = "") -> Any:
        """What ``kgp ask --json`` prints: the answer, its citations and the evidence. With
        ``"stream": true`` (or ``Accept: text/event-stream``), server-sent events instead: one
        ``evidence`` (the retrieval), a ``token`` for each piece of the reply as the model writes
        it (``{"text"}``, citation marks and all), then ``answer`` (the answer without the
        evidence again)."""
        with trail.request(key, "ask", **asked(query.question)) as entry:
            if query.save_trace:
                raise HttpError(422, "save_trace: only /retrieve saves traces")
            with reading(key.caller):
                retrieval = kg.retrieve(query.question, query.k, **query.choices())
            entry["returned"] = documents_of(retrieval.passages)
            metrics.retrieved(retrieval.timings)
        if not (query.stream or "text/event-stream" in accept):
            return answer_from(retrieval, kg.settings)
        return StreamingResponse(
            answer_events(retrieval, kg.settings),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.get("/traces")
    def traces(who: Who, limit: int = 25) -> list[TraceSummary]:
        """The saved traces the caller may see, newest first."""
        with reading(who):
            return [TraceSummary(**t) for t in kg.traces(max(1, min(limit, 1000)))]

    @app.get("/traces/{trace_id}")
    def trace(trace_id: str, key: Requester) -> Trace:
        """One saved trace, opened again: its question, what it retrieved that the caller may
        read now (by rank) and its steps. 404 when the caller may not see it."""
        with trail.request(key, "trace", trace=trace_id) as entry:
            plain_id(trace_id)
            with reading(key.caller):
                found = kg.trace(trace_id)
            if found is None:
                raise HttpError(404, f"no trace {trace_id!r}")
            entry["returned"] = list(dict.fromkeys(i["doc_id"] for i in found["items"]))
            return Trace.model_validate(found)

    @app.get("/audit", response_model=list[AuditEntry], response_model_exclude_unset=True)
    def audit(
        key: Requester,
        of_key: Annotated[str | None, Parameter(alias="key")] = None,
        since: str | None = None,
        document: str | None = None,
        action: str | None = None,
        limit: int = 1000,
    ) -> list[dict[str, Any]]:
        """The audit trail, oldest first, its last ``limit`` entries of ``key``, from ``since``
        (a time, or 12h, 7d), naming ``document``, of ``action``: for the admin view (or the
        operator of a server without keys) alone, as it names documents of every group."""
        if not (key.caller.admin or operator):
            raise HttpError(403, "the audit trail needs the admin view")
        try:
            start = parse_since(since) if since else None
        except ConfigurationError as exc:
            raise HttpError(422, str(exc).replace("--since", "since")) from None
        found = trail.log.read(key=of_key, since=start, document=document, action=action)
        return list(found)[-max(1, min(limit, 100_000)) :]

    return app

"""The HTTP API of ``kgp serve``: one graph and its models shared by every request, each request
read as the caller its API key names (``Authorization: Bearer <key>``), or, without a keys file,
as the settings' caller on a loopback address only.

The graph is opened with a caller no document can have, so a request that did not bind its own
caller reads nothing. A request for a document the caller may not read gets 404, as one that does
not exist. Errors are JSON ``{"error": "..."}`` naming the problem; never a traceback."""

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kgp.access import ADMIN_CALLER, Caller
from kgp.client import KnowledgeGraph
from kgp.errors import AccessDeniedError, ConfigurationError, KgpError
from kgp.serve.keys import Keys
from pydantic import BaseModel, ConfigDict, Field

MAX_QUESTION_CHARS = 20_000  # a longer body is refused; the retriever uses the first 4,000


class Query(BaseModel):
    """The body of ``/retrieve`` and ``/ask``: the CLI's options."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    k: int | None = Field(default=None, ge=1, le=10_000)
    scorer: str | None = None
    seeder: str | None = None
    order: str | None = None
    method: str | None = None
    save_trace: bool = False


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def create_app(kg: KnowledgeGraph, keys: Keys | None) -> FastAPI:
    """The API over ``kg``; with ``keys``, every request but ``/health`` needs one."""
    app = FastAPI(title="kgp", version="1", summary="Knowledge Graph Prompting over HTTP")
    nobody = Caller((f"kgp:nobody:{secrets.token_hex(8)}",))  # no document has this group
    kg.store.caller = nobody
    fallback = kg.settings.caller if keys is None else nobody
    operator = keys is None and kg.settings.groups is None

    def caller(authorization: Annotated[str | None, Header()] = None) -> Caller:
        if keys is None:
            return fallback
        scheme, _, secret = (authorization or "").partition(" ")
        key = keys.caller(secret.strip()) if scheme.lower() == "bearer" and secret else None
        if key is None:
            raise HttpError(401, "a valid API key is needed: Authorization: Bearer <key>")
        return key.caller

    Who = Annotated[Caller, Depends(caller)]

    @contextmanager
    def reading(who: Caller) -> Iterator[None]:
        try:
            with kg.store.reading_as(who):
                yield
        except AccessDeniedError as exc:
            raise HttpError(403, str(exc)) from None
        except ConfigurationError as exc:
            raise HttpError(400, str(exc)) from None
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

    @app.exception_handler(Exception)
    def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"internal error ({type(exc).__name__})"}, status_code=500)

    @app.get("/health")
    def health() -> dict[str, Any]:
        """Whether the server and its store answer (no key needed)."""
        return {"status": "ok", "keys": keys is not None}

    @app.get("/stats")
    def stats(who: Who) -> dict[str, Any]:
        """Nodes, relationships and documents by group that the caller may read."""
        with reading(who):
            return kg.stats().as_dict()

    @app.get("/documents")
    def documents(who: Who) -> list[dict[str, Any]]:
        """The documents the caller may read."""
        with reading(who):
            return [
                {
                    "id": d.id,
                    "path": d.path,
                    "title": d.title,
                    "pages": d.pages,
                    "groups": list(d.groups or ()),
                }
                for d in kg.documents()
            ]

    @app.delete("/documents/{doc_id:path}")
    def remove(doc_id: str, who: Who) -> dict[str, Any]:
        """Remove a document (the admin view, or the operator of a server without keys); 404
        when the caller may not read it or it does not exist."""
        with reading(who):
            if doc_id not in {d.id for d in kg.documents()}:
                raise HttpError(404, f"no document {doc_id!r}")
            if not (who.admin or operator):
                raise HttpError(403, f"removing needs the admin view; this key reads as {who}")
        with reading(ADMIN_CALLER):
            return {"removed": kg.remove(doc_id), "id": doc_id}

    @app.post("/retrieve")
    def retrieve(query: Query, who: Who) -> dict[str, Any]:
        """What ``kgp retrieve --json`` prints: passages with their paths, seeds, timings."""
        with reading(who):
            result = kg.retrieve(
                query.question,
                query.k,
                scorer=query.scorer,
                seeder=query.seeder,
                order=query.order,
                method=query.method,
            )
            trace = None
            if query.save_trace:
                settings = kg.settings
                trace = kg.save_trace(
                    result,
                    scorer=query.scorer or settings.scorer,
                    seeder=query.seeder or settings.seeder,
                )
            return {**result.as_dict(), "trace": trace}

    @app.post("/ask")
    def ask(query: Query, who: Who) -> dict[str, Any]:
        """What ``kgp ask --json`` prints: the answer, its citations and the evidence."""
        if query.save_trace:
            raise HttpError(422, "save_trace: only /retrieve saves traces")
        with reading(who):
            answer = kg.ask(
                query.question,
                query.k,
                scorer=query.scorer,
                seeder=query.seeder,
                order=query.order,
                method=query.method,
            )
            return answer.as_dict()

    @app.get("/traces")
    def traces(who: Who, limit: int = 25) -> list[dict[str, Any]]:
        """The saved traces the caller may see, newest first."""
        with reading(who):
            return kg.traces(max(1, min(limit, 1000)))

    return app

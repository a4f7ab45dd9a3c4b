"""``kgp serve``'s health for operators: ``/metrics`` in Prometheus' text format
(``prometheus_client``), ``/ready`` (the store answers, the vector index is usable, the encoder
is loaded), and a request id on every answer (``X-Request-ID``, one a client sent when it is a
plain token, else a new one), which the audit trail and the server's log lines carry.

Metrics: requests and their seconds by endpoint (the route's path, never a document id), method
and status; a retrieval's stages (seed, traverse, structure, fetch, total); the writes the API
made (documents by change, passages written, each write's seconds) and those in progress or
waiting their turn; and, read when scraped, the graph's documents and passages, the vector
index's entries and whether the encoder is loaded. Counts only: nothing names a document or a
question."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response
from kgp.access import ADMIN_CALLER
from kgp.client import KnowledgeGraph
from kgp.ingest.report import SyncReport
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID = "x-request-id"
PLAIN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")  # a client's id is kept only when it looks so
STAGES = ("seed", "traverse", "structure", "fetch", "total")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_REQUEST: ContextVar[str] = ContextVar("kgp_request_id", default="")


class ServeMetrics:
    """The metrics of one app (a registry of its own: a process may hold several apps)."""

    def __init__(self, kg: KnowledgeGraph, writes_waiting: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kgp_requests",
            "Requests answered, by endpoint, method and status.",
            ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.seconds = Histogram(
            "kgp_request_seconds",
            "Seconds to answer, by endpoint (a streamed answer: to its first byte).",
            ["endpoint"],
            registry=self.registry,
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.stages = Histogram(
            "kgp_retrieval_stage_seconds",
            "Seconds of each stage of a retrieval.",
            ["stage"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
        )
        self.documents = Counter(
            "kgp_documents_written",
            "Documents the API's writes changed, by change (added, changed, removed, skipped).",
            ["change"],
            registry=self.registry,
        )
        self.passages = Counter(
            "kgp_passages_written", "Passages the API's writes wrote.", registry=self.registry
        )
        self.writes = Histogram(
            "kgp_write_seconds",
            "Seconds of each write (an upload's sync, a removal, a regrouping), by kind.",
            ["kind"],
            registry=self.registry,
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
        )
        waiting = Gauge(
            "kgp_writes_waiting",
            "Writes in progress or waiting their turn (KGP_SERVE_WRITE_QUEUE bounds them).",
            registry=self.registry,
        )
        waiting.set_function(lambda: float(writes_waiting()))
        self.registry.register(_GraphCollector(kg))

    def wrote(self, kind: str, report: SyncReport | None, seconds: float) -> None:
        """A write of the API: ``report`` for an upload's sync, None for a removal or a
        regrouping of one document."""
        self.writes.labels(kind).observe(seconds)
        if report is None:
            if kind == "remove":
                self.documents.labels("removed").inc()
            return
        for change, docs in (
            ("added", report.added),
            ("changed", report.changed),
            ("removed", report.removed),
            ("skipped", report.skipped),
        ):
            if docs:
                self.documents.labels(change).inc(len(docs))
        self.passages.inc(report.passages)

    def retrieved(self, timings: Mapping[str, float]) -> None:
        """A retrieval's stage timings (``Retrieval.timings``, milliseconds)."""
        for stage in STAGES:
            if f"{stage}_ms" in timings:
                self.stages.labels(stage).observe(float(timings[f"{stage}_ms"]) / 1000)

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _GraphCollector(Collector):
    """The graph's size and the vector index, read at each scrape (counts of labels: cheap)."""

    def __init__(self, kg: KnowledgeGraph) -> None:
        self.kg = kg

    def collect(self) -> Iterable[Metric]:
        size = GaugeMetricFamily(
            "kgp_graph_nodes", "Nodes of the graph, by label.", labels=["label"]
        )
        index = GaugeMetricFamily("kgp_vector_index_entries", "Passages in the vector index.")
        encoder = GaugeMetricFamily("kgp_encoder_loaded", "1 once the encoder is loaded.")
        try:
            with self.kg.store.reading_as(ADMIN_CALLER):
                counts = self.kg.store.counts()
                entries = self.kg.store.upkeep.vector_index_entries()
        except Exception:  # (a scrape of a store that is down reports what it can)
            counts, entries = None, None
        if counts is not None:
            for label, n in counts.labels.items():
                size.add_metric([label], float(n))
            yield size
        if entries is not None:
            index.add_metric([], float(entries))
            yield index
        encoder.add_metric([], 1.0 if self.kg.encoder_loaded else 0.0)
        yield encoder


class RequestIds:
    """Every answer carries ``X-Request-ID``; requests are counted and timed by their route."""

    def __init__(self, app: ASGIApp, *, metrics: ServeMetrics, routes: Callable[[], Any]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes  # the app's routes, read when a request comes (they are added later)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        given = headers.get(REQUEST_ID.encode(), b"").decode("latin-1")
        request_id = given if PLAIN_ID.fullmatch(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        token = _REQUEST.set(request_id)  # (copied into the endpoint's thread with the context)
        endpoint = self._endpoint(scope)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message = {
                    **message,
                    "headers": [
                        *message.get("headers", []),
                        (b"x-request-id", request_id.encode()),
                    ],
                }
                self.metrics.seconds.labels(endpoint).observe(time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            _REQUEST.reset(token)
            self.metrics.requests.labels(endpoint, scope["method"], str(status)).inc()

    def _endpoint(self, scope: Scope) -> str:
        for route in self.routes():
            matched, _ = route.matches(scope)
            if matched is Match.FULL:
                return str(getattr(route, "path", "other"))
        return "other"


def current_request_id() -> str:
    """The id :class:`RequestIds` gave the request being answered ("" outside one)."""
    return _REQUEST.get()


def add_routes(app: FastAPI, kg: KnowledgeGraph, metrics: ServeMetrics) -> None:
    """``/metrics`` and ``/ready``, open like ``/health`` (counts only, no document)."""

    @app.get("/metrics", response_class=Response)
    def scrape() -> Response:
        """The server's metrics in Prometheus' text format."""
        return Response(metrics.text(), media_type=CONTENT_TYPE)

    @app.get("/ready")
    def ready() -> JSONResponse:
        """200 when questions can be answered (the store, the vector index, the encoder), else
        503, with each check."""
        ok, checks = readiness(kg)
        return JSONResponse({"ready": ok, **checks}, status_code=200 if ok else 503)


def readiness(kg: KnowledgeGraph) -> tuple[bool, dict[str, Any]]:
    """Whether the server can answer questions: the store answers, the vector index is usable
    (it answers a count), the encoder is loaded (loaded here if it was not)."""
    checks: dict[str, Any] = {}
    try:
        with kg.store.reading_as(ADMIN_CALLER):
            checks["passages"] = kg.store.counts().labels.get("Passage", 0)
            checks["vector_index_entries"] = kg.store.upkeep.vector_index_entries()
        checks["store"] = "ok"
    except Exception as exc:
        checks["store"] = f"unavailable: {type(exc).__name__}"
    try:
        kg.encoder  # noqa: B018 (loads it: the first question then waits for nothing)
        checks["encoder"] = "loaded"
    except Exception as exc:
        checks["encoder"] = f"not loaded: {type(exc).__name__}"
    ready = checks["store"] == "ok" and checks["encoder"] == "loaded"
    return ready, checks

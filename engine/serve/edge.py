"""What ``kgp serve`` checks before the API reads a byte of a request's body, as ASGI middleware:

1. the ``Host`` header names an address the server was started for (no DNS rebinding);
2. a request that may change something (any method but GET, HEAD and OPTIONS) does not come
   from another site's page (``Sec-Fetch-Site``, else ``Origin`` against ``Host``);
3. the API key, from the ``Authorization`` header alone: a key of the wrong shape is refused
   without hashing, a client's failed keys are limited per minute, and each key is hashed once;
4. each key's request rate and uploads in progress, and the server's writes waiting (429 or
   503 with ``Retry-After``);
5. the body is capped while it streams: 413 at the cap, and the API saw nothing; a body that
   stops arriving is 408 after ``body_stall_s``, so a slow or stuck client holds no worker.

The key found is left in the request's state for the API (:func:`request_key`)."""

from __future__ import annotations

import ipaddress
import json
import math
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from fastapi import Request
from kgp.errors import ConfigurationError
from kgp.ids import MAX_UPLOAD_FILES
from kgp.serve.errors import HttpError
from kgp.serve.keys import Key, Keys
from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# what a request without a key may read (counts and states: no document)
OPEN_PATHS = ("/health", "/ready", "/metrics", "/static/", "/openapi.json")
PAGE_PATH = "/"  # the page asks for the key itself
MAX_BODY_BYTES = 1024 * 1024  # a question or a regrouping; uploads have their own cap
FAILED_KEYS_PER_MINUTE = 10  # per client; past it, 429 without hashing
MAX_CLIENTS = 10_000  # clients whose failures are remembered
HASHING_THREADS = 2  # key checks hashing at once: a flood of new keys cannot take every thread
KEY_STATE = "kgp_key"
WRITE_RETRY_S = 10.0  # what a write turned away for the queue is told to wait


class _TooLarge(HTTPException):
    """The body went past its cap while it streamed (an HTTPException, which the API passes
    on as it is while it reads a body)."""

    def __init__(self, message: str) -> None:
        super().__init__(413, message)


class FailedKeys:
    """Each client's failed key checks of the last minute."""

    def __init__(self, limit: int = FAILED_KEYS_PER_MINUTE, window_s: float = 60.0) -> None:
        self.limit, self.window_s = limit, window_s
        # client -> its last ``limit`` failures, least recently failed first; at most
        # MAX_CLIENTS, the longest quiet forgotten first
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def blocked(self, client: str) -> float:
        """Seconds until ``client`` may try another key; 0 when it may now."""
        now = time.monotonic()
        with self._lock:
            times = self._failures.get(client)
            if times is None or len(times) < self.limit:
                return 0.0
            return max(0.0, self.window_s - (now - times[0]))

    def failed(self, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            times = self._failures.pop(client, None) or deque(maxlen=self.limit)
            times.append(now)
            self._failures[client] = times
            while len(self._failures) > MAX_CLIENTS:
                self._failures.popitem(last=False)


class KeyLimits:
    """Each key's requests of the last minute (at most ``per_minute``; 0: no limit) and its
    uploads in progress (at most ``uploads``), so that one key cannot take the server; and the
    writes (uploads, removals, regroupings) in progress or waiting, of every key (at most
    ``writes``), since they run one at a time."""

    def __init__(
        self, per_minute: int, uploads: int, writes: int = 16, window_s: float = 60.0
    ) -> None:
        self.per_minute, self.uploads, self.window_s = per_minute, uploads, window_s
        self.writes = writes
        self._times: dict[str, deque[float]] = {}
        self._uploading: dict[str, int] = {}
        self._writing = 0
        self._lock = threading.Lock()

    @property
    def writing(self) -> int:
        """Writes in progress or waiting now."""
        return self._writing

    def start_write(self) -> bool:
        """Whether one more write may wait its turn now (then :meth:`end_write`)."""
        with self._lock:
            if self._writing >= self.writes:
                return False
            self._writing += 1
            return True

    def end_write(self) -> None:
        with self._lock:
            self._writing = max(0, self._writing - 1)

    def ask(self, name: str) -> float:
        """Count a request of key ``name``; the seconds it must wait instead (0: go on)."""
        if self.per_minute <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            times = self._times.setdefault(name, deque(maxlen=self.per_minute))
            if len(times) == self.per_minute and now - times[0] < self.window_s:
                return self.window_s - (now - times[0])
            times.append(now)
            return 0.0

    def start_upload(self, name: str) -> bool:
        """Whether key ``name`` may start one more upload now (then :meth:`end_upload`)."""
        with self._lock:
            if self._uploading.get(name, 0) >= self.uploads:
                return False
            self._uploading[name] = self._uploading.get(name, 0) + 1
            return True

    def end_upload(self, name: str) -> None:
        with self._lock:
            self._uploading[name] = max(0, self._uploading.get(name, 0) - 1)


def client_of(scope: Scope) -> str:
    """Who a request comes from, for the failure limit: its address, an IPv6 one by its /64
    (one host commonly holds a whole /64)."""
    address = str((scope.get("client") or ("unknown",))[0])
    if ":" in address:
        try:
            return str(ipaddress.ip_network(f"{address}/64", strict=False))
        except ValueError:
            return address
    return address


class Edge:
    """The checks above around ``app``. ``hosts``: the host names the server answers to
    (a port, brackets and case aside), None for any; ``keys``: None for a server without keys, whose
    requests carry no key; ``upload_bytes``: the cap of an upload request's body."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: Keys | None,
        hosts: Iterable[str] | None,
        key_pattern: str,
        upload_bytes: int,
        refused: Callable[[str, str, int, str, str], None] | None = None,
        limits: KeyLimits,
        body_stall_s: float = 30.0,
    ) -> None:
        self.app = app
        self.body_stall_s = body_stall_s
        self.refused = refused  # told of each request turned away (kgp.serve.trail)
        self.limits = limits
        self.keys = keys
        self.hosts = None if hosts is None else frozenset(host_name(h) for h in hosts)
        self.key_shape = re.compile(key_pattern)
        self.upload_bytes = upload_bytes
        self.failed = FailedKeys()
        self._hashing: anyio.CapacityLimiter | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key: Key | None = None
        uploading = writing = False
        try:
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            self._check_site(scope["method"], headers)
            key = await self._key(scope, headers)
            cap = self._cap(scope, key)
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > cap:
                raise HttpError(413, _too_large(cap))
            if key is not None and (wait := self.limits.ask(key.name)):
                raise _Busy(
                    f"key {key.name!r} sent more than {self.limits.per_minute} requests in a "
                    f"minute; try again in {math.ceil(wait)} s",
                    wait,
                )
            if key is not None and _is_upload(scope):
                if not self.limits.start_upload(key.name):
                    raise _Busy(
                        f"key {key.name!r} has {self.limits.uploads} uploads in progress; "
                        "send the next when one ends",
                        5.0,
                    )
                uploading = True
            if _is_write(scope):
                if not self.limits.start_write():
                    raise _Busy(
                        f"the server has {self.limits.writes} writes in progress or waiting; "
                        f"try again in {WRITE_RETRY_S:.0f} s",
                        WRITE_RETRY_S,
                        status=503,
                    )
                writing = True
        except HttpError as exc:
            if uploading and key is not None:
                self.limits.end_upload(key.name)
            self._note(scope, exc.status, str(exc), key.name if key is not None else "?")
            await _refuse(send, exc.status, str(exc), getattr(exc, "retry_after", 60.0))
            return
        scope.setdefault("state", {})[KEY_STATE] = key
        started = False
        seen = 0
        body_done = False

        async def capped_receive() -> Message:
            nonlocal seen, body_done
            if body_done:  # (a streamed answer waits here for the client to leave)
                return await receive()
            try:
                with anyio.fail_after(self.body_stall_s):
                    message = await receive()
            except TimeoutError:
                raise _Stalled(self.body_stall_s) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise _TooLarge(_too_large(cap))
                body_done = not message.get("more_body", False)
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped_receive, watched_send)
        except (_TooLarge, _Stalled) as exc:
            self._note(scope, exc.status_code, exc.detail, key.name if key is not None else "local")
            if not started:
                await _refuse(send, exc.status_code, exc.detail)
        finally:
            if uploading and key is not None:
                self.limits.end_upload(key.name)
            if writing:
                self.limits.end_write()

    def _note(self, scope: Scope, status: int, message: str, key: str) -> None:
        if self.refused is not None and scope["path"] != PAGE_PATH:
            self.refused(scope["method"], scope["path"], status, message, key)

    def _check_site(self, method: str, headers: dict[str, str]) -> None:
        host = headers.get("host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            raise HttpError(
                400,
                f"Host {host!r} is not an address this server answers to "
                "(kgp serve --host, or KGP_SERVE_HOSTS)",
            )
        if method in SAFE_METHODS:
            return
        site = headers.get("sec-fetch-site")
        origin = headers.get("origin")
        if site is not None:
            cross = site not in ("same-origin", "none")
        else:
            cross = origin is not None and urlsplit(origin).netloc.lower() != host.lower()
        if cross:
            raise HttpError(403, "a request from another site's page may not change anything")

    async def _key(self, scope: Scope, headers: dict[str, str]) -> Key | None:
        path = scope["path"]
        if self.keys is None or path == PAGE_PATH or path.startswith(OPEN_PATHS):
            return None
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not self.key_shape.fullmatch(secret):
            raise HttpError(401, "a valid API key is needed: Authorization: Bearer <key>")
        client = client_of(scope)
        seen, key = self.keys.cached(secret)  # a key seen before costs a lookup, no hashing
        if not seen:
            if wait := self.failed.blocked(client):
                raise HttpError(429, f"too many wrong API keys; try again in {wait:.0f} s")
            try:
                if self._hashing is None:  # (made in the event loop's thread)
                    self._hashing = anyio.CapacityLimiter(HASHING_THREADS)
                key = await anyio.to_thread.run_sync(
                    self.keys.caller, secret, limiter=self._hashing
                )
            except ConfigurationError:
                raise HttpError(
                    503, "the server cannot read its keys file; its log says why"
                ) from None
        if key is None:
            self.failed.failed(client)
            raise HttpError(401, "a valid API key is needed: Authorization: Bearer <key>")
        return key

    def _cap(self, scope: Scope, key: Key | None) -> int:
        uploads = self.keys is None or (key is not None and bool(key.upload))
        if uploads and _is_upload(scope):
            return self.upload_bytes
        return MAX_BODY_BYTES


def request_key(request: Request) -> Key | None:
    """The key :class:`Edge` found for this request (None on a server without keys)."""
    key: Key | None = getattr(request.state, KEY_STATE, None)
    return key


def host_name(host: str) -> str:
    """``host`` without its port (an IPv6 address keeps no brackets), lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def _too_large(cap: int) -> str:
    what = "an upload request" if cap != MAX_BODY_BYTES else "a request body"
    setting = (
        f" (KGP_MAX_FILE_MB for each of at most {MAX_UPLOAD_FILES} files)"
        if cap != MAX_BODY_BYTES
        else ""
    )
    return f"{what} may hold at most {cap / 1024 / 1024:g} MB{setting}"


def _is_upload(scope: Scope) -> bool:
    return bool(scope["method"] == "POST" and scope["path"].rstrip("/") == "/documents")


def _is_write(scope: Scope) -> bool:
    """An upload, a removal or a regrouping: the requests that change the graph."""
    path = scope["path"]
    return _is_upload(scope) or (
        scope["method"] in ("DELETE", "PATCH") and path.startswith("/documents/")
    )


class _Busy(HttpError):
    """429: a key past its limits; 503: the server's writes past theirs. Told when to try
    again."""

    def __init__(self, message: str, retry_after: float, status: int = 429) -> None:
        super().__init__(status, message)
        self.retry_after = retry_after


class _Stalled(HTTPException):
    """408: the request's body stopped arriving."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            408, f"the request's body stopped arriving for {seconds:g} s; send it again"
        )


async def _refuse(send: Send, status: int, message: str, retry_after: float = 60.0) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if status in (429, 503):
        headers.append((b"retry-after", str(max(1, math.ceil(retry_after))).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

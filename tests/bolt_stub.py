"""A scripted Bolt 5 server for tests: the real ``neo4j`` driver connects to it over TCP.

Neo4j cannot run here, yet what a cluster does to a client is a conversation the driver holds in
Bolt messages: ``ROUTE`` for the routing table, ``BEGIN {mode, db, bookmarks}`` / ``RUN`` /
``PULL`` / ``COMMIT`` per transaction, failures such as ``Neo.ClientError.Cluster.NotALeader``,
dropped connections. A :class:`BoltStub` speaks that conversation (the handshake, ``HELLO``,
``LOGON``, ``ROUTE``, ``BEGIN``, ``RUN``, ``PULL``, ``DISCARD``, ``COMMIT``, ``ROLLBACK``,
``RESET``, ``GOODBYE``), records every message it receives, and lets a test script the answers:
``script(request)`` returns :class:`Rows`, a :class:`Failure`, :data:`HANG_UP` or ``None`` (the
default answer). After a failure it ignores everything until ``RESET``, as a server does.

PackStream (Bolt's binary format) is written here from the specification rather than borrowed
from the driver, so the two ends do not share code: a fake that decoded with the client's own
decoder would accept whatever the client wrote.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# -- PackStream ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Structure:
    tag: int
    fields: tuple[Any, ...]


def _header(size: int, tiny: int, sized: tuple[int, int, int]) -> bytes:
    if tiny and size < 16:
        return bytes((tiny | size,))
    for marker, fmt in zip(sized, (">B", ">H", ">I"), strict=True):
        if size < 1 << (8 * struct.calcsize(fmt)):
            return bytes((marker,)) + struct.pack(fmt, size)
    raise ValueError(f"too large for PackStream: {size}")


def pack(value: Any) -> bytes:
    """One value in PackStream."""
    if value is None:
        return b"\xc0"
    if isinstance(value, bool):
        return b"\xc3" if value else b"\xc2"
    if isinstance(value, int):
        if -16 <= value < 128:
            return struct.pack(">b", value)
        for marker, fmt in ((0xC8, ">b"), (0xC9, ">h"), (0xCA, ">i"), (0xCB, ">q")):
            bits = 8 * struct.calcsize(fmt) - 1
            if -(1 << bits) <= value < 1 << bits:
                return bytes((marker,)) + struct.pack(fmt, value)
        raise ValueError(f"integer out of range: {value}")
    if isinstance(value, float):
        return b"\xc1" + struct.pack(">d", value)
    if isinstance(value, str):
        data = value.encode()
        return _header(len(data), 0x80, (0xD0, 0xD1, 0xD2)) + data
    if isinstance(value, bytes):
        return _header(len(value), 0, (0xCC, 0xCD, 0xCE)) + value
    if isinstance(value, list | tuple):
        return _header(len(value), 0x90, (0xD4, 0xD5, 0xD6)) + b"".join(map(pack, value))
    if isinstance(value, dict):
        items = b"".join(pack(str(k)) + pack(v) for k, v in value.items())
        return _header(len(value), 0xA0, (0xD8, 0xD9, 0xDA)) + items
    if isinstance(value, Structure):
        return bytes((0xB0 | len(value.fields), value.tag)) + b"".join(map(pack, value.fields))
    raise TypeError(f"cannot pack {type(value).__name__}")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def number(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def value(self) -> Any:
        marker = self.take(1)[0]
        high, low = marker & 0xF0, marker & 0x0F
        sizes = {0: ">B", 1: ">H", 2: ">I"}
        if marker < 0x80 or marker >= 0xF0:
            return struct.unpack(">b", bytes((marker,)))[0]
        if high == 0x80 or 0xD0 <= marker <= 0xD2:
            size = low if high == 0x80 else self.number(sizes[marker - 0xD0])
            return self.take(size).decode()
        if high == 0x90 or 0xD4 <= marker <= 0xD6:
            size = low if high == 0x90 else self.number(sizes[marker - 0xD4])
            return [self.value() for _ in range(size)]
        if high == 0xA0 or 0xD8 <= marker <= 0xDA:
            size = low if high == 0xA0 else self.number(sizes[marker - 0xD8])
            return {self.value(): self.value() for _ in range(size)}
        if high == 0xB0:
            tag = self.take(1)[0]
            return Structure(tag, tuple(self.value() for _ in range(low)))
        if 0xCC <= marker <= 0xCE:
            return self.take(self.number(sizes[marker - 0xCC]))
        fixed = {0xC0: None, 0xC2: False, 0xC3: True}
        if marker in fixed:
            return fixed[marker]
        formats = {0xC1: ">d", 0xC8: ">b", 0xC9: ">h", 0xCA: ">i", 0xCB: ">q"}
        return self.number(formats[marker])


def unpack(data: bytes) -> Any:
    """The one value a PackStream message holds."""
    return _Reader(data).value()


# -- Bolt messages ---------------------------------------------------------------------------

REQUESTS = {
    0x01: "HELLO",
    0x02: "GOODBYE",
    0x0F: "RESET",
    0x10: "RUN",
    0x11: "BEGIN",
    0x12: "COMMIT",
    0x13: "ROLLBACK",
    0x2F: "DISCARD",
    0x3F: "PULL",
    0x54: "TELEMETRY",
    0x66: "ROUTE",
    0x6A: "LOGON",
    0x6B: "LOGOFF",
}
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F
VERSION = (5, 8)  # the newest Bolt that Neo4j 5.26 speaks


@dataclass(frozen=True)
class Request:
    """A message the stub received, with the access mode of the transaction it belongs to
    (``"r"`` or ``"w"``, from its ``BEGIN``; ``None`` outside transactions)."""

    name: str
    fields: tuple[Any, ...]
    mode: str | None = None

    @property
    def query(self) -> str:
        return str(self.fields[0]) if self.name == "RUN" else ""

    @property
    def extra(self) -> dict[str, Any]:
        """The metadata map of ``HELLO``, ``BEGIN`` and ``RUN`` (``ROUTE``'s database map)."""
        at = {"HELLO": 0, "BEGIN": 0, "RUN": 2, "ROUTE": 2}.get(self.name)
        return dict(self.fields[at]) if at is not None and len(self.fields) > at else {}


@dataclass(frozen=True)
class Rows:
    """A query's result: column names and rows."""

    fields: tuple[str, ...] = ()
    records: tuple[tuple[Any, ...], ...] = ()


@dataclass(frozen=True)
class Failure:
    """A Neo4j error, e.g. ``Failure("Neo.ClientError.Cluster.NotALeader", "...")``."""

    code: str
    message: str

    def metadata(self) -> dict[str, Any]:
        # Bolt 5.7+ reports GQL statuses beside the Neo4j code
        return {
            "neo4j_code": self.code,
            "code": self.code,
            "message": self.message,
            "gql_status": "50N42",
            "description": f"error: general processing exception. {self.message}",
        }


HANG_UP = "hang up"  # close the connection instead of answering
Reply = Rows | Failure | str | None
Script = Callable[[Request], Reply]


@dataclass
class BoltStub:
    """A Bolt server on 127.0.0.1 (a free port). ``routing(db)`` gives the routing table it
    answers ``ROUTE`` with (``None``: it fails as a server that cannot route does);
    ``script`` answers requests; ``requests`` is what it received, in order."""

    name: str
    script: Script = lambda request: None
    routing: Callable[[str | None], dict[str, Any] | None] = lambda db: None
    agent: str = "Neo4j/5.26.0"
    requests: list[Request] = field(default_factory=list)
    bookmarks: list[str] = field(default_factory=list)  # those its COMMITs handed out

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        stub = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                stub._serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.address = f"127.0.0.1:{self.port}"
        serve = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        serve.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for sock in self._sockets:
                sock.close()

    def seen(self, name: str) -> list[Request]:
        """The requests of one kind received so far (``"RUN"``, ``"BEGIN"``, ``"ROUTE"`` ...)."""
        with self._lock:
            return [r for r in self.requests if r.name == name]

    # -- one connection ----------------------------------------------------------------------

    def _serve(self, sock: socket.socket) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answers are small and many
        with self._lock:
            self._sockets.append(sock)
        try:
            if not self._handshake(sock):
                return
            mode: str | None = None
            failed = False
            pending: tuple[tuple[Any, ...], ...] = ()
            for tag, fields in _messages(sock):
                request = Request(REQUESTS.get(tag, f"0x{tag:02X}"), fields, mode)
                with self._lock:
                    self.requests.append(request)
                if request.name == "GOODBYE":
                    return
                if failed and request.name != "RESET":
                    _send(sock, IGNORED)
                    continue
                reply = self.script(request)
                if reply == HANG_UP:
                    return
                if isinstance(reply, Failure):
                    failed = True
                    _send(sock, FAILURE, reply.metadata())
                    continue
                if request.name == "BEGIN":
                    mode = request.extra.get("mode", "w")
                elif request.name in {"COMMIT", "ROLLBACK", "RESET"}:
                    mode, failed = None, False
                if request.name == "RUN":
                    rows = reply if isinstance(reply, Rows) else Rows()
                    pending = rows.records
                    _send(sock, SUCCESS, {"fields": list(rows.fields), "qid": 0, "t_first": 0})
                elif request.name == "PULL":
                    for record in pending:
                        _send(sock, RECORD, list(record))
                    pending = ()
                    _send(sock, SUCCESS, {"has_more": False, "type": request.mode or "r"})
                elif request.name == "COMMIT":
                    with self._lock:
                        bookmark = f"FB:{self.name}:{len(self.bookmarks) + 1}"
                        self.bookmarks.append(bookmark)
                    _send(sock, SUCCESS, {"bookmark": bookmark})
                elif request.name == "ROUTE":
                    database = request.extra.get("db")
                    table = self.routing(database)
                    if table is None:
                        failed = True
                        _send(sock, FAILURE, NO_ROUTING.metadata())
                    else:
                        _send(sock, SUCCESS, {"rt": {"db": database or "neo4j", **table}})
                elif request.name == "HELLO":
                    _send(sock, SUCCESS, {"server": self.agent, "connection_id": "bolt-1"})
                else:  # LOGON, BEGIN, ROLLBACK, RESET, DISCARD, TELEMETRY
                    _send(sock, SUCCESS, {})
        except OSError:
            return  # the client went away
        finally:
            sock.close()

    def _handshake(self, sock: socket.socket) -> bool:
        if _read(sock, 4) != b"\x60\x60\xb0\x17":
            return False
        offers = _read(sock, 16)
        for at in range(0, 16, 4):
            _, span, minor, major = offers[at : at + 4]
            if major == VERSION[0] and minor - span <= VERSION[1]:
                agreed = min(minor, VERSION[1])
                sock.sendall(bytes((0, 0, agreed, VERSION[0])))
                return True
        sock.sendall(b"\x00\x00\x00\x00")  # no version in common
        return False


NO_ROUTING = Failure(
    "Neo.ClientError.Procedure.ProcedureNotFound",
    "There is no procedure with the name `dbms.routing.getRoutingTable` registered",
)


def routing_table(
    *, routers: list[str], writers: list[str], readers: list[str], ttl: int = 300
) -> dict[str, Any]:
    """A ``ROUTE`` answer's table (``db`` is added by the stub)."""
    roles = (("ROUTE", routers), ("WRITE", writers), ("READ", readers))
    return {"ttl": ttl, "servers": [{"role": role, "addresses": list(a)} for role, a in roles]}


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionResetError("the client closed the connection")
        data += chunk
    return data


def _messages(sock: socket.socket) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Messages as (signature, fields): chunks of up to 65535 bytes, ended by an empty one
    (an empty chunk alone is a keep-alive)."""
    while True:
        message = b""
        while size := struct.unpack(">H", _read(sock, 2))[0]:
            message += _read(sock, size)
        if message:
            value = unpack(message)
            yield value.tag, value.fields


def _send(sock: socket.socket, tag: int, *fields: Any) -> None:
    data = pack(Structure(tag, fields))
    chunks = b"".join(
        struct.pack(">H", len(data[at : at + 0xFFFF])) + data[at : at + 0xFFFF]
        for at in range(0, len(data), 0xFFFF)
    )
    sock.sendall(chunks + b"\x00\x00")

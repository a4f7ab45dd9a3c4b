"""FalkorDB's reads over RESP3, their compact replies parsed here: the server then sends each
double as a double, where over RESP2 it sends each as a string that the FalkorDB client turns
back into a float one Python call at a time (figures: docs/benchmarks.md, "Store"). Writes stay
with the client (:class:`falkordb.Graph`).

kgp's reads return plain values, never graph entities or temporal values: one in a reply is an
error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

Row = dict[str, Any]
NULL, STRING, INTEGER, BOOLEAN, DOUBLE, ARRAY, EDGE, NODE, PATH = range(1, 10)  # FalkorDB's
MAP, POINT, VECTORF32 = range(
    10, 13
)  # value types (13-16: date and time, which kgp stores none of)


def value(cell: list[Any]) -> Any:
    """One typed value of a compact reply (``[type, raw]``) as plain Python: lists and dicts all
    the way down, a vector as a list of floats."""
    kind, raw = cell
    if kind in (STRING, INTEGER, NULL):
        return raw
    if kind == DOUBLE:
        return float(raw)
    if kind == VECTORF32:
        return raw if not raw or type(raw[0]) is float else [float(x) for x in raw]
    if kind == ARRAY:
        return [value(c) for c in raw]
    if kind == MAP:
        return {str(raw[n]): value(raw[n + 1]) for n in range(0, len(raw), 2)}
    if kind == BOOLEAN:
        return raw is True or raw == "true"
    if kind == POINT:
        return {"latitude": float(raw[0]), "longitude": float(raw[1])}
    what = "a graph entity" if kind in (EDGE, NODE, PATH) else "a temporal value"
    raise TypeError(f"a FalkorDB reply of type {kind} ({what}): kgp's reads return plain values")


def rows_of(reply: list[Any]) -> list[Row]:
    """The rows of a compact reply (header, rows, statistics; or statistics alone), each a
    dict by column name; the server's error, where the reply holds one, raised."""
    for part in (reply[0], reply[-1]):
        if isinstance(part, Exception):
            raise part
    if len(reply) < 3:
        return []
    names = [str(column[1]) for column in reply[0]]
    return [dict(zip(names, map(value, row), strict=True)) for row in reply[1]]


class Reads:
    """Read queries of one graph over their own RESP3 connections (a pool: thread-safe)."""

    def __init__(self, socket_path: Path, graph: str, timeout: float = 600.0) -> None:
        self.graph = graph
        self.client = redis.Redis(
            unix_socket_path=str(socket_path),
            protocol=3,
            decode_responses=True,
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), 0),  # a lost server is the store's to handle (_execute)
        )

    def rows(self, text: str) -> list[Row]:
        """Run one read-only query (its parameters in the text's header)."""
        command = ("GRAPH.RO_QUERY", self.graph, text, "--compact")
        return rows_of(self.client.execute_command(*command))  # type: ignore[no-untyped-call]

    def close(self) -> None:
        self.client.close()

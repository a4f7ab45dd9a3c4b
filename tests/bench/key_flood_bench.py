"""A flood of wrong API keys against ``kgp serve``, bounded and only against 127.0.0.1: how much
it slows a valid key. One client times ``GET /stats`` with a valid key, one request at a time,
first alone, then while ``--flooders`` processes send wrong keys as fast as they can.

    python -m tests.bench.key_flood_bench [--seconds 20] [--flooders 4] [--rate 0]

``--rate`` paces each flooder (requests per second; 0: as fast as they are answered). On a
machine of few cores an unpaced flood of any request takes the CPU from the server (the
``/health`` control shows it), so a paced flood isolates what the key check itself costs.

Phases, each ``--seconds`` long: unloaded; a flood of random well-formed keys (``kgp_`` + 43
url-safe characters: each unknown one costs the server a scrypt hash until the client has had
10 failures in the last minute, then 429 without hashing); a flood of keys of the wrong shape
(refused before any hashing); and, as a control, a flood of ``GET /health``, which needs no
key, for what any flood of requests costs. All flooders send from 127.0.0.1, as does the valid
client, so they share one client's failure limit: after the first ~10 misses (a few more while
hashes are in flight) the well-formed flood is answered 429 for the rest of the minute, and
the phase measures the limit more than the hashing. Flooders are processes, not threads, so the
valid client's timings do not wait on the benchmark's own GIL; on a machine with few cores
they still share its CPUs with the server. Printed per phase: the valid key's requests, p50/p95
latency and their ratio to the unloaded phase (aim: under 1.2), the flood's responses by
status, and the server's CPU seconds; the last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import secrets
import statistics
import string
import tempfile
import time
from collections import Counter
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import httpx

from tests.bench import memory_mb
from tests.served import auth, run_kgp, serving

MAX_REQUESTS = 100_000  # per client and phase: each loop ends by count as well as by time
FLOODS = {  # phase -> (path, what the flood sends as its key)
    "flood_well_formed": ("/stats", "well_formed"),
    "flood_garbage": ("/stats", "garbage"),
    "flood_health": ("/health", "none"),
}


def wrong_key(kind: str) -> str | None:
    if kind == "well_formed":
        return "kgp_" + secrets.token_urlsafe(32)
    if kind == "garbage":
        return "".join(random.choices(string.ascii_letters + string.digits, k=20))
    return None


def flooder(
    url: str,
    path: str,
    kind: str,
    seconds: float,
    rate: float,
    go: Event,
    stop: Event,
    out: Queue[Any],
) -> None:
    """Requests with a new wrong key each, ``rate`` a second (0: as fast as they are
    answered), from ``go`` until ``stop``, ``seconds`` past it or MAX_REQUESTS; puts its
    responses by status on ``out``."""
    counts: Counter[str] = Counter()
    with httpx.Client(base_url=url, timeout=30) as http:
        out.put("ready")
        go.wait(60)
        deadline = time.monotonic() + seconds + 5
        due = time.monotonic()
        while not stop.is_set() and time.monotonic() < deadline and counts.total() < MAX_REQUESTS:
            if rate:
                due += 1 / rate
                time.sleep(max(0.0, due - time.monotonic()))
            try:
                counts[str(http.get(path, headers=auth(wrong_key(kind))).status_code)] += 1
            except httpx.HTTPError as exc:
                counts[type(exc).__name__] += 1
    out.put(dict(counts))


def cpu_s(pid: int) -> float:
    """A process's user and system CPU seconds so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(http: httpx.Client, seconds: float) -> dict[str, Any]:
    """The valid key asking ``/stats``, one request at a time, for ``seconds``."""
    times: list[float] = []
    errors: Counter[str] = Counter()
    stop = time.monotonic() + seconds
    while time.monotonic() < stop and len(times) + errors.total() < MAX_REQUESTS:
        started = time.perf_counter()
        try:
            status = http.get("/stats").status_code
        except httpx.HTTPError as exc:
            errors[type(exc).__name__] += 1
            continue
        if status == 200:
            times.append(1000 * (time.perf_counter() - started))
        else:
            errors[str(status)] += 1
    times.sort()
    return {
        "requests": len(times),
        "p50_ms": round(statistics.median(times), 2) if times else None,
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2) if times else None,
        "errors": dict(errors),
    }


def flooded(
    http: httpx.Client,
    url: str,
    path: str,
    kind: str,
    flooders: int,
    seconds: float,
    rate: float,
) -> dict[str, Any]:
    """:func:`measure` while ``flooders`` processes send wrong keys to ``path``."""
    spawn = multiprocessing.get_context("spawn")
    go, stop, out = spawn.Event(), spawn.Event(), spawn.Queue()
    processes = [
        spawn.Process(target=flooder, args=(url, path, kind, seconds, rate, go, stop, out))
        for _ in range(flooders)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        out.get(timeout=120)  # each flooder has its client and waits for go
    go.set()
    figures = measure(http, seconds)
    stop.set()
    flood: Counter[str] = Counter()
    for _ in processes:
        flood.update(out.get(timeout=60))
    for process in processes:
        process.join(10)
        if process.is_alive():
            process.kill()
    figures["flood"] = dict(sorted(flood.items()))
    figures["flood_per_s"] = round(flood.total() / seconds)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--flooders", type=int, default=4)
    parser.add_argument("--rate", type=float, default=0.0, help="per flooder; 0: unpaced")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kgp-key-flood-"))
    keys = root / "keys.toml"
    made = run_kgp("key", "bench", "--groups", "public", "--keys", str(keys))
    if made.returncode:
        raise SystemExit(made.stderr)
    key = made.stdout.strip()
    summary: dict[str, Any] = {
        "seconds": args.seconds,
        "flooders": args.flooders,
        "rate": args.rate,
    }
    with serving(root / "kb", keys=keys) as server:  # 127.0.0.1 only, an empty graph
        pid = server.process.pid
        summary["memory"] = {"start_mb": round(memory_mb(pid))}
        with httpx.Client(base_url=server.url, headers=auth(key), timeout=30) as http:
            for _ in range(20):  # the first request hashes the key; the rest warm up
                http.get("/stats").raise_for_status()
            phases: dict[str, Any] = {}
            for name in ("unloaded", *FLOODS):
                cpu = cpu_s(pid)
                if name == "unloaded":
                    figures = measure(http, args.seconds)
                else:
                    path, kind = FLOODS[name]
                    figures = flooded(
                        http, server.url, path, kind, args.flooders, args.seconds, args.rate
                    )
                figures["server_cpu_s"] = round(cpu_s(pid) - cpu, 1)
                base = phases.get("unloaded", figures)
                for p in ("p50", "p95"):
                    mine, theirs = figures[f"{p}_ms"], base[f"{p}_ms"]
                    figures[f"{p}_ratio"] = round(mine / theirs, 2) if mine and theirs else None
                phases[name] = figures
                print(f"{name}: {figures}")
        summary["memory"]["end_mb"] = round(memory_mb(pid))
    summary["phases"] = phases
    worst = max((f["p50_ratio"] or 0.0) for f in phases.values())
    print(f"server memory: {summary['memory']}; worst p50 ratio under flood: {worst} (aim < 1.2)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

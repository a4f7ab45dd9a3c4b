"""Load on ``kgp serve``, bounded and only against 127.0.0.1: concurrent clients asking
``/retrieve`` for a fixed time, then the same while another client uploads documents; beside it,
in-process ``kg.retrieve`` on the same graph for the ratio.

    python -m tests.bench.serve_bench [--clients 16] [--seconds 60] [--data-dir DIR]

The graph is the 2Wiki train corpus (6,119 passages, built once under ``--data-dir``); the
questions are the 2Wiki train questions (never dev). Printed per phase: requests, requests/s,
p50/p95 latency, errors (aim: zero) and the server's resident memory before and after; the last
line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import kgp
from kgp.qa import load_qa

from tests.bench import memory_mb
from tests.served import run_kgp, serving

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO.parent / "shared" / "data" / "qa" / "train"


def load(url: str, key: str, questions: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads asking ``/retrieve`` in turn for ``seconds``."""
    times: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def client(n: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as http:
            i = n
            while time.monotonic() < stop:
                body = {"question": questions[i % len(questions)], "k": 30}
                started = time.perf_counter()
                try:
                    response = http.post("/retrieve", json=body, timeout=120)
                    ok = response.status_code == 200
                    problem = f"{response.status_code} {response.text[:100]}"
                except httpx.HTTPError as exc:
                    ok, problem = False, repr(exc)
                with lock:
                    if ok:
                        times.append(1000 * (time.perf_counter() - started))
                    else:
                        errors.append(problem)
                i += clients

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    times.sort()
    return {
        "requests": len(times),
        "per_s": round(len(times) / elapsed, 2),
        "p50_ms": round(statistics.median(times), 1) if times else None,
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1) if times else None,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def uploader(url: str, key: str, folder: Path, stop: threading.Event) -> dict[str, int]:
    """Upload small documents, one request each, until ``stop``."""
    done = failed = 0
    run = time.strftime("%H%M%S")  # new names each run: a second run adds, not skips
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as http:
        while not stop.is_set():
            name = f"note-{run}-{done + failed:04d}.md"
            text = (
                f"# Note {done}\n\nThe archive of note {done} lists the ferries of week {done}.\n"
            )
            files = [("file", (name, text.encode(), "text/markdown"))]
            response = http.post("/documents", files=files, timeout=300)
            if response.status_code == 200 and response.json()["added"]:
                done += 1
            else:
                failed += 1
    return {"uploads": done, "upload_errors": failed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="kgp-serve-"))
    root.mkdir(parents=True, exist_ok=True)
    questions = [item.question for item in load_qa(TRAIN / "2wiki_train.json")]
    with kgp.open(data_dir=root / "kb", groups="*") as kg:
        if not kg.documents():
            started = time.perf_counter()
            kg.sync_corpus(TRAIN / "2wiki_corpus.json", prefix="2wiki")
            print(f"graph built in {time.perf_counter() - started:.0f} s")
        kg.retrieve(questions[0], 30)
        times = []
        for question in questions:
            started = time.perf_counter()
            kg.retrieve(question, 30)
            times.append(time.perf_counter() - started)
        inprocess = {
            "per_s": round(len(times) / sum(times), 2),
            "p50_ms": round(1000 * statistics.median(times), 1),
        }
    print(f"in-process kg.retrieve, one thread: {inprocess}")
    keys = root / "keys.toml"
    keys.unlink(missing_ok=True)
    made = run_kgp("key", "bench", "--groups", "*", "--upload", "bench", "--keys", str(keys))
    if made.returncode:
        raise SystemExit(made.stderr)
    key = made.stdout.strip()
    # 127.0.0.1 only; one key for every client: its per-minute limit off
    unlimited = {"KGP_SERVE_REQUESTS_PER_MINUTE": "0"}
    with serving(root / "kb", keys=keys, env=unlimited) as server:
        url = server.url
        pid = server.process.pid
        memory = {"start_mb": round(memory_mb(pid))}
        reads = load(url, key, questions, args.clients, args.seconds)
        print(f"{args.clients} clients, {args.seconds:g} s of /retrieve: {reads}")
        stop = threading.Event()
        result: dict[str, int] = {}
        writer = threading.Thread(
            target=lambda: result.update(uploader(url, key, root, stop)), daemon=True
        )
        writer.start()
        mixed = load(url, key, questions, args.clients, args.seconds)
        stop.set()
        writer.join(300)
        mixed.update(result)
        print(f"the same while a client uploads: {mixed}")
        memory["end_mb"] = round(memory_mb(pid))
        print(f"server memory: {memory}")
    ratio = reads["per_s"] / inprocess["per_s"] if inprocess["per_s"] else 0.0
    print(f"served requests/s over in-process retrievals/s (one thread): {ratio:.2f}")
    summary = {
        "in_process": inprocess,
        "read": reads,
        "read_while_uploading": mixed,
        "memory": memory,
        "ratio": round(ratio, 2),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

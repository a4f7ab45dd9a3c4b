"""Load on ``kgp serve``, bounded and only against 127.0.0.1: concurrent clients asking
``/retrieve`` for a fixed time, then the same while another client uploads documents; beside it,
in-process ``kg.retrieve`` on the same graph for the ratio.

    python -m tests.bench.serve_bench [--clients 16] [--seconds 60] [--data-dir DIR]
    python -m tests.bench.serve_bench --soak 30 [--clients 4] [--data-dir DIR]

``--soak MINUTES``: mixed load for that long instead: clients of two keys asking ``/retrieve``,
a third key uploading a note and removing its oldest once it holds twenty, and ``kgp backup``
every five minutes (checked by its manifest, then deleted). Printed each
minute: requests, errors, p50/p95 of that minute and the memory of kgp serve and of its
FalkorDB server; then the growth of each from the end of the first minute (the warm-up) to the
end, and the p95 of the first and last five minutes.

The graph is the 2Wiki train corpus (6,119 passages, built once under ``--data-dir``); the
questions are the 2Wiki train questions (never dev). Printed per phase: requests, requests/s,
p50/p95 latency, errors (aim: zero) and the server's resident memory before and after; the last
line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
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


def soak(root: Path, questions: list[str], clients: int, minutes: float) -> dict[str, Any]:
    """The mixed load of ``--soak`` against a server of ``root / "kb"`` (module docstring)."""
    keys_file = root / "soak-keys.toml"
    keys_file.unlink(missing_ok=True)
    keys: dict[str, str] = {}
    for name, groups, upload in (
        ("all", "*", None),
        ("public", "public", None),
        ("writer", "public", "public"),
    ):
        made = run_kgp(
            "key",
            name,
            "--groups",
            groups,
            *(("--upload", upload) if upload else ()),
            "--keys",
            str(keys_file),
        )
        if made.returncode:
            raise SystemExit(made.stderr)
        keys[name] = made.stdout.strip()
    events: list[tuple[float, str, float | None, str]] = []  # (s from start, kind, ms, error)
    lock = threading.Lock()
    env = {"KGP_SERVE_REQUESTS_PER_MINUTE": "0"}
    with serving(root / "kb", keys=keys_file, env=env) as server:
        begun = time.monotonic()
        until = begun + 60 * minutes

        def note(kind: str, started: float, problem: str = "") -> None:
            with lock:
                ms = None if problem else 1000 * (time.monotonic() - started)
                events.append((started - begun, kind, ms, problem))

        def reader(n: int) -> None:
            key = keys["all" if n % 2 else "public"]
            with httpx.Client(
                base_url=server.url, headers={"Authorization": f"Bearer {key}"}
            ) as http:
                i = n
                while time.monotonic() < until:
                    started = time.monotonic()
                    try:
                        r = http.post(
                            "/retrieve",
                            json={"question": questions[i % len(questions)], "k": 30},
                            timeout=120,
                        )
                        note(
                            "read",
                            started,
                            "" if r.status_code == 200 else f"{r.status_code} {r.text[:100]}",
                        )
                    except httpx.HTTPError as exc:
                        note("read", started, repr(exc))
                    i += clients

        def writer() -> None:
            held: list[str] = []
            run = time.strftime("%H%M%S")
            headers = {"Authorization": f"Bearer {keys['writer']}"}
            with httpx.Client(base_url=server.url, headers=headers) as http:
                n = 0
                while time.monotonic() < until:
                    n += 1
                    name = f"soak-{run}-{n:05d}.md"  # (a run's own names: none is unchanged)
                    text = (
                        f"# Soak note {n}\n\nThe ferry of week {n} leaves pier {n % 7} at dawn.\n"
                    )
                    started = time.monotonic()
                    try:
                        r = http.post(
                            "/documents",
                            files=[("file", (name, text.encode(), "text/markdown"))],
                            timeout=300,
                        )
                        ok = r.status_code == 200 and r.json()["added"]
                        note("upload", started, "" if ok else f"{r.status_code} {r.text[:100]}")
                        held += r.json()["added"] if ok else []
                        if len(held) > 20:
                            started = time.monotonic()
                            r = http.delete(f"/documents/{held.pop(0)}", timeout=300)
                            note(
                                "remove",
                                started,
                                "" if r.status_code == 200 else f"{r.status_code} {r.text[:100]}",
                            )
                    except httpx.HTTPError as exc:
                        note("upload", started, repr(exc))
                    time.sleep(1.0)

        def backups() -> None:
            n = 0
            while time.monotonic() + 300 < until:
                time.sleep(max(0.0, begun + 300 * (n + 1) - time.monotonic()))
                n += 1
                dest = root / "soak-backups" / f"b{n}"
                shutil.rmtree(dest.parent, ignore_errors=True)
                started = time.monotonic()
                made = run_kgp("--data-dir", str(root / "kb"), "backup", str(dest))
                whole = made.returncode == 0 and (dest / "kgp-backup.json").is_file()
                note("backup", started, "" if whole else made.stderr.strip()[-200:])
                shutil.rmtree(dest.parent, ignore_errors=True)

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(clients)]
        threads += [threading.Thread(target=writer), threading.Thread(target=backups, daemon=True)]
        for thread in threads:
            thread.start()
        falkor = int((root / "kb" / "falkordb" / "server.pid").read_text())
        rows: list[dict[str, Any]] = []
        print("minute  reads  writes  backups  errors  p50_ms  p95_ms  serve_mb  falkordb_mb")
        for minute in range(1, int(minutes) + 1):
            time.sleep(max(0.0, begun + 60 * minute - time.monotonic()))
            with lock:
                these = [e for e in events if 60 * (minute - 1) <= e[0] < 60 * minute]
            reads = sorted(e[2] for e in these if e[1] == "read" and e[2] is not None)
            row = {
                "minute": minute,
                "reads": len(reads),
                "writes": sum(
                    1 for e in these if e[1] in ("upload", "remove") and e[2] is not None
                ),
                "backups": sum(1 for e in these if e[1] == "backup" and e[2] is not None),
                "errors": sum(1 for e in these if e[3]),
                "p50_ms": round(statistics.median(reads), 1) if reads else None,
                "p95_ms": round(reads[int(0.95 * (len(reads) - 1))], 1) if reads else None,
                "serve_mb": round(memory_mb(server.process.pid)),
                "falkordb_mb": round(memory_mb(falkor)),
            }
            rows.append(row)
            print("  ".join(f"{v!s:>6}" for v in row.values()), flush=True)
        for thread in threads[:-1]:
            thread.join(600)
    errors = [e for e in events if e[3]]
    first, last = rows[0], rows[-1]

    def p95_of(part: list[dict[str, Any]]) -> float | None:
        values = [r["p95_ms"] for r in part if r["p95_ms"] is not None]
        return round(statistics.median(values), 1) if values else None

    return {
        "minutes": minutes,
        "clients": clients,
        "requests": len(events),
        "reads": sum(r["reads"] for r in rows),
        "writes": sum(r["writes"] for r in rows),
        "backups": sum(1 for e in events if e[1] == "backup" and not e[3]),
        "errors": len(errors),
        "first_error": errors[0][3] if errors else None,
        "serve_mb_after_warmup": first["serve_mb"],
        "serve_mb_end": last["serve_mb"],
        "serve_growth_pct": round(100 * (last["serve_mb"] / first["serve_mb"] - 1), 1),
        "falkordb_mb_after_warmup": first["falkordb_mb"],
        "falkordb_mb_end": last["falkordb_mb"],
        "falkordb_growth_pct": round(100 * (last["falkordb_mb"] / first["falkordb_mb"] - 1), 1),
        "p95_ms_first_5_min": p95_of(rows[1:6]),
        "p95_ms_last_5_min": p95_of(rows[-5:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--soak", type=float, metavar="MINUTES", help="mixed load this long")
    args = parser.parse_args()
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="kgp-serve-"))
    root.mkdir(parents=True, exist_ok=True)
    questions = [item.question for item in load_qa(TRAIN / "2wiki_train.json")]
    with kgp.open(data_dir=root / "kb", groups="*") as kg:
        if not kg.documents():
            started = time.perf_counter()
            kg.sync_corpus(TRAIN / "2wiki_corpus.json", prefix="2wiki")
            print(f"graph built in {time.perf_counter() - started:.0f} s")
        soaking = bool(args.soak)
    if soaking:
        print(json.dumps(soak(root, questions, args.clients, args.soak)))
        return
    with kgp.open(data_dir=root / "kb", groups="*") as kg:
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

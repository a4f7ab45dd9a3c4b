"""How long a crashed embedded server takes to exit, with and without redis's memory test in
its crash report (kgp's server config turns it off: ``crash-memcheck-enabled no``). Until it
exits, no user can start it again.

    python -m tests.bench.crash_bench --data-dir DIR [--work-dir /tmp/crash-bench]

The graph in ``DIR`` (a kgp data directory; it is copied, never changed) is loaded by a
server that is then sent SIGSEGV, as a FalkorDB bug would crash it. There is one run per arm,
and each arm loads its own copy. Each line gives the server's resident memory and the seconds
from the signal to its exit. The last line reads ``with memory test / without: R``."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import time
from pathlib import Path

import kgp.stores.falkordb.server as falkor_server
from kgp.stores.falkordb.processes import pid_alive

CONFIG = falkor_server.server_config


def crash_seconds(source: Path, work: Path, *, memcheck: bool) -> tuple[int, float]:
    """The server's resident MB and the seconds from SIGSEGV to its exit."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, work)
    arm = "yes" if memcheck else "no"
    falkor_server.server_config = lambda *args: CONFIG(*args).replace(  # type: ignore[assignment]
        "crash-memcheck-enabled no", f"crash-memcheck-enabled {arm}"
    )
    try:
        server = falkor_server.EmbeddedServer(work)
        server.start()
        pid = server.server_pid()
        assert pid is not None
        status = Path(f"/proc/{pid}/status").read_text()
        rss_mb = int(status.split("VmRSS:")[1].split()[0]) // 1024
        started = time.monotonic()
        os.kill(pid, signal.SIGSEGV)
        while pid_alive(pid):
            time.sleep(0.05)
        return rss_mb, time.monotonic() - started
    finally:
        falkor_server.server_config = CONFIG
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/crash-bench"))
    args = parser.parse_args()
    seconds = {}
    for memcheck in (False, True):
        rss_mb, seconds[memcheck] = crash_seconds(args.data_dir, args.work_dir, memcheck=memcheck)
        arm = "with memory test" if memcheck else "without"
        print(f"{arm}: server {rss_mb} MB, SIGSEGV to exit {seconds[memcheck]:.1f} s", flush=True)
    print(f"with memory test / without: {seconds[True] / max(seconds[False], 1e-3):.0f}")


if __name__ == "__main__":
    main()

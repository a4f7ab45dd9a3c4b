"""Operating kgp: long-running commands stop cleanly on SIGTERM and SIGHUP, the data directory
is owner-only, credentials in URLs never reach a message, the server's log is rotated, and a
symlinked folder is listed, not silently dropped."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import kgp
import pytest
from kgp.agents.llm import ChatClient
from kgp.errors import LlmError
from kgp.ingest.embedding import Encoder
from kgp.settings import load_settings, redact_url
from kgp.stores import FalkorStore
from kgp.stores.falkordb.processes import pid_alive as _pid_alive
from kgp.stores.falkordb.server import LOG_MAX_BYTES

from tests.corpus_files import write_corpus


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
@pytest.mark.parametrize("delay", [0.0, 0.7])
def test_watch_stops_cleanly_on_a_signal(tmp_path: Path, number: int, delay: float) -> None:
    """The signal lands as the watch starts (the cyclic garbage collector often runs then: a
    handler's exception raised inside a finalizer is printed and lost) or while watchfiles waits
    (which catches it); either way the command stops with the signal's status."""
    # the runner may have been started with the signal ignored (nohup, a background job), which
    # kgp respects; here it must reach the command
    proc, server = start_watch(tmp_path, lambda: signal.signal(number, signal.SIG_DFL))
    time.sleep(delay)
    proc.send_signal(number)
    assert stopped(proc, server) == 128 + number, proc.stderr.read()
    assert not (tmp_path / "kb" / "falkordb" / "server.pid").exists()


def test_a_watch_started_with_hangups_ignored_outlives_one(tmp_path: Path) -> None:
    """``nohup kgp sync --watch``: SIGHUP stays ignored; SIGTERM still stops it."""
    proc, server = start_watch(tmp_path, lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    proc.send_signal(signal.SIGHUP)
    time.sleep(1.5)
    assert proc.poll() is None, "a hangup stopped the watch"
    proc.send_signal(signal.SIGTERM)
    assert stopped(proc, server) == 128 + signal.SIGTERM


def start_watch(tmp_path: Path, preexec: Callable[[], object]) -> tuple[subprocess.Popen, int]:
    """``kgp sync --watch`` of an empty folder, once it says it watches; and its server's pid."""
    folder = tmp_path / "docs"
    folder.mkdir()
    data = tmp_path / "kb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgp", "--data-dir", str(data), "sync", str(folder), "--watch"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
        preexec_fn=preexec,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while "watching" not in proc.stderr.readline():
        assert time.monotonic() < deadline and proc.poll() is None, "watch did not start"
    return proc, int((data / "falkordb" / "server.pid").read_text())


def stopped(proc: subprocess.Popen, server: int) -> int:
    """The watch's exit status, once it and its embedded server have stopped (within 60 s)."""
    try:
        status = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        os.kill(server, signal.SIGKILL)
        pytest.fail(f"still watching 60 s after the signal; stderr:\n{proc.stderr.read()}")
    deadline = time.monotonic() + 30
    while _pid_alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pid_alive(server), "the embedded server was left running"
    return status


FINALIZING = """
import time
from kgp.cli import stopping

class Slow:
    def __del__(self):
        print("finalizing", flush=True)
        time.sleep(20)

stopping.install()
Slow()
time.sleep(20)
"""


def test_a_signal_landing_in_a_finalizer_still_stops_the_command() -> None:
    """Python drops an exception raised in a ``__del__`` (with a traceback on stderr): the signal
    must still stop the command, with its status and no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-c", FINALIZING],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "finalizing\n"
    proc.send_signal(signal.SIGHUP)
    try:
        _, errors = proc.communicate(timeout=15)  # less than the finalizer's sleep, 20 s
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the signal was lost in the finalizer")
    assert (proc.returncode, errors) == (128 + signal.SIGHUP, "")


def test_the_data_directory_is_owner_only(tmp_path: Path, encoder: Encoder) -> None:
    data = tmp_path / "new" / "kb"
    folder = write_corpus(tmp_path / "docs", ["rivers.txt"])
    old = os.umask(0o022)  # a usual umask: files would be world-readable
    try:
        with kgp.open(data_dir=data, loaded_encoder=encoder) as kg:
            kg.sync(folder)
            kg.store.upkeep.checkpoint()
            open_modes = modes(data)
    finally:
        os.umask(old)
    assert open_modes, "nothing was found to check"
    loose = {path: oct(mode) for path, mode in open_modes.items() if mode & 0o077}
    assert loose == {}
    assert stat.S_IMODE(data.parent.stat().st_mode) == 0o700, "a folder kgp created"


def modes(root: Path) -> dict[str, int]:
    out = {}
    for path in [root, *root.rglob("*")]:
        if path.is_symlink() or path.is_socket():
            continue
        out[str(path.relative_to(root.parent))] = stat.S_IMODE(path.stat().st_mode)
    return out


def test_an_older_readable_data_directory_is_narrowed(tmp_path: Path) -> None:
    data = tmp_path / "kb"
    with FalkorStore(data_dir=data):
        pass
    home = data / "falkordb"
    home.chmod(0o755)
    (home / "server.log").chmod(0o644)
    with FalkorStore(data_dir=data):
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert stat.S_IMODE((home / "server.log").stat().st_mode) == 0o600


def test_credentials_in_urls_never_reach_a_message() -> None:
    assert redact_url("http://user:s3cret@host:8000/v1") == "http://user:***@host:8000/v1"
    assert redact_url("https://t0ken@host/v1") == "https://***@host/v1"
    assert redact_url("https://host/v1?api_key=s3cret&x=1") == "https://host/v1?api_key=***&x=1"
    settings = load_settings(
        llm_base_url="http://user:s3cret@127.0.0.1:9/v1",
        llm_model="m",
        llm_retries=0,
        llm_timeout=2,
        neo4j_uri="neo4j://neo4j:s3cret@db:7687",
    )
    with pytest.raises(LlmError) as failed:
        ChatClient(settings).complete([{"role": "user", "content": "hi"}])
    assert "s3cret" not in str(failed.value) and "user:***@127.0.0.1:9" in str(failed.value)
    assert "s3cret" not in json.dumps(settings.redacted())


def test_cli_errors_do_not_print_a_credential(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    env.update(
        KGP_LLM_BASE_URL="http://user:s3cret@127.0.0.1:9/v1", KGP_LLM_MODEL="m", KGP_LLM_RETRIES="0"
    )
    done = subprocess.run(
        [sys.executable, "-m", "kgp", "--data-dir", str(tmp_path / "kb"), "doctor", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "s3cret" not in done.stdout + done.stderr
    assert json.loads(done.stdout)["settings"]["llm_base_url"] == "http://user:***@127.0.0.1:9/v1"


def test_the_server_log_is_rotated(tmp_path: Path) -> None:
    home = tmp_path / "kb" / "falkordb"
    home.mkdir(parents=True)
    (home / "server.log").write_text("x" * (LOG_MAX_BYTES + 10))
    with FalkorStore(data_dir=tmp_path / "kb") as store:
        store.counts()
    assert (home / "server.log.1").stat().st_size == LOG_MAX_BYTES + 10
    assert (home / "server.log").stat().st_size < 10_000


def test_a_symlinked_folder_is_listed_not_dropped(tmp_path: Path, encoder: Encoder) -> None:
    folder = write_corpus(tmp_path / "docs", ["rivers.txt"])
    elsewhere = write_corpus(tmp_path / "elsewhere", ["cities/egypt.txt"])
    (folder / "linked").symlink_to(elsewhere, target_is_directory=True)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        report = kg.sync(folder)
    assert report.added == ["rivers.txt"]
    assert [(s.path, s.reason.split(":")[0]) for s in report.skipped] == [
        ("linked/", "symlinked folder")
    ]
    assert report.partial

"""The stall watch alone, on a stopped process rather than a server."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from kgp.stores.falkordb import stall
from kgp.stores.falkordb.stall import StallWatch


def test_the_watch_says_it_stopped_the_server_before_the_query_can_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A query's socket closes the moment its server is killed, and its thread then asks the
    watch whether it did that: on a loaded machine that can be before the watch's thread runs
    again, so the watch says so before it kills (CI's stuck-server test got 'lost the server'
    rather than 'stuck' when it said so after)."""
    sleeper = subprocess.Popen(["sleep", "60"])
    os.kill(sleeper.pid, signal.SIGSTOP)  # no CPU time, as a deadlocked server uses none
    watch = StallWatch(lambda: sleeper.pid, seconds=0.2, poll=0.05)
    known_at_kill: list[bool] = []
    kill = os.kill

    def kill_and_look(pid: int, signum: int) -> None:
        if signum == signal.SIGKILL:
            known_at_kill.append(watch.killed == pid)
        kill(pid, signum)

    monkeypatch.setattr(stall.os, "kill", kill_and_look)
    try:
        with watch.watching():
            deadline = time.monotonic() + 30
            while sleeper.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
        assert sleeper.returncode == -signal.SIGKILL
        assert known_at_kill == [True]
        assert watch.killed_now() and not watch.killed_now()  # told once
    finally:
        watch.close()
        monkeypatch.undo()
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()


def test_a_process_that_ended_by_itself_is_not_said_to_be_stopped_by_the_watch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the server had gone before the kill (a crash), the watch stopped nothing, and the
    query's error is the crash's, not a stuck server's."""
    sleeper = subprocess.Popen(["sleep", "60"])
    os.kill(sleeper.pid, signal.SIGSTOP)
    watch = StallWatch(lambda: sleeper.pid, seconds=0.2, poll=0.05)
    tried: list[int] = []

    def gone(pid: int, signum: int) -> None:
        tried.append(pid)
        raise ProcessLookupError(pid)

    monkeypatch.setattr(stall.os, "kill", gone)
    try:
        with watch.watching():
            deadline = time.monotonic() + 30
            while not tried and time.monotonic() < deadline:
                time.sleep(0.02)
        watch.close()  # its thread past its last kill
        assert tried and not watch.killed_now()
    finally:
        watch.close()
        monkeypatch.undo()  # (Popen.kill goes through os.kill)
        sleeper.kill()
        sleeper.wait()

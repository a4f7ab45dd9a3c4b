"""A real ``kgp serve`` process on a free loopback port, for the API and page tests, and a chat
reader that answers from its context, citing it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest


@dataclass
class Server:
    url: str
    keys: dict[str, str]  # name -> key
    process: subprocess.Popen[str]
    data_dir: Path
    log: str = ""  # what it wrote on stderr, once it stopped

    def upload(self, key: str, *files: tuple[str, bytes]) -> httpx.Response:
        sent = [("file", (name, content, "application/octet-stream")) for name, content in files]
        return httpx.post(
            self.url + "/documents", files=sent, headers=auth(self.keys.get(key)), timeout=120
        )

    def get(self, path: str, key: str | None = None) -> httpx.Response:
        return httpx.get(self.url + path, headers=auth(self.keys.get(key or "")), timeout=60)

    def post(self, path: str, body: object, key: str | None = None) -> httpx.Response:
        return httpx.post(
            self.url + path, json=body, headers=auth(self.keys.get(key or "")), timeout=60
        )


def auth(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_kgp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgp", *args], capture_output=True, text=True, timeout=120
    )


def make_key(file: Path, name: str, groups: str, *more: str) -> str:
    """A key made by ``kgp key`` in ``file`` (``more``: its other options)."""
    made = run_kgp("key", name, "--groups", groups, *more, "--keys", str(file))
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def reply_from_context(messages: list[dict[str, str]]) -> str:
    """A reader's reply: the first context's first words, citing that context."""
    prompt = messages[-1]["content"]
    first = re.search(r"^1: (.*)$", prompt, flags=re.MULTILINE)
    words = first.group(1).split()[:5] if first else ["unknown"]
    return " ".join(words) + " [1]"


@contextmanager
def serving(
    data_dir: Path, *, keys: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[Server]:
    """``kgp serve`` on ``data_dir`` until the block ends; fails the test if it does not start
    or writes a traceback."""
    port = free_port()
    command = [sys.executable, "-m", "kgp", "--data-dir", str(data_dir), "serve"]
    command += ["--port", str(port), *(("--keys", str(keys)) if keys else ())]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"kgp serve did not start: {process.communicate()[1][-2000:]}")
        time.sleep(0.3)
    server = Server(url, {}, process, data_dir)
    try:
        yield server
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
        server.log = errors
    assert "Traceback" not in errors, errors

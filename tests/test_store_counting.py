"""``GraphStore.counting()`` counts this thread's calls to this store, and nothing shared is
swapped: threads counting on one store see their own calls, and a tracer sees every call."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context

import pytest
from kgp.access import ADMIN_CALLER, Caller
from kgp.errors import AccessDeniedError
from kgp.stores import GraphStore
from kgp.stores.tracer import TraceLog

from tests.graphs import make_document


def test_threads_counting_on_one_store_see_their_own_calls(store: GraphStore) -> None:
    store.write_documents([make_document("a.txt", 3)])
    log = TraceLog()
    store.tracer = log
    wanted = {"few": 3, "many": 40}
    counted: dict[str, int] = {}
    errors: list[BaseException] = []
    # both threads are inside counting() before either makes a call, and leave it only after
    # the other has made all its calls
    inside, done = threading.Barrier(len(wanted)), threading.Barrier(len(wanted))

    def work(name: str) -> None:
        try:
            with store.counting() as calls:
                inside.wait(timeout=30)
                for _ in range(wanted[name]):
                    store.list_documents()
                done.wait(timeout=30)
                counted[name] = calls()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            inside.abort()
            done.abort()

    threads = [threading.Thread(target=work, args=(name,)) for name in wanted]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        store.tracer = None
    assert not errors
    assert counted == wanted
    assert log.names() == ["list_documents"] * sum(wanted.values())


def test_counting_blocks_nest(store: GraphStore) -> None:
    with store.counting() as outer_calls:
        store.list_documents()
        with store.counting() as inner_calls:
            store.counts()  # three queries: labels, relationships, groups
        store.list_documents()
    store.list_documents()  # after the block: not counted
    assert (outer_calls(), inner_calls()) == (5, 3)


def test_reading_as_gives_every_query_of_the_block_its_caller(store: GraphStore) -> None:
    """``reading_as()`` is the one place the caller's groups are added: every query in the
    block gets them (the innermost block wins), queries outside read as the store's own caller,
    and a maintenance read is refused to a caller who is not the admin, before it runs."""
    store.write_documents([make_document("a.txt", 3)])
    log = TraceLog()
    store.tracer = log
    staff, hr = Caller(("staff",)), Caller(("hr",))
    try:
        with store.reading_as(staff):
            assert store.list_documents() == [], "a.txt is public"
            with store.reading_as(hr):
                before = len(log.events)
                store.counts()
                counted = len(log.events) - before  # (the filtered counts: a.txt is hidden)
            store.fulltext_search("word", 3)
            with pytest.raises(AccessDeniedError, match="'dump_nodes' needs the admin view"):
                store.upkeep.dump()
        assert [d.id for d in store.list_documents()] == ["a.txt"]
    finally:
        store.tracer = None
    callers = [(p["caller_admin"], p["caller_groups"]) for p in (e.parameters for e in log.events)]
    assert counted >= 3 and callers[0] == (False, ["staff"])
    assert callers[1 : 1 + counted] == [(False, ["hr"])] * counted
    assert all(c == (False, ["staff"]) for c in callers[1 + counted : -1])  # the full-text queries
    assert len(callers) > 5 and callers[-1] == (True, [])
    assert "dump_nodes" not in [e.name for e in log.events]


def test_a_thread_reads_as_the_block_only_in_a_copy_of_its_context(store: GraphStore) -> None:
    """Work handed to another thread reads as the store's caller unless it runs in a copy of
    the block's context (how the sync's writer thread keeps the admin view)."""
    store.write_documents([make_document("a.txt", 3)])
    seen: list[list[str]] = []

    def documents() -> None:
        seen.append([d.id for d in store.list_documents()])

    store.caller = Caller(("staff",))
    try:
        with store.reading_as(ADMIN_CALLER), ThreadPoolExecutor(1) as pool:
            pool.submit(documents).result()
            pool.submit(copy_context().run, documents).result()
    finally:
        store.caller = ADMIN_CALLER
    assert seen == [[], ["a.txt"]]

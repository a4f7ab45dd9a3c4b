"""``GraphStore.counting()`` counts this thread's calls to this store, and nothing shared is
swapped: threads counting on one store see their own calls, and a tracer sees every call."""

from __future__ import annotations

import threading

from kgp.stores import GraphStore
from kgp.stores.tracer import TraceLog

from tests.graphs import make_document


def test_threads_counting_on_one_store_see_their_own_calls(store: GraphStore) -> None:
    store.write_document(make_document("a.txt", 3))
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


def test_bound_parameters_reach_every_query_of_the_block(store: GraphStore) -> None:
    """``binding()`` is the one place a parameter every query needs is added (the caller's
    groups, for access control): every query in the block gets it, queries outside do not,
    and the queries still run."""
    store.write_document(make_document("a.txt", 3))
    log = TraceLog()
    store.tracer = log
    try:
        with store.binding(groups=["staff"]):
            assert [d.id for d in store.list_documents()] == ["a.txt"]
            with store.binding(caller="ada"):
                store.counts()
            store.fulltext_search("word", 3)
        store.list_documents()
    finally:
        store.tracer = None
    bound = [event.parameters for event in log.events]
    assert all(p["groups"] == ["staff"] for p in bound[:-1]) and "groups" not in bound[-1]
    assert sum("caller" in p for p in bound) == 3  # count_labels, _relationships, _groups

"""The matrix of every vector a long-lived process keeps (``kgp serve``, ``kgp sync --watch``):
read once the vector index FalkorDB builds after a start is complete, and read again whenever
the process stops holding it, so that its adds link by the matrix (at 1M passages a fraction of
the add by the index: docs/benchmarks.md, Scale) for as long as it lives, not only until the
first write of another process or a sync of its own that failed.

Each of those ends what the process held (:mod:`kgp.ingest.memory`: the matrix no longer is the
graph's). The keeper looks every REHOLD_SECONDS and reads again once the graph took no write
for a whole look (another writer's sync goes on for a while: a read beside it would be thrown
away); after a read it could not keep (writes came, a removal's refill waited, the graph is past
the matrix's limit), only once a write came since. It says in one line what it holds when that
changes; where the store cannot tell other writers (Neo4j), it holds nothing and ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Protocol

from kgp.errors import KgpError
from kgp.stores import GraphStore

HOLD_POLL_SECONDS = 5.0  # how often it asks whether the vector index is built, after a start
REHOLD_SECONDS = 60.0  # how often it looks whether it still holds the matrix


class Holder(Protocol):
    """What the keeper needs of a client (:class:`~kgp.client.KnowledgeGraph`)."""

    store: GraphStore

    def hold_vectors(self, tries: int = 3) -> bool: ...

    def held_vectors(self) -> int | None: ...

    def writes_mark(self) -> Hashable | None: ...


NOT_HELD = (
    "every passage's vector not held (another process writes, a removal's refill waits, the "
    "graph is past the matrix's limit, or the store cannot tell other writers): adds link by "
    "the vector index"
)


def keep_holding(
    kg: Holder, say: Callable[[str], None], closing: threading.Event
) -> threading.Thread:
    """Start the keeper in a daemon thread; it ends when ``closing`` is set (a close during a
    read ends it quietly) or when the store cannot tell other writers (nothing can be held)."""

    def keep() -> None:
        try:
            while kg.store.index_health(sample=0).state == "building":
                if closing.wait(HOLD_POLL_SECONDS):
                    return
            held_before: bool | None = None  # what it said last (None: nothing yet)
            failed_at: Hashable | None = None  # the writes' mark before a read not kept
            while True:
                mark = kg.writes_mark()
                if kg.held_vectors() is None and (held_before is not False or mark != failed_at):
                    began = time.perf_counter()
                    count = kg.held_vectors() if kg.hold_vectors() else None
                    if count is not None:
                        again = " again" if held_before is not None else ""
                        seconds = time.perf_counter() - began
                        say(
                            f"holding every passage's vector{again} ({count:,}, read in "
                            f"{seconds:.1f} s): adds link by their matrix"
                        )
                    elif held_before is not False:
                        say(NOT_HELD)
                    held_before, failed_at = count is not None, mark
                    if mark is None:
                        return  # the store cannot tell other writers: nothing can be held
                while True:  # until a look at which no write came since the last
                    if closing.wait(REHOLD_SECONDS):
                        return
                    now = kg.writes_mark()
                    if now == mark:
                        break
                    mark = now
        except KgpError as exc:  # (closed meanwhile, or its server lost)
            if not closing.is_set():
                say(f"every passage's vector not held ({exc}); adds link by the vector index")

    thread = threading.Thread(target=keep, name="kgp-hold-vectors", daemon=True)
    thread.start()
    return thread

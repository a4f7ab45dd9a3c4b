"""A KnowledgeGraph and its retrievers shared between threads, as a server shares them:
concurrent questions get exactly the answers they get one at a time."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kgp
import numpy as np
import pytest
from kgp.client import KnowledgeGraph
from kgp.ingest.embedding import Encoder

QUESTIONS = [
    "Which station recorded the most rain, and what does it serve?",
    "Who manages the station whose two pumps were replaced?",
    "What does Table 1 list?",
    "pump bearings replaced",
    "Which stations keep sandbags on site?",
    "When is the flood preparation reviewed?",
]
CONFIGS = [
    {"scorer": "tfidf", "seeder": "hybrid"},
    {"scorer": "embedding", "seeder": "tfidf"},
    {"scorer": "hybrid", "seeder": "vector"},
    {"method": "gnn"},
]


def answer(kg: KnowledgeGraph, question: str, choice: dict[str, str]) -> list[Any]:
    result = kg.retrieve(question, 8, **choice)
    return [(p.id, p.score, p.step_score, tuple(p.path)) for p in result.passages]


@pytest.mark.parametrize("fresh", [False, True], ids=["warm", "cold"])
def test_concurrent_retrieves_equal_sequential_ones(kg: KnowledgeGraph, fresh: bool) -> None:
    jobs = [(q, c) for q in QUESTIONS for c in CONFIGS] * 3
    expected = {(q, str(c)): answer(kg, q, c) for q, c in jobs}
    if fresh:  # retrievers and caches built while other threads use them
        kg._changed()
        kg._retrievers.clear()
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda job: answer(kg, *job), jobs))
    for (question, choice), passages in zip(jobs, got, strict=True):
        assert passages == expected[(question, str(choice))], (question, choice)


def test_store_calls_are_counted_per_retrieval_under_threads(kg: KnowledgeGraph) -> None:
    question = QUESTIONS[0]
    kg.retrieve(question, 8)  # the first in a fresh graph also fills its caches (store calls)
    alone = kg.retrieve(question, 8).store_calls
    with ThreadPoolExecutor(max_workers=6) as pool:
        counts = list(pool.map(lambda _: kg.retrieve(question, 8).store_calls, range(12)))
    assert counts == [alone] * 12


def test_concurrent_vector_searches_get_their_own_answers(kg: KnowledgeGraph) -> None:
    """FalkorDB 4.16 runs concurrent vector-index queries into each other's answers (rows of
    another query, or none); kgp's embedded server runs one query thread, so they cannot."""
    rng = np.random.default_rng(0)
    vectors = [
        (v / np.linalg.norm(v)).tolist() for v in rng.normal(size=(24, kg.encoder.dimension))
    ]

    def search(vector: list[float]) -> list[tuple[str, float]]:
        return [(h.id, h.score) for h in kg.store.vector_search(vector, 20)]

    alone = [search(v) for v in vectors]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(search, vectors * 10))
    assert together == alone * 10


# many stations: a question reads some passages the cache holds and some it does not
STATIONS = tuple(
    f"{name}{n}" for n in range(8) for name in ("Alder", "Birch", "Cedar", "Dun", "Elm")
)


def versioned(n: int) -> str:
    """A document whose every passage names its version."""
    return "\n\n".join(
        f"Pump station {s} was inspected for release R{n}. In release R{n} its pumps, valves and "
        f"floats were tested, and release R{n} lists what the crew replaced at station {s}."
        for s in STATIONS
    )


@pytest.mark.slow
def test_questions_see_each_document_whole_while_it_is_replaced(
    tmp_path: Path, encoder: Encoder
) -> None:
    """A writer replaces a document again and again while readers ask: every answer holds the
    passages of one version of it, never some of one and some of the next (a retrieval reads
    the store in several queries; the graph's read/write lock keeps writes out meanwhile). A
    check under load: the passage cache's single final fetch hides most interleavings even
    without the lock, so the next test proves the lock deterministically."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("The depot stores spare floats for every pump station.\n")
    (folder / "releases.md").write_text(versioned(0))
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        kg.sync(folder)
        forget = kg._changed

        def slow_forget() -> None:  # widens the real window between a write and the cache clear
            time.sleep(0.05)
            forget()

        kg._changed = slow_forget  # type: ignore[method-assign]
        done = threading.Event()
        mixed: list[set[str]] = []
        seen: set[str] = set()

        def read() -> int:
            asked = 0
            while not done.is_set() or asked < 3:
                station = STATIONS[asked % len(STATIONS)]  # new passages to read each time
                result = kg.retrieve(f"What was replaced at station {station}?", 4)
                versions = {
                    m
                    for p in result.passages
                    if p.document["id"] == "releases.md"
                    for m in re.findall(r"release (R\d+)", p.text)
                }
                seen.update(versions)
                if len(versions) > 1:
                    mixed.append(versions)
                asked += 1
            return asked

        with ThreadPoolExecutor(5) as pool:
            readers = [pool.submit(read) for _ in range(4)]
            try:
                for n in range(1, 21):
                    (folder / "releases.md").write_text(versioned(n))
                    assert kg.sync(folder).changed == ["releases.md"]
            finally:
                done.set()
            asked = sum(r.result() for r in readers)
    assert not mixed, f"answers mixed versions: {mixed[:3]}"
    assert asked >= 9 and len(seen) >= 2, "readers ran while versions changed"


def test_a_write_waits_for_the_questions_in_flight(tmp_path: Path, encoder: Encoder) -> None:
    """A question held between two of its store queries keeps a sync's write out until it
    returns, and sees only the version it started with; the next question sees the new one."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "releases.md").write_text(versioned(0))
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        kg.sync(folder)
        held, go = threading.Event(), threading.Event()
        expand, write = kg.store.neighbours, kg.store.write_documents
        times: dict[str, float] = {}

        def slow_expand(*args: Any, **kwargs: Any) -> Any:
            held.set()
            go.wait(30)
            return expand(*args, **kwargs)

        def timed_write(*args: Any, **kwargs: Any) -> Any:
            times["write"] = time.monotonic()
            return write(*args, **kwargs)

        kg.store.neighbours = slow_expand  # type: ignore[method-assign]
        kg.store.write_documents = timed_write  # type: ignore[method-assign]
        question = f"What was replaced at station {STATIONS[0]}?"
        with ThreadPoolExecutor(2) as pool:
            reader = pool.submit(kg.retrieve, question, 6)
            assert held.wait(30)
            (folder / "releases.md").write_text(versioned(1))
            writer = pool.submit(kg.sync, folder)
            time.sleep(1.5)  # long enough for the sync to write, were it not kept out
            go.set()
            result = reader.result()
            times["answered"] = time.monotonic()
            assert writer.result().changed == ["releases.md"]
        kg.store.neighbours = expand  # type: ignore[method-assign]
        assert times["write"] > times["answered"] - 0.5, "the write waited for the question"
        before = {m for p in result.passages for m in re.findall(r"release (R\d+)", p.text)}
        after = kg.retrieve(question, 6).passages
        assert before == {"R0"}
        assert {m for p in after for m in re.findall(r"release (R\d+)", p.text)} == {"R1"}


def test_the_read_write_lock_is_reentrant_and_prefers_writers() -> None:
    from kgp.locks import ReadWriteLock

    lock = ReadWriteLock()
    with lock.writing(), lock.writing(), lock.reading():  # a writer may read and write again
        pass
    with (
        lock.reading(),
        lock.reading(),
        pytest.raises(RuntimeError, match="cannot start a write"),
        lock.writing(),
    ):
        pass
    order: list[str] = []
    reading = threading.Event()

    def reader(name: str, hold: float) -> None:
        with lock.reading():
            reading.set()
            order.append(name)
            time.sleep(hold)

    def writer() -> None:
        with lock.writing():
            order.append("write")

    first = threading.Thread(target=reader, args=("first", 0.5))
    first.start()
    reading.wait(5)
    waiting = threading.Thread(target=writer)
    waiting.start()
    time.sleep(0.1)
    late = threading.Thread(target=reader, args=("late", 0))
    late.start()
    for thread in (first, waiting, late):
        thread.join(10)
    assert order == ["first", "write", "late"], "a waiting writer goes before later readers"

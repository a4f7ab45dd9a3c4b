"""The hybrid seeder's full-text search, run beside the question's encoding."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest
from kgp.agents.context import RetrievalConfig, Services
from kgp.agents.seeders import hybrid
from kgp.stores.model import SearchHit


class Store:
    """What the seeder asks of a store: each search records when it starts and ends, and on
    which thread."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def fulltext_search(self, text: str, limit: int) -> list[SearchHit]:
        self.events.append(("start", threading.current_thread().name))
        time.sleep(0.05)
        self.events.append(("end", threading.current_thread().name))
        return [SearchHit("a.txt#passage=0", 1.0), SearchHit("b.txt#passage=0", 0.5)]

    def vector_search(self, vector: Any, limit: int) -> list[SearchHit]:
        return [SearchHit("b.txt#passage=0", 0.9)]


def services(store: Store, embed: Any) -> Services:
    return Services(store, embed, RetrievalConfig())  # type: ignore[arg-type]


def test_the_full_text_search_runs_beside_the_encoding_and_both_are_fused() -> None:
    store = Store()
    seeds = hybrid(services(store, lambda texts: np.ones((len(texts), 4))), "question", 2)
    assert [pid for pid, _ in seeds] == ["b.txt#passage=0", "a.txt#passage=0"]
    assert store.events[0][1].startswith("kgp-meanwhile")


@pytest.mark.parametrize("delay", [0.0, 0.02])
def test_a_failed_encoding_leaves_no_search_running(delay: float) -> None:
    """Nothing the question read outlives it: the search never ran, or it ended first."""
    store = Store()

    def embed(texts: list[str]) -> np.ndarray:
        time.sleep(delay)
        raise RuntimeError("the encoder failed")

    with pytest.raises(RuntimeError, match="the encoder failed"):
        hybrid(services(store, embed), "question", 2)
    assert [kind for kind, _ in store.events] in ([], ["start", "end"])

"""The Python client: ``kgp.open(**overrides)`` returns a :class:`KnowledgeGraph`."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

from kgp.settings import Settings, load_settings
from kgp.stores import GraphStore, store_from_settings
from kgp.stores.model import GraphCounts
from kgp.stores.tracer import Tracer


class KnowledgeGraph:
    """A knowledge graph in the configured store. Use as a context manager."""

    def __init__(self, *, settings: Settings, store: GraphStore) -> None:
        self.settings = settings
        self.store = store

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    def stats(self) -> GraphCounts:
        """Node counts by label and relationship counts by type."""
        return self.store.counts()


def open(*, tracer: Tracer | None = None, **overrides: Any) -> KnowledgeGraph:
    """Open the knowledge graph the settings describe (overrides are settings fields)."""
    settings = load_settings(**overrides)
    store = store_from_settings(settings, tracer=tracer).open()
    return KnowledgeGraph(settings=settings, store=store)

"""The query tracer: every store call can be reported with its parameters, rows and duration."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class QueryEvent:
    name: str
    parameters: Mapping[str, Any]
    rows: int
    seconds: float


Tracer = Callable[[QueryEvent], None]


def summarise(value: Any, width: int = 80) -> Any:
    """Parameters shortened for display: long lists and strings are elided."""
    if isinstance(value, Mapping):
        return {key: summarise(item, width) for key, item in value.items()}
    if isinstance(value, list | tuple):
        if len(value) > 4:
            return [*(summarise(v, width) for v in value[:3]), f"... {len(value)} items"]
        return [summarise(v, width) for v in value]
    if isinstance(value, str) and len(value) > width:
        return value[: width - 3] + "..."
    return value


class TraceLog:
    """A tracer that keeps every event, for tests and ``--trace``."""

    def __init__(self) -> None:
        self.events: list[QueryEvent] = []

    def __call__(self, event: QueryEvent) -> None:
        self.events.append(event)

    def names(self) -> list[str]:
        return [event.name for event in self.events]

"""Server-sent events for a streamed answer (``POST /ask`` with ``"stream": true``): what the
server writes and what the remote client reads back, in one place.

The events, in order: ``evidence`` (the retrieval, as ``/retrieve`` returns it), ``token`` for
each piece of the reply as the model writes it (``{"text": ...}``), and ``answer`` (the answer
as ``/ask`` returns it, less the evidence already sent). Without a reader, or when it fails,
there are no ``token`` events and ``answer`` says why."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any

from kgp.agents.reader import Answer, answer_stream
from kgp.agents.results import Retrieval
from kgp.settings import Settings


def event(name: str, data: Any) -> str:
    """One server-sent event: its name and one line of JSON."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def answer_events(retrieval: Retrieval, settings: Settings) -> Iterator[str]:
    """The events of one streamed answer."""
    yield event("evidence", retrieval.as_dict())
    for item in answer_stream(retrieval, settings):
        if isinstance(item, Answer):
            answer = asdict(item)
            del answer["passages"]
            yield event("answer", answer)
        else:
            yield event("token", {"text": item})


class EventReader:
    """Reads a server-sent stream line by line: ``feed`` gives ``(name, data)`` when a line
    ends an event, else None."""

    def __init__(self) -> None:
        self.name = "message"
        self.data: list[str] = []

    def feed(self, line: str) -> tuple[str, Any] | None:
        if line.startswith("event:"):
            self.name = line[6:].strip()
        elif line.startswith("data:"):
            self.data.append(line[5:].removeprefix(" "))
        elif not line and self.data:
            done = (self.name, json.loads("\n".join(self.data)))
            self.name, self.data = "message", []
            return done
        return None


def read_events(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """``(name, data)`` for each event in a server-sent stream's lines."""
    reader = EventReader()
    for line in [*lines, ""]:
        done = reader.feed(line)
        if done is not None:
            yield done

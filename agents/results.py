"""What a retrieval returns: plain data, no store and no models, so the reader, evaluation, the
CLI and a server use it without importing the retriever."""

from __future__ import annotations

import hashlib
import itertools
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    """One piece of evidence. ``score`` is what the final order is by (the cosine with the
    question by default; 1.0 for the pages and tables a structural question names, which come
    first); ``step_score`` is the score the traversal took it with (Eq. 1, or the seed's)."""

    id: str
    text: str
    score: float
    document: dict[str, str]
    page: int
    path: list[str]
    hop: int
    kind: str = "passage"  # "table": a whole table's Markdown; "table-rows": a passage of its rows
    step_score: float = 0.0
    table: str | None = None  # the table a "table-rows" passage belongs to


@dataclass
class Retrieval:
    question: str
    passages: list[RetrievedPassage] = field(default_factory=list)
    seeds: list[dict[str, Any]] = field(default_factory=list)
    structure: dict[str, Any] | None = None  # pages and tables the question named, if any
    steps: dict[str, Any] | None = None  # RGNN-Ret: sub-questions, answers, why it stopped
    timings: dict[str, float] = field(default_factory=dict)
    store_calls: int = 0
    notices: list[str] = field(default_factory=list)  # what the user should know (a cut question)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class TraceRows:
    """A retrieval shaped for the store's ``save_trace``: the Trace node, the passages and tables
    it retrieved (with rank, hop and score) and the traversal's steps between passages."""

    trace: dict[str, Any]
    passages: list[dict[str, Any]]
    tables: list[dict[str, Any]]
    steps: list[dict[str, Any]]


def trace_rows(retrieval: Retrieval, *, scorer: str, seeder: str) -> TraceRows:
    """The rows that keep ``retrieval`` in the graph as a ``Trace`` (for Neo4j Browser)."""
    created = datetime.now(UTC).isoformat(timespec="seconds")
    # unique even for the same question asked twice in one second (by two callers, say)
    digest = hashlib.sha256(f"{created}|{retrieval.question}|{uuid.uuid4()}".encode()).hexdigest()
    digest = digest[:12]
    trace = {
        "id": f"trace-{created}-{digest}",
        "question": retrieval.question,
        "created": created,
        "scorer": scorer,
        "seeder": seeder,
    }
    rows: dict[str, list[dict[str, Any]]] = {"passage": [], "table": []}
    for rank, p in enumerate(retrieval.passages, start=1):
        node = "table" if p.kind == "table" else "passage"  # table rows are Passage nodes
        rows[node].append({"id": p.id, "rank": rank, "hop": p.hop, "score": p.score})
    steps = {
        (a, b): {"source": a, "target": b, "hop": hop}
        for p in retrieval.passages
        if p.kind != "table" and p.hop > 0
        for hop, (a, b) in enumerate(itertools.pairwise(p.path), start=1)
    }
    return TraceRows(trace, rows["passage"], rows["table"], list(steps.values()))

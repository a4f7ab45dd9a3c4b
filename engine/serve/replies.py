"""What ``kgp serve`` answers, as models, so ``/openapi.json`` describes every reply and a
client generated from it reads every field. Each model forbids fields it does not name: a reply
that grows a field without its model is a 500 in the tests, not a field the schema hides.
Replies that are the engine's own dataclasses (:class:`~kgp.agents.reader.Answer`,
:class:`~kgp.stores.model.DocumentView`, ...) are declared as those."""

from __future__ import annotations

from typing import Any

from kgp.agents.results import RetrievedPassage
from kgp.stores.model import NeighbourhoodNode
from pydantic import BaseModel, ConfigDict, Field


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Health(Reply):
    status: str = Field(description='"ok" while the server answers')
    keys: bool = Field(description="whether requests need an API key")


class Me(Reply):
    key: str = Field(description='the key\'s name ("local" on a server without keys)')
    groups: list[str] = Field(description="whose documents it reads (['*']: every one)")
    upload: list[str] = Field(description="the groups its uploads get; empty: it may not upload")
    uploads: str = Field(description="the id prefix of its uploads: this and a file name")
    max_file_mb: float = Field(description="the largest file an upload may hold")


class Counts(Reply):
    labels: dict[str, int] = Field(description="nodes by label")
    relationships: dict[str, int] = Field(description="relationships by type")
    groups: dict[str, int] = Field(description="documents by access group")


class Document(Reply):
    id: str
    path: str
    sha256: str
    title: str = ""
    pages: int = 0
    groups: list[str] = Field(description="of its groups, those the caller holds")
    passages: int | None = Field(None, description="Passage nodes, table rows included")
    tables: int | None = None


class Edge(Reply):
    id: str = Field(description="the neighbour's id")
    kind: str = Field(description="similar, next or keyword")
    weight: float = Field(description="the SIMILAR score, 1 for NEXT, shared keywords")


class Neighbours(Reply):
    node: NeighbourhoodNode
    edges: list[Edge]
    nodes: list[NeighbourhoodNode] = Field(description="the neighbours, each once")


class Removed(Reply):
    removed: bool
    id: str


class Regrouped(Reply):
    id: str
    groups: list[str] = Field(description="who may read the document now")


class Skipped(Reply):
    path: str = Field(description="the id the file would have had")
    reason: str


class Uploaded(Reply):
    added: list[str] = Field(description="ids of documents new to the graph")
    changed: list[str] = Field(description="ids of documents replaced")
    unchanged: list[str] = Field(description="ids of documents sent again as they were")
    skipped: list[Skipped] = Field(description="files kgp could not read, with why")
    passages: int = Field(description="passages written")
    seconds: float = Field(description="the write's time")


class Retrieved(Reply):
    """What ``kgp retrieve --json`` prints, with the saved trace's id."""

    question: str
    passages: list[RetrievedPassage] = Field(description="the evidence, best first")
    seeds: list[dict[str, Any]] = Field(description="where the traversal started")
    structure: dict[str, Any] | None = Field(description="pages and tables the question named")
    steps: dict[str, Any] | None = Field(description="RGNN-Ret's sub-questions, if used")
    timings: dict[str, float] = Field(description="seconds by stage")
    store_calls: int
    notices: list[str] = Field(description="what the user should know (a cut question, ...)")
    trace: str | None = Field(None, description="the saved trace's id (save_trace)")


class TraceSummary(Reply):
    id: str
    question: str
    scorer: str | None
    seeder: str | None
    created: str
    groups: list[str] = Field(description="the groups of the caller that saved it")
    items: int = Field(description="what it retrieved that the caller may read now")
    gone: list[str] = Field(description="ids it cited that were removed or replaced since")


class TraceItem(Reply):
    id: str
    rank: int
    hop: int | None
    score: float | None
    doc_id: str
    title: str | None
    page: int | None
    table: bool = Field(description="whether the item is a whole table")
    table_id: str | None
    text: str | None


class TraceStep(Reply):
    source: str
    target: str
    hop: int | None


class Trace(Reply):
    id: str
    question: str
    created: str
    scorer: str | None
    seeder: str | None
    items: list[TraceItem] = Field(description="by rank, those the caller may read now")
    steps: list[TraceStep] = Field(description="the reasoning paths between those items")


class AuditEntry(BaseModel):
    """One request as the audit trail keeps it; each action adds what it is about
    (``question``, ``documents``, ``files``, ``returned``, ``trace``, ``to``, ...)."""

    model_config = ConfigDict(extra="allow")
    time: str
    key: str
    action: str
    status: int
    request_id: str | None = None
    groups: list[str] | None = None
    error: str | None = None
    ms: float | None = None

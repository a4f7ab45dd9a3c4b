"""What a request to ``kgp serve`` may hold: the bodies of ``/retrieve``, ``/ask`` and
``PATCH /documents/ID``, and the check of an id in a path."""

from __future__ import annotations

from kgp.serve.errors import HttpError
from pydantic import BaseModel, ConfigDict, Field, field_validator

CONTROL = frozenset(map(chr, [*range(0x20), 0x7F]))  # no id holds one; a question may hold
SPACING = frozenset("\t\n\r")  # these, pasted from elsewhere


class Query(BaseModel):
    """The body of ``/retrieve`` and ``/ask``: the CLI's options. A question longer than
    ``MAX_QUESTION_CHARS`` is cut, with a notice, as everywhere (the edge caps the body)."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1)
    k: int | None = Field(default=None, ge=1, le=10_000)
    scorer: str | None = None
    seeder: str | None = None
    order: str | None = None
    method: str | None = None
    save_trace: bool = False
    stream: bool = False  # /ask: server-sent events (evidence, the reply's pieces, the answer)

    @field_validator("question")
    @classmethod
    def _visible(cls, question: str) -> str:
        if any(c in CONTROL - SPACING for c in question):
            raise ValueError("holds a control character (NUL and the like); send plain text")
        return question

    def choices(self) -> dict[str, str | None]:
        """The retrieval's choices, as ``KnowledgeGraph.retrieve`` and ``ask`` take them."""
        return {
            "scorer": self.scorer,
            "seeder": self.seeder,
            "order": self.order,
            "method": self.method,
        }


def plain_id(doc_id: str) -> str:
    """``doc_id`` if it holds no control character (422 if it does)."""
    if any(c in CONTROL for c in doc_id):
        raise HttpError(422, f"document id {doc_id!r} holds a control character; no id has one")
    return doc_id


class Regrouping(BaseModel):
    """The body of ``PATCH /documents/{id}``: who may read the document from now on."""

    model_config = ConfigDict(extra="forbid")
    groups: list[str] = Field(min_length=1, max_length=100)

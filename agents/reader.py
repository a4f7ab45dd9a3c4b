"""The reader: the KGP paper's answer prompt (Listings 3 and 4) over the retrieved passages,
through an OpenAI-compatible chat endpoint. The context is cut to the model's budget, passages
are numbered, and the model is asked to cite the numbers it used, which map back to passage
ids."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from kgp.agents.llm import ChatClient, Message
from kgp.agents.results import Retrieval, RetrievedPassage
from kgp.errors import LlmError
from kgp.settings import Settings

INSTRUCTION = "Given the following question and contexts, create a final answer to the question."
SHORT = "Please answer in less than 6 words."
CITE = (
    "After the answer, cite the numbers of the contexts you used in square brackets, "
    "for example [2][5]."
)
PROMPT_OVERHEAD_TOKENS = 120
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


@dataclass
class Answer:
    question: str
    answer: str | None
    cited: list[str] = field(default_factory=list)  # ids of the passages the answer cites
    context: list[str] = field(default_factory=list)  # ids of the passages the model saw
    passages: list[RetrievedPassage] = field(default_factory=list)
    error: str | None = None  # why there is no answer (no reader configured, endpoint failed)
    timings: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # from retrieval (a cut question, ...)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (about four characters per token for English)."""
    return len(text) // 4 + 1


def fit_context(passages: Sequence[RetrievedPassage], budget: int) -> list[RetrievedPassage]:
    """Passages in rank order while they fit ``budget`` tokens; the first is cut to fit."""
    kept: list[RetrievedPassage] = []
    used = 0
    for passage in passages:
        cost = estimate_tokens(passage.text) + 3
        if used + cost > budget:
            if not kept and budget > 16:  # never send an empty context: cut the first
                text = passage.text[: 4 * (budget - 8)]
                kept.append(RetrievedPassage(**{**asdict(passage), "text": text}))
            break
        kept.append(passage)
        used += cost
    return kept


def answer_prompt(
    question: str, contexts: Sequence[str], *, short: bool = True, cite: bool = True
) -> str:
    """Listing 3 of the paper: instruction, question, numbered contexts, question again, answer
    cue; with ``cite``, one added sentence asking for the contexts' numbers."""
    lines = [INSTRUCTION, "=====", f"QUESTION: {question}", "=====", "CONTEXT:"]
    lines += [f"{n}: {text}" for n, text in enumerate(contexts, start=1)]
    cue = " ".join(
        part for part in ("ANSWER:", SHORT if short else "", CITE if cite else "") if part
    )
    lines += ["=====", f"QUESTION: {question}", "=====", cue]
    return "\n".join(lines)


def parse_citations(reply: str, count: int) -> tuple[str, list[int]]:
    """The answer without its citation marks, and the cited context numbers (1-based, valid
    only)."""
    numbers: list[int] = []
    for match in _CITATION.finditer(reply):
        numbers += [int(n) for n in match.group(1).split(",")]
    text = " ".join(_CITATION.sub(" ", reply).split()).strip()
    return text, [n for n in dict.fromkeys(numbers) if 1 <= n <= count]


class Reader:
    def __init__(
        self,
        client: ChatClient,
        *,
        context_tokens: int = 6000,
        answer_tokens: int = 256,
        short: bool = True,
    ) -> None:
        self.client = client
        self.context_tokens = context_tokens
        self.answer_tokens = answer_tokens
        self.short = short

    def _prompt(
        self, question: str, passages: Sequence[RetrievedPassage]
    ) -> tuple[list[RetrievedPassage], list[Message]]:
        budget = self.context_tokens - self.answer_tokens - PROMPT_OVERHEAD_TOKENS
        budget -= 2 * estimate_tokens(question)
        context = fit_context(passages, max(budget, 0))
        prompt = answer_prompt(question, [p.text for p in context], short=self.short)
        return context, [{"role": "user", "content": prompt}]

    def read(self, question: str, passages: Sequence[RetrievedPassage]) -> Answer:
        context, messages = self._prompt(question, passages)
        reply = self.client.complete(messages, max_tokens=self.answer_tokens)
        return _answered(question, reply, context, passages)

    def stream(self, question: str, passages: Sequence[RetrievedPassage]) -> Iterator[str | Answer]:
        """``read`` as the model writes: the reply's pieces (citation marks and all), then the
        Answer, last."""
        context, messages = self._prompt(question, passages)
        pieces: list[str] = []
        for piece in self.client.stream(messages, max_tokens=self.answer_tokens):
            pieces.append(piece)
            yield piece
        yield _answered(question, "".join(pieces).strip(), context, passages)


def _answered(
    question: str,
    reply: str,
    context: Sequence[RetrievedPassage],
    passages: Sequence[RetrievedPassage],
) -> Answer:
    text, numbers = parse_citations(reply, len(context))
    return Answer(
        question=question,
        answer=text,
        cited=[context[n - 1].id for n in numbers],
        context=[p.id for p in context],
        passages=list(passages),
    )


def answer_from(retrieval: Retrieval, settings: Settings) -> Answer:
    """The configured chat model's answer from a retrieval's evidence, citing the passages it
    used. Without a configured model, or when it fails, the answer is ``None``, ``error`` says
    why and the evidence is still there."""
    items = answer_stream(retrieval, settings, stream=False)
    return [item for item in items if isinstance(item, Answer)][-1]


def answer_stream(
    retrieval: Retrieval, settings: Settings, *, stream: bool = True
) -> Iterator[str | Answer]:
    """``answer_from`` as the model writes: the reply's pieces as they come (with ``stream``),
    then the Answer, always last (with ``error`` and no answer when there is no reader or it
    failed, even midway)."""

    def without(error: str) -> Answer:
        return Answer(
            retrieval.question,
            None,
            passages=retrieval.passages,
            error=error,
            timings=retrieval.timings,
            notices=retrieval.notices,
        )

    if not settings.llm_base_url or not settings.llm_model:
        yield without("no reader is configured (set KGP_LLM_BASE_URL and KGP_LLM_MODEL)")
        return
    started = time.perf_counter()
    answer: str | Answer | None = None
    try:
        reader = Reader(
            ChatClient(settings),
            context_tokens=settings.llm_context_tokens,
            answer_tokens=settings.llm_answer_tokens,
        )
        if not stream:
            answer = reader.read(retrieval.question, retrieval.passages)
        else:
            for answer in reader.stream(retrieval.question, retrieval.passages):
                if isinstance(answer, str):
                    yield answer
    except LlmError as exc:
        yield without(str(exc))
        return
    if not isinstance(answer, Answer):  # a reader yields its Answer last; never expected
        yield without("the language model's reply came back without an answer")
        return
    answer.timings = {
        **retrieval.timings,
        "read_ms": round(1000 * (time.perf_counter() - started), 2),
    }
    answer.notices = retrieval.notices
    yield answer

"""Answering from retrieved passages and grading the answers (``kgp eval --reader``): EM, F1 and
the KGP paper's LLM grading prompt."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kgp import metrics
from kgp.agents.judge import Judge
from kgp.agents.llm import ChatClient
from kgp.agents.reader import Reader
from kgp.agents.results import RetrievedPassage
from kgp.client import KnowledgeGraph
from kgp.corpus_graph import Case
from kgp.errors import ConfigurationError, KgpError
from kgp.evaluate.report import QuestionResult
from kgp.settings import Settings

READER_WORKERS = 8


def reader_and_judge(settings: Settings) -> tuple[Reader, Judge]:
    """The reader that answers and the judge that grades, both on the configured chat model."""
    if not settings.llm_base_url or not settings.llm_model:
        raise ConfigurationError(
            "answering needs a chat model: set KGP_LLM_BASE_URL and KGP_LLM_MODEL"
        )
    client = ChatClient(settings)
    return (
        Reader(
            client,
            context_tokens=settings.llm_context_tokens,
            answer_tokens=settings.llm_answer_tokens,
        ),
        Judge(client),
    )


def answer_and_grade(
    kg: KnowledgeGraph, cases: list[Case], rows: list[QuestionResult], reader: Reader, judge: Judge
) -> None:
    """Answer every question from its retrieved passages and grade it (concurrently)."""
    nodes = kg.store.fetch_nodes(pid for row in rows for pid in row.retrieved)

    def passage(pid: str) -> RetrievedPassage:
        node = nodes.get(pid, {})
        kind = "table" if node.get("label") == "Table" else "passage"
        text = str(node.get("markdown") if kind == "table" else node.get("text", ""))
        return RetrievedPassage(pid, text, 0.0, {}, int(node.get("page") or 0), [], 0, kind)

    def one(pair: tuple[Case, QuestionResult]) -> None:
        case, row = pair
        answers = case.item.answers
        row.em = row.f1 = row.judged = 0.0
        try:
            answer = reader.read(row.question, [passage(pid) for pid in row.retrieved])
            row.prediction = answer.answer or ""
            row.em = metrics.exact_match(row.prediction, answers)
            row.f1 = metrics.token_f1(row.prediction, answers)
            row.judged = judge.grade(row.question, answers, row.prediction)
        except KgpError as exc:  # no answer or no grade: a miss
            row.error = f"reader: {exc}"

    with ThreadPoolExecutor(max_workers=READER_WORKERS) as pool:
        list(pool.map(one, [(c, r) for c, r in zip(cases, rows, strict=True) if c.item.answers]))

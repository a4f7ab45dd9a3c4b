"""The KGP paper's grading prompt (Listing 5): a chat model decides whether a predicted answer is
correct given the real one, for answers that are right without matching word for word."""

from __future__ import annotations

from collections.abc import Sequence

from kgp.agents.llm import ChatClient
from kgp.errors import LlmError

EXAMPLES = (
    (
        "What company owns the property of Marvel Comics?",
        "The Walt Disney Company",
        "The Walt Disney Company",
        1,
    ),
    (
        "Which constituent college of the University of Oxford endows four professorial "
        "fellowships for sciences including chemistry and pure mathematics?",
        "Magdalen College",
        "Magdalen College.",
        1,
    ),
    ("Which year was Marvel started?", "1939", "1200", 0),
)


def grading_prompt(question: str, answers: Sequence[str], prediction: str) -> str:
    """Listing 5, verbatim; several accepted answers are joined with " / "."""
    lines = [
        "You are an expert professor specialized in grading whether the prediction to the "
        "question is correct or not according to the real answer.",
        "=====",
        "For example:",
        "=====",
    ]
    for q, a, p, verdict in EXAMPLES:
        lines += [f"Question: {q}", f"Answer: {a}", f"Prediction: {p}", f"Return: {verdict}"]
        lines.append("=====")
    lines += [
        "You are grading the following question:",
        f"Question: {question}",
        f"Answer: {' / '.join(answers)}",
        f"Prediction: {prediction}",
        "If the prediction is correct according to the answer, return 1. Otherwise, return 0.",
        "Return: your reply can only be one number '0' or '1'",
    ]
    return "\n".join(lines)


class Judge:
    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def grade(self, question: str, answers: Sequence[str], prediction: str) -> float:
        """1.0 or 0.0; a reply that is neither raises a one-line :class:`LlmError`."""
        reply = self.client.complete(
            [{"role": "user", "content": grading_prompt(question, answers, prediction)}],
            max_tokens=4,
        )
        verdict = next((c for c in reply if c in "01"), None)
        if verdict is None:
            raise LlmError(f"the grading model replied {reply[:40]!r}, not 0 or 1")
        return float(verdict)

"""RGNN-Ret (Li et al., ``../shared/papers/002_*``): an LLM asks the next sub-question,
GNN-Ret scores the passages for it, the integrated distances of the steps are mixed by β (Eq. 6),
the LLM answers the sub-question from the best passages and critiques whether the answers so far
suffice; at most ``max_steps`` steps."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from kgp.agents.gnn import Distances, GnnRetriever, relevant
from kgp.agents.llm import ChatClient
from kgp.errors import LlmError

SUBQUESTION = (
    "Instruction: Your goal is to ask the next step question logically.\n\n"
    "Here are the examples of how to answer the questions:\n"
    "Question: When was the founder of craigslist born?\n"
    "Next step: Who was the founder of craigslist?\n"
    "Intermediate answer: Craigslist was founded by Craig Newmark.\n"
    "Next step: When was Craig Newmark born?\n\n"
    "Question: Who lived longer, Muhammad Ali or Alan Turing?\n"
    "Next step: How old was Muhammad Ali when he died?\n"
    "Intermediate answer: Muhammad Ali was 74 years old when he died.\n"
    "Next step: How old was Alan Turing when he died?\n\n"
    "Question:\n{question}\n{steps}Next step:"
)
SUBANSWER = (
    "Instruction: Your goal is to answer the next step question. I will provide you some "
    "snippets, and you need to answer the next step question by considering the snippets.\n\n"
    "Context:\n{context}\n\nQuestion:\n{question}\n\nAnswer in one sentence."
)
CRITIQUE = (
    "Instruction: You are a QA expert. Your goal is to critique whether the intermediate "
    "answers are enough to generate the final answer to the question. First analyze if the "
    "intermediate answers is enough to generate the final answer step by step logically. Then, "
    "if it is enough, output 'Critique: yes'. If not, output 'Critique: no'.\n\n"
    "Question:\n{question}\n{steps}\nAnalyze if the intermediate answers is enough to generate "
    "the final answer to the question step by step logically. Then, if it is enough, output "
    "'Critique: yes'. If not, output 'Critique: no'."
)
MAX_SUBQUESTION_CHARS = 300


@dataclass
class Step:
    subquestion: str
    answer: str
    top: list[str]


@dataclass
class RecurrentResult:
    passages: list[tuple[str, float]]
    steps: list[Step]
    stopped: str  # "critique", "step limit", "bad sub-question", "llm error: ..."


class RecurrentGnnRetriever:
    """RGNN-Ret: sub-questions, GNN-Ret per step, distances mixed across steps by β (Eq. 6),
    sub-answers, self-critique; stops at ``max_steps``. A model failure ends the loop with the
    distances so far (or the question's own on the first step), never without passages."""

    def __init__(
        self, gnn: GnnRetriever, client: ChatClient, *, max_steps: int = 4, context: int = 5
    ) -> None:
        self.gnn = gnn
        self.client = client
        self.max_steps = max_steps
        self.context = context

    def _ask(self, prompt: str, max_tokens: int) -> str:
        return self.client.complete([{"role": "user", "content": prompt}], max_tokens=max_tokens)

    def retrieve(self, question: str, k: int) -> RecurrentResult:
        integrated: Distances = {}
        steps: list[Step] = []
        stopped = "step limit"
        beta = self.gnn.params.beta
        try:
            for _ in range(self.max_steps):
                trail = "".join(
                    f"Next step: {s.subquestion}\nIntermediate answer: {s.answer}\n" for s in steps
                )
                sub = _first_line(self._ask(SUBQUESTION.format(question=question, steps=trail), 96))
                if (
                    not sub
                    or len(sub) > MAX_SUBQUESTION_CHARS
                    or sub in {s.subquestion for s in steps}
                ):
                    stopped = "bad sub-question"
                    break
                h = self.gnn.distances(sub, k)
                integrated = mix(h, integrated, beta) if integrated else h
                top = relevant(integrated, self.context)
                texts = self.gnn.store.passage_vectors(top)
                context = "\n".join(
                    f"{n + 1}: {texts[p].text}" for n, p in enumerate(top) if p in texts
                )
                answer = _first_line(
                    self._ask(SUBANSWER.format(context=context, question=sub), 128)
                )
                steps.append(Step(sub, answer, top))
                verdict = self._ask(
                    CRITIQUE.format(
                        question=question,
                        steps=trail + f"Next step: {sub}\nIntermediate answer: {answer}\n",
                    ),
                    256,
                )
                if re.search(r"critique:\s*yes", verdict, re.IGNORECASE):
                    stopped = "critique"
                    break
        except LlmError as exc:
            stopped = f"llm error: {exc}"
        if not integrated:
            integrated = self.gnn.distances(question, k)
        return RecurrentResult(
            [(n, integrated[n]) for n in relevant(integrated, k)], steps, stopped
        )


def mix(current: Distances, previous: Distances, beta: float) -> Distances:
    """Eq. 6 over the passages either step reached; a passage one step did not reach counts at
    that step's largest distance (it was farther than all it reached)."""
    far_now = max(current.values(), default=1.0)
    far_before = max(previous.values(), default=1.0)
    return {
        n: beta * current.get(n, far_now) + (1 - beta) * previous.get(n, far_before)
        for n in current.keys() | previous.keys()
    }


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return re.sub(r"^(next step|intermediate answer|answer)\s*:\s*", "", lines[0], flags=re.I)


def describe(result: RecurrentResult) -> dict[str, Any]:
    return {"steps": [asdict(s) for s in result.steps], "stopped": result.stopped}

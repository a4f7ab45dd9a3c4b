"""GNN-Ret and RGNN-Ret (Li et al., "Graph Neural Network Enhanced Retrieval for Question
Answering of LLMs", ``../shared/papers/002_*``) over kgp's passage graph.

GNN-Ret: a passage's semantic distance to the question is ``1 - cosine`` with the graph's encoder
(h⁰). Each layer l samples the K passages with the smallest distances (the relevant set T_K);
their neighbours (NEXT and shared keywords, optionally SIMILAR) receive the smallest distance
among their relevant neighbours as message (Eq. 3) and mix it with their own by α (Eq. 4); the
others keep theirs. Passages are retrieved by the integrated distance. Distances are computed for
the vector index's nearest ``pool`` passages and for every neighbour reached (one neighbours query
and one vector fetch per layer, as in the traversal); a passage outside both is farther than all
of them, so the ranking of the top k is exact up to the index's recall.

RGNN-Ret: an LLM asks the next sub-question, GNN-Ret scores the passages for it, the integrated
distances of the steps are mixed by β (Eq. 6), the LLM answers the sub-question from the best
passages and critiques whether the answers so far suffice; at most ``max_steps`` steps.

Training (:func:`fit`): α (and β) by gradient descent on the hinge objective (Eq. 5/7) over
questions with gold passages, learning rate 1, stopping when the gradient is below 0.001 or the
loss rose five times in a row (the paper's Appendix A)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from kgp.agents.llm import ChatClient
from kgp.errors import ConfigurationError, KgpError, LlmError
from kgp.settings import Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import EdgeKind

Distances = dict[str, float]
Adjacency = Mapping[str, Iterable[str]]


@dataclass(frozen=True)
class GnnParams:
    alphas: tuple[float, ...] = (0.5,)  # one per layer (the paper's untrained α¹ = 0.5)
    beta: float = 0.9  # RGNN: weight of the current step's distances
    top_k: int = 5  # K: relevant passages that send messages
    pool: int = 100  # passages whose distances come from the vector index
    similar: bool = False  # also pass messages along SIMILAR edges
    trained_on: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.alphas or any(not 0.0 <= a <= 1.0 for a in self.alphas):
            raise ConfigurationError(f"GNN alphas must be in [0, 1], one per layer: {self.alphas}")
        if not 0.0 <= self.beta <= 1.0:
            raise ConfigurationError(f"GNN beta must be in [0, 1], not {self.beta}")
        if self.top_k < 1 or self.pool < 1:
            raise ConfigurationError("GNN top_k and pool must be at least 1")

    @property
    def kinds(self) -> tuple[EdgeKind, ...]:
        base = (EdgeKind.NEXT, EdgeKind.KEYWORD)
        return (*base, EdgeKind.SIMILAR) if self.similar else base

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> GnnParams:
        try:
            raw = json.loads(Path(path).expanduser().read_text())
            raw["alphas"] = tuple(raw["alphas"])
            return cls(**raw)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{path}: not GNN parameters written by kgp ({exc})") from None


def gnn_params(settings: Settings | None) -> GnnParams:
    """GNN-Ret's parameters: fitted ones from ``KGP_GNN_PARAMS`` (``kgp train gnn``), else the
    paper's untrained defaults."""
    if settings is None or not settings.gnn_params:
        return GnnParams()
    return GnnParams.load(settings.gnn_params)


def relevant(h: Distances, k: int) -> list[str]:
    """T_K: the ``k`` passages with the smallest distances (ties by id)."""
    return sorted(h, key=lambda n: (h[n], n))[:k]


def messages(h: Distances, adjacency: Adjacency, k: int) -> Distances:
    """Eq. 3: each neighbour of a relevant passage receives the smallest distance among its
    relevant neighbours."""
    out: Distances = {}
    for j in relevant(h, k):
        for i in adjacency.get(j, ()):
            if i != j and i in h:
                out[i] = min(out.get(i, math.inf), h[j])
    return out


def layer(h: Distances, adjacency: Adjacency, alpha: float, k: int) -> Distances:
    """Eq. 4 for the passages that received a message; the others keep their distance."""
    received = messages(h, adjacency, k)
    return {n: alpha * d + (1 - alpha) * received[n] if n in received else d for n, d in h.items()}


def propagate(h0: Distances, adjacency: Adjacency, params: GnnParams) -> Distances:
    h = h0
    for alpha in params.alphas:
        h = layer(h, adjacency, alpha, params.top_k)
    return h


class GnnRetriever:
    """GNN-Ret over a graph store: ``distances(question)`` gives the integrated distances of
    the passages it reached; ``retrieve`` the ``k`` nearest by them."""

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        params: GnnParams | None = None,
        *,
        max_df: int = 50,
    ) -> None:
        self.store = store
        self.embed = embed
        self.params = params or GnnParams()
        self.max_df = max_df

    def semantic(self, question: str, pool: int) -> tuple[np.ndarray, Distances]:
        vector = self.embed([question])[0]
        hits = self.store.vector_search(vector.tolist(), pool)
        return vector, {h.id: 1.0 - h.score for h in hits}

    def distances(self, question: str, k: int = 30) -> Distances:
        vector, h = self.semantic(question, max(self.params.pool, k))
        if not h:
            return {}
        adjacency: dict[str, set[str]] = {}
        for alpha in self.params.alphas:
            sources = [n for n in relevant(h, self.params.top_k) if n not in adjacency]
            self._expand(sources, adjacency, vector, h)
            h = layer(h, adjacency, alpha, self.params.top_k)
        return h

    def _expand(
        self, sources: list[str], adjacency: dict[str, set[str]], vector: np.ndarray, h: Distances
    ) -> None:
        """Neighbours of ``sources`` (one query) and the distances of the new ones (one)."""
        for source in sources:
            adjacency.setdefault(source, set())
        if not sources:
            return
        for edge in self.store.neighbours(sources, self.params.kinds, max_df=self.max_df):
            adjacency[edge.source].add(edge.target)
        new = sorted({t for s in sources for t in adjacency[s]} - h.keys())
        for pid, row in self.store.passage_vectors(new).items():
            stored = np.asarray(row["embedding"], dtype=np.float32)
            norm = float(np.linalg.norm(stored)) or 1.0
            h[pid] = 1.0 - float(np.dot(vector, stored)) / norm

    def retrieve(self, question: str, k: int) -> list[tuple[str, float]]:
        """Passage ids and integrated distances, nearest first."""
        h = self.distances(question, k)
        return [(n, h[n]) for n in relevant(h, k)]


# -- RGNN-Ret ----------------------------------------------------------------------------------

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
                    f"{n + 1}: {texts[p]['text']}" for n, p in enumerate(top) if p in texts
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


# -- training ----------------------------------------------------------------------------------


@dataclass
class Sample:
    """One question's inputs to training: h⁰ over its reached passages, the graph around them,
    and its gold passage ids."""

    h0: Distances
    adjacency: dict[str, set[str]]
    gold: set[str]


def hinge(h: Distances, h0: Distances, gold: set[str], competitors: int, r: float) -> float:
    """Eq. 5: max(0, r + mean distance of the gold - mean of the other ``competitors`` nearest
    by h⁰)."""
    target = [h[n] for n in gold if n in h]
    others = [h[n] for n in relevant(h0, competitors) if n not in gold]
    if not target or not others:
        return 0.0
    return max(0.0, r + sum(target) / len(target) - sum(others) / len(others))


def fit(
    samples: Sequence[Sample],
    params: GnnParams,
    *,
    r: float = 0.01,
    competitors: int = 25,
    rate: float = 1.0,
    iterations: int = 200,
    start: float = 1.0,
) -> tuple[GnnParams, list[float]]:
    """α of a one-layer GNN by gradient descent on the mean hinge loss (Appendix A.1; α starts
    at 1.0, i.e. plain dense retrieval, as in the paper). Returns the parameters and the loss
    of each iteration."""
    if len(params.alphas) != 1:
        raise ConfigurationError("kgp fits one-layer GNNs (the paper's setting)")
    usable = [s for s in samples if s.gold & s.h0.keys()]
    if not usable:
        raise KgpError("no training question has a gold passage among the passages reached")
    alpha, rising = start, 0
    losses: list[float] = []
    # with one layer the messages depend on h⁰ only: computed once per question
    received_by = [messages(s.h0, s.adjacency, params.top_k) for s in usable]
    for _ in range(iterations):
        loss, grad = 0.0, 0.0
        for s, received in zip(usable, received_by, strict=True):
            h = {
                n: alpha * d + (1 - alpha) * received[n] if n in received else d
                for n, d in s.h0.items()
            }
            value = hinge(h, s.h0, s.gold, competitors, r)
            loss += value
            if value > 0:  # Eq. 10/11 for L = 1: dh/dα = h⁰ - m where a message arrived
                target = [n for n in s.gold if n in h]
                others = [n for n in relevant(s.h0, competitors) if n not in s.gold]
                dt = sum(s.h0[n] - received[n] for n in target if n in received) / len(target)
                do = sum(s.h0[n] - received[n] for n in others if n in received) / len(others)
                grad += dt - do
        loss, grad = loss / len(usable), grad / len(usable)
        rising = rising + 1 if losses and loss > losses[-1] else 0
        losses.append(round(loss, 6))
        if abs(grad) < 1e-3 or rising >= 5:
            break
        alpha = min(1.0, max(0.0, alpha - rate * grad))
    fitted = GnnParams((round(alpha, 4),), params.beta, params.top_k, params.pool, params.similar)
    return fitted, losses


def recurrent_loss(
    steps: Sequence[Sample], params: GnnParams, beta: float, *, r: float, competitors: int
) -> float:
    """Eq. 7 for one question: at each step t, the hinge of the integrated distances (Eq. 6)
    of the gold of steps t.. (``Sample.gold``) against the step's other ``competitors``
    nearest."""
    integrated: Distances = {}
    losses = []
    for step in steps:
        h = propagate(step.h0, step.adjacency, params)
        integrated = mix(h, integrated, beta) if integrated else h
        losses.append(hinge(integrated, integrated, step.gold, competitors, r))
    return sum(losses) / len(losses) if losses else 0.0


def fit_beta(
    questions: Sequence[Sequence[Sample]],
    params: GnnParams,
    *,
    r: float = 0.01,
    competitors: int = 10,
    grid: int = 21,
) -> tuple[GnnParams, dict[float, float]]:
    """β of RGNN-Ret on the mean Eq. 7 loss over questions given as their sub-question steps,
    by a search over ``grid`` values in [0, 1] (one parameter: an exhaustive search finds the
    minimum gradient descent would approach; ties go to the paper's 0.9)."""
    if not questions:
        raise KgpError("no training question has sub-questions (MuSiQue's decomposition)")
    losses = {}
    for n in range(grid):
        beta = round(n / (grid - 1), 4)
        losses[beta] = round(
            sum(recurrent_loss(q, params, beta, r=r, competitors=competitors) for q in questions)
            / len(questions),
            6,
        )
    best = min(losses, key=lambda b: (losses[b], abs(b - 0.9)))
    fitted = GnnParams(params.alphas, best, params.top_k, params.pool, params.similar)
    return fitted, losses


def sample_for(gnn: GnnRetriever, question: str, gold: set[str], k: int = 30) -> Sample:
    """What training needs of one question, read from the graph as GNN-Ret reads it."""
    vector, h0 = gnn.semantic(question, max(gnn.params.pool, k))
    adjacency: dict[str, set[str]] = {}
    gnn._expand(relevant(h0, gnn.params.top_k), adjacency, vector, h0)
    return Sample(h0, adjacency, gold)


def describe(result: RecurrentResult) -> dict[str, Any]:
    return {"steps": [asdict(s) for s in result.steps], "stopped": result.stopped}

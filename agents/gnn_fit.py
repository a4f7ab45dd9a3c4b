"""Fitting GNN-Ret's α (and RGNN-Ret's β): gradient descent on the hinge objective (Eq. 5/7)
over questions with gold passages, learning rate 1, stopping when the gradient is below 0.001 or
the loss rose five times in a row (the paper's Appendix A)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from kgp.agents.gnn import Distances, GnnParams, GnnRetriever, messages, propagate, relevant
from kgp.agents.rgnn import mix
from kgp.errors import ConfigurationError, KgpError
from kgp.settings import DEFAULT_K


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
    fitted = replace(params, alphas=(round(alpha, 4),))
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
    fitted = replace(params, beta=best)
    return fitted, losses


def sample_for(gnn: GnnRetriever, question: str, gold: set[str], k: int = DEFAULT_K) -> Sample:
    """What training needs of one question, read from the graph as GNN-Ret reads it."""
    vector, h0 = gnn.semantic(question, max(gnn.params.pool, k))
    adjacency: dict[str, set[str]] = {}
    gnn._expand(relevant(h0, gnn.params.top_k), adjacency, vector, h0)
    return Sample(h0, adjacency, gold)

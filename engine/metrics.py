"""Metrics of one question: retrieval (recall@k, all-supporting@k, hit@k, precision@k, reciprocal
rank, Struct-EM) and answers (SQuAD's exact match and token F1).

A question's gold is a list of supporting units, each the passage ids that count for it: one id
for a gold paragraph, every passage of a page for a page. A unit is found when any of its ids is
retrieved. Structures (pages and tables a question asks for) must be retrieved whole."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

Units = Sequence[Sequence[str]]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def found(units: Units, retrieved: Sequence[str], k: int) -> int:
    top = set(retrieved[:k])
    return sum(any(pid in top for pid in unit) for unit in units)


def recall(units: Units, retrieved: Sequence[str], k: int) -> float:
    return found(units, retrieved, k) / len(units) if units else 0.0


def all_found(units: Units, retrieved: Sequence[str], k: int) -> float:
    return float(bool(units) and found(units, retrieved, k) == len(units))


def hit(units: Units, retrieved: Sequence[str], k: int) -> float:
    """1.0 when something supporting is among the first ``k`` (k = 1: the answer is first)."""
    return float(found(units, retrieved, k) > 0)


def precision(units: Units, retrieved: Sequence[str], k: int) -> float:
    relevant = {pid for unit in units for pid in unit}
    return len(relevant & set(retrieved[:k])) / k


def reciprocal_rank(units: Units, retrieved: Sequence[str]) -> float:
    relevant = {pid for unit in units for pid in unit}
    for rank, pid in enumerate(retrieved, start=1):
        if pid in relevant:
            return 1.0 / rank
    return 0.0


def struct_exact(structures: Units, retrieved: Sequence[str], k: int) -> float:
    """Struct-EM: every page and table the question names is in the top ``k`` whole (one not in
    the graph is never found)."""
    top = set(retrieved[:k])
    return float(all(unit and set(unit) <= top for unit in structures))


def normalise_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION))
    return " ".join(text.split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    guess = normalise_answer(prediction)
    return float(any(guess == normalise_answer(a) for a in answers))


def token_f1(prediction: str, answers: Sequence[str]) -> float:
    """SQuAD's token F1, the best over the accepted answers."""
    guess = normalise_answer(prediction).split()
    best = 0.0
    for answer in answers:
        truth = normalise_answer(answer).split()
        common = sum((Counter(guess) & Counter(truth)).values())
        if common:
            p, r = common / len(guess), common / len(truth)
            best = max(best, 2 * p * r / (p + r))
    return best

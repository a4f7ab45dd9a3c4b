"""The default final order, ``learned``: every retrieved passage scored on its own by a logistic
model over the signals kgp already has for it, so the list reads top-down and two passages tie
only when everything known about them is equal.

The signals (:data:`FEATURES`) are the passage's cosine with the question and its gap to the
best one, the ``linked`` order's pair score and whether the passage names or is named by
another's title (with that partner's cosine, title and terms), how much of the question's
terms it holds (weighted by how rare each term is among the retrieved passages), how much of its
document's title the question names, and whether it was a seed. The weights are fitted on the
train sets by ``kgp train order`` (:mod:`kgp.training.order`) and ship as ``kgp-order``
(:mod:`kgp.model`); a passage's score is the model's probability that it is evidence.
docs/decisions/0004-the-learned-order.md has the ablations behind the signals."""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kgp.agents.orderings import Evidence, Ranked, pair_scores, partners
from kgp.errors import ModelMissingError
from kgp.text import STOPWORDS, stems, terms, words

FEATURES = (
    "cosine",
    "gap",
    "pair",
    "linked",
    "partner_cosine",
    "terms",
    "title",
    "seed",
    "partner_title",
    "partner_terms",
    "partners",
)
WEIGHTS_FILE = "order.json"
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")  # "Film (1999)" names the film as "Film"
STEMMED_TEXTS = 16_384  # passages' stem sets kept (questions meet the same passages again)


@dataclass(frozen=True, slots=True)
class LearnedOrder:
    """A logistic model over :data:`FEATURES`: standardised by ``mean`` and ``scale``, then
    ``weights`` and ``bias``. Calling it orders an :class:`Evidence`."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def logits(self, matrix: np.ndarray) -> np.ndarray:
        standard = (matrix - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(standard @ np.asarray(self.weights) + self.bias, dtype=np.float64)

    def __call__(self, found: Evidence) -> Ranked:
        """Passages by the model's probability that they are evidence; equal probabilities go
        to the passage more similar to the question; passages without a vector go last."""
        ids, matrix = features(found)
        logits = self.logits(matrix) if ids else np.zeros(0)
        order = sorted(range(len(ids)), key=lambda i: (-logits[i], -matrix[i, 0], ids[i]))
        ranked = [(ids[i], 1.0 / (1.0 + math.exp(-float(logits[i])))) for i in order]
        rest = [pid for pid in found.walk.ids() if pid not in found.cosine]
        return ranked + [(pid, 0.0) for pid in rest]

    def to_json(self) -> str:
        fields = {"mean": self.mean, "scale": self.scale, "weights": self.weights}
        body = {name: dict(zip(FEATURES, values, strict=True)) for name, values in fields.items()}
        return json.dumps({"features": list(FEATURES), **body, "bias": self.bias}, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> LearnedOrder:
        data = json.loads(text)
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"features {data['features']} are not kgp's {list(FEATURES)}")

        def values(name: str) -> tuple[float, ...]:
            return tuple(float(data[name][f]) for f in FEATURES)

        scale = values("scale")
        if any(not math.isfinite(s) or s <= 0 for s in scale):
            raise ValueError("a scale is not a positive number")
        return cls(values("mean"), scale, values("weights"), float(data["bias"]))


@functools.cache
def shipped_order(folder: Path | None = None) -> LearnedOrder:
    """The shipped ``kgp-order`` weights (or those in ``folder``), checked against their card
    once per process; a missing or damaged model is a :class:`ModelMissingError`."""
    from kgp.model import ORDER_MODEL, shipped_model

    model = shipped_model(verify=True, folder=folder, name=ORDER_MODEL)
    try:
        return LearnedOrder.from_json((model.path / WEIGHTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelMissingError(
            f"kgp's shipped model {ORDER_MODEL} at {model.path} has unreadable weights ({exc}); "
            "reinstall kgp (pip install --force-reinstall kgp)"
        ) from None


def learned(found: Evidence) -> Ranked:
    """The order by the shipped weights (see the module's docstring)."""
    return shipped_order()(found)


def features(found: Evidence) -> tuple[list[str], np.ndarray]:
    """The passages with a cosine, in visiting order, and their :data:`FEATURES` (a row each)."""
    cosine = found.cosine
    ids = [pid for pid in found.walk.ids() if pid in cosine]
    if not ids:
        return [], np.zeros((0, len(FEATURES)))
    linked_to = partners(found)
    pairs = pair_scores(found, linked_to=linked_to)
    top = max(cosine[pid] for pid in ids)
    coverage = _term_coverage(found.question, {pid: found.texts.get(pid, "") for pid in ids})
    asked = set(words(found.question))
    named = {pid: _title_named(found.titles.get(pid, ""), asked) for pid in ids}
    rows = []
    for pid in ids:
        others = linked_to.get(pid, ())
        rows.append(
            [
                cosine[pid],
                cosine[pid] - top,
                pairs[pid],
                float(bool(others)),
                max((cosine[o] for o in others), default=0.0),
                coverage[pid],
                named[pid],
                float(found.walk.visits[pid].hop == 0),
                max((named[o] for o in others), default=0.0),
                max((coverage[o] for o in others), default=0.0),
                len(others) / 5,
            ]
        )
    return ids, np.asarray(rows, dtype=np.float64)


def _term_coverage(question: str, texts: Mapping[str, str]) -> dict[str, float]:
    """The share of the question's term stems each text holds, each stem weighted by how rare
    it is among the texts (log(1 + n / df)) against the weight it would have in one text."""
    asked = set(stems(terms(question)))
    held = {pid: _stems_of(text) & asked for pid, text in texts.items()}
    if not asked:
        return dict.fromkeys(texts, 0.0)
    count = len(texts)
    df: dict[str, int] = {}
    for stems_held in held.values():
        for stem in stems_held:
            df[stem] = df.get(stem, 0) + 1
    whole = len(asked) * math.log(1 + count)
    return {
        pid: sum(math.log(1 + count / df[s]) for s in stems_held) / whole
        for pid, stems_held in held.items()
    }


@functools.lru_cache(maxsize=STEMMED_TEXTS)
def _stems_of(text: str) -> frozenset[str]:
    return frozenset(stems(set(terms(text))))


def _title_named(title: str, asked: set[str]) -> float:
    """The share of a document title's words (without a trailing qualifier and stop words)
    that the question holds."""
    own = [w for w in words(_QUALIFIER.sub("", title)) if w not in STOPWORDS]
    return sum(w in asked for w in own) / len(own) if own else 0.0

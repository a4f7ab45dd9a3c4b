"""Scorers: Eq. (1) of the KGP paper, s = argmax φ(g(X_v), f(q ‖ X_path)), batched per hop."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from kgp.agents.traversal import Path
from kgp.ingest.keywords import terms


class EmbeddingScorer:
    """The sentence encoder zero-shot: f encodes the question followed by the path's passages,
    g is the candidate's stored embedding, φ the inner product (cosine: both are normalised).
    One encoder call per hop (all paths of the hop in one batch)."""

    name = "embedding"

    def __init__(
        self,
        embed: Callable[[list[str]], np.ndarray],
        texts: Callable[[Sequence[str]], Mapping[str, str]],
        vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]],
        *,
        max_path_passages: int = 3,
    ) -> None:
        self.embed = embed
        self.texts = texts
        self.vectors = vectors
        self.max_path_passages = max_path_passages

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        needed = {pid for path in paths for pid in path[-self.max_path_passages :]}
        text = self.texts(sorted(needed))
        queries = [
            " ".join([question, *(text.get(pid, "") for pid in path[-self.max_path_passages :])])
            for path in paths
        ]
        encoded = self.embed(queries)
        pool = self.vectors(sorted({c for row in candidates for c in row}))
        out: list[list[float]] = []
        for i, row in enumerate(candidates):
            out.append(
                [float(np.dot(encoded[i], pool[c])) if c in pool else float("-inf") for c in row]
            )
        return out


class TfidfScorer:
    """KGP without a language model: f and g are TF-IDF vectors of the question with the path's
    passages and of each candidate, φ their cosine. IDF is computed over the texts of the hop
    (every path and candidate), so no corpus statistics are needed; one pass per hop."""

    name = "tfidf"

    def __init__(
        self, texts: Callable[[Sequence[str]], Mapping[str, str]], *, max_path_passages: int = 3
    ) -> None:
        self.texts = texts
        self.max_path_passages = max_path_passages

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        ids = {pid for path in paths for pid in path[-self.max_path_passages :]}
        ids |= {c for row in candidates for c in row}
        text = self.texts(sorted(ids))
        bags = {pid: Counter(terms(text.get(pid, ""))) for pid in ids}
        queries = [
            Counter(terms(question))
            + sum((bags[p] for p in path[-self.max_path_passages :]), Counter())
            for path in paths
        ]
        df: Counter[str] = Counter()
        for bag in [*bags.values(), *queries]:
            df.update(bag.keys())
        total = len(bags) + len(queries)

        def weigh(bag: Counter[str]) -> dict[str, float]:
            vec = {t: n * math.log((1 + total) / (1 + df[t])) + 0.0 for t, n in bag.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            return {t: v / norm for t, v in vec.items()}

        weighted = {pid: weigh(bag) for pid, bag in bags.items()}
        out: list[list[float]] = []
        for query, row in zip(queries, candidates, strict=True):
            q = weigh(query)
            out.append([sum(w * weighted[c].get(t, 0.0) for t, w in q.items()) for c in row])
        return out

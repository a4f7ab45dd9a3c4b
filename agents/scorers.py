"""Scorers: Eq. (1) of the KGP paper, s = argmax φ(g(X_v), f(q ‖ X_path)), batched per hop."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from kgp.agents.traversal import Path


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

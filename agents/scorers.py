"""Scorers: Eq. (1) of the KGP paper, s = argmax φ(g(X_v), f(q ‖ X_path)), batched per hop."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from kgp.agents.passages import SharedCache
from kgp.agents.traversal import Path, Score
from kgp.text import terms

if TYPE_CHECKING:
    from kgp.agents.context import Services


class EmbeddingScorer:
    """The sentence encoder zero-shot: g is the candidate's stored embedding, φ the inner product
    (cosine: both are normalised), f the question with the path's passages. With
    ``encode_paths`` f encodes the concatenated text (one encoder call per hop, all paths in one
    batch); without, f composes vectors: the question's embedding plus the mean of the path's
    stored passage embeddings, normalised, so a hop costs no encoder call at all."""

    name = "embedding"

    def __init__(
        self,
        embed: Callable[[list[str]], np.ndarray],
        texts: Callable[[Sequence[str]], Mapping[str, str]],
        vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]],
        *,
        max_path_passages: int = 3,
        encode_paths: bool = False,
    ) -> None:
        self.embed = embed
        self.texts = texts
        self.vectors = vectors
        self.max_path_passages = max_path_passages
        self.encode_paths = encode_paths

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        encoded = (
            self._encode(question, paths) if self.encode_paths else self._compose(question, paths)
        )
        pool = self.vectors(sorted({c for row in candidates for c in row}))
        return inner_products(encoded, candidates, pool)

    def _compose(self, question: str, paths: Sequence[Path]) -> np.ndarray:
        query = self.embed([question])[0]
        stored = self.vectors(sorted({pid for path in paths for pid in path}))
        rows = []
        for path in paths:
            held = [stored[p] for p in path[-self.max_path_passages :] if p in stored]
            row = query + np.mean(held, axis=0) if held else query
            rows.append(row / (np.linalg.norm(row) or 1.0))
        return np.stack(rows)

    def _encode(self, question: str, paths: Sequence[Path]) -> np.ndarray:
        return self.embed(path_queries(question, paths, self.texts, self.max_path_passages))


class MdrScorer:
    """A fine-tuned bi-encoder (MDR-style): f encodes the question followed by the path's
    passages, g is the candidate by the same model: its stored vector when the model is the
    graph's encoder (``vectors``), else encoded once and cached by id; φ the inner product.
    One encoder call for the paths and at most one for unseen candidates per hop."""

    name = "mdr"

    def __init__(
        self,
        encode: Callable[[list[str]], np.ndarray],
        texts: Callable[[Sequence[str]], Mapping[str, str]],
        *,
        vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]] | None = None,
        max_path_passages: int = 3,
        cache_size: int = 100_000,
        scope: Callable[[], Hashable] = lambda: None,
    ) -> None:
        self.encode = encode
        self.texts = texts
        self.vectors = vectors
        self.max_path_passages = max_path_passages
        # g by caller (scope) and passage id
        self._g: SharedCache[str, np.ndarray] = SharedCache(cache_size, scope)

    def forget(self) -> None:
        self._g.clear()

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        encoded = self.encode(path_queries(question, paths, self.texts, self.max_path_passages))
        needed = {c for row in candidates for c in row}
        if self.vectors is not None:
            return inner_products(encoded, candidates, self.vectors(sorted(needed)))
        held, generation = self._g.held(needed)
        wanted = sorted(needed - held.keys())
        if wanted:
            text = self.texts(wanted)
            found = [c for c in wanted if c in text]
            fresh = dict(zip(found, self.encode([text[c] for c in found]), strict=True))
            held.update(fresh)
            self._g.keep(fresh, generation)
        return inner_products(encoded, candidates, held)


class GeneratedEvidenceScorer:
    """``t5`` and ``llm``: a model writes the evidence each path still needs (Listing 1 of the
    paper); f is that text embedded by the graph's encoder, g the candidate's stored embedding,
    φ the inner product. One generation call and one encoder call per hop."""

    def __init__(
        self,
        name: str,
        generator: Any,
        embed: Callable[[list[str]], np.ndarray],
        texts: Callable[[Sequence[str]], Mapping[str, str]],
        vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]],
        *,
        max_path_passages: int = 3,
    ) -> None:
        self.name = name
        self.generator = generator
        self.embed = embed
        self.texts = texts
        self.vectors = vectors
        self.max_path_passages = max_path_passages

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        text = self.texts(sorted({p for path in paths for p in path}))
        evidence = [[text.get(p, "") for p in path[-self.max_path_passages :]] for path in paths]
        written = self.generator.next_evidence(question, evidence)
        # an empty generation falls back to the question, so the hop still ranks sensibly
        encoded = self.embed([w or question for w in written])
        pool = self.vectors(sorted({c for row in candidates for c in row}))
        return inner_products(encoded, candidates, pool)


def path_queries(
    question: str,
    paths: Sequence[Path],
    texts: Callable[[Sequence[str]], Mapping[str, str]],
    keep: int,
) -> list[str]:
    """f's input for each path: the question followed by the path's last ``keep`` passages."""
    text = texts(sorted({pid for path in paths for pid in path[-keep:]}))
    return [" ".join([question, *(text.get(pid, "") for pid in path[-keep:])]) for path in paths]


def inner_products(
    encoded: np.ndarray, candidates: Sequence[Sequence[str]], pool: Mapping[str, np.ndarray]
) -> list[list[float]]:
    """φ for each path's candidates; a candidate without a vector ranks last."""
    return [
        [float(np.dot(encoded[i], pool[c])) if c in pool else float("-inf") for c in row]
        for i, row in enumerate(candidates)
    ]


class TfidfScorer:
    """KGP without a language model: f and g are TF-IDF vectors of the question with the path's
    passages and of each candidate, φ their cosine. IDF is computed over the texts of the hop
    (every path and candidate), so no corpus statistics are needed; one pass per hop."""

    name = "tfidf"

    def __init__(
        self,
        texts: Callable[[Sequence[str]], Mapping[str, str]],
        *,
        max_path_passages: int = 3,
        cache_size: int = 200_000,
        scope: Callable[[], Hashable] = lambda: None,
    ) -> None:
        self.texts = texts
        self.max_path_passages = max_path_passages
        # term counts by caller (scope) and passage id
        self._bags: SharedCache[str, Bag] = SharedCache(cache_size, scope)

    def forget(self) -> None:
        self._bags.clear()

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        ids = {pid for path in paths for pid in path[-self.max_path_passages :]}
        ids |= {c for row in candidates for c in row}
        bags, generation = self._bags.held(ids)
        missing = sorted(ids - bags.keys())
        if missing:
            text = self.texts(missing)
            fresh = {pid: Bag.of(terms(text.get(pid, ""))) for pid in missing}
            bags.update(fresh)
            self._bags.keep(fresh, generation)
        asked = Bag.of(terms(question))
        queries = [
            Bag.joined([asked, *(bags[p] for p in path[-self.max_path_passages :])])
            for path in paths
        ]
        return tfidf_cosines(queries, [[bags[c] for c in row] for row in candidates])


class Bag:
    """A text's terms with their counts, in the order they first occur, as arrays: each term by
    its hash (what tells terms apart: two of a process's strings share a 64-bit hash about
    never), so scoring a hop reads no term's characters."""

    __slots__ = ("counts", "keys")

    def __init__(self, keys: np.ndarray, counts: np.ndarray) -> None:
        self.keys, self.counts = keys, counts

    @classmethod
    def of(cls, items: Sequence[str]) -> Bag:
        counted = Counter(items)
        size = len(counted)
        return cls(
            np.fromiter(map(hash, counted), np.int64, size),
            np.fromiter(counted.values(), np.float64, size),
        )

    @classmethod
    def joined(cls, bags: Sequence[Bag]) -> Bag:
        """The bags' terms counted together, in the order they first occur."""
        keys = np.concatenate([b.keys for b in bags])
        unique, first, where = np.unique(keys, return_index=True, return_inverse=True)
        counts = np.bincount(where, weights=np.concatenate([b.counts for b in bags]))
        order = np.argsort(first, kind="stable")
        return cls(unique[order], counts[order])


def tfidf_cosines(queries: Sequence[Bag], candidates: Sequence[Sequence[Bag]]) -> list[list[float]]:
    """Cosine of TF-IDF vectors: each query against its own candidates. IDF over every bag
    given (queries and candidates, a bag given twice counted once), so no corpus statistics
    are needed. Every sum runs over a bag's own terms in its own order: the same scores, to the
    last bit, every run."""
    distinct = list({id(b): b for row in candidates for b in row}.values())
    bags = [*distinct, *queries]
    sizes = np.fromiter((len(b.keys) for b in bags), np.int64, len(bags))
    if not sizes.sum():
        return [[0.0] * len(row) for row in candidates]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    _, where = np.unique(np.concatenate([b.keys for b in bags]), return_inverse=True)
    idf = np.log((1 + len(bags)) / (1 + np.bincount(where)))  # (a bag holds a term once)
    weights = np.concatenate([b.counts for b in bags]) * idf[where]
    norms = np.ones(len(bags))  # (an empty bag's: its scores are 0)
    filled = sizes > 0  # (reduceat's ranges run from one start to the next: empty bags left out)
    norms[filled] = np.sqrt(np.add.reduceat(weights * weights, starts[filled]))
    norms[norms == 0.0] = 1.0
    slot = {id(b): n for n, b in enumerate(distinct)}
    dense = np.zeros(len(idf))
    out: list[list[float]] = []
    for q, row in enumerate(candidates, start=len(distinct)):
        mine = slice(starts[q], starts[q] + sizes[q])
        dense[where[mine]] = weights[mine]
        picked = [slot[id(c)] for c in row]
        scores = [0.0] * len(row)
        for i, n in enumerate(picked):
            if sizes[n]:
                its = slice(starts[n], starts[n] + sizes[n])
                scores[i] = float(np.dot(weights[its], dense[where[its]])) / (norms[n] * norms[q])
        dense[where[mine]] = 0.0
        out.append(scores)
    return out


class SumScorer:
    """Several scorers at once: φ is the sum of their scores (``hybrid``: the sentence
    encoder's cosine plus the TF-IDF cosine, both in [-1, 1])."""

    def __init__(self, name: str, parts: Sequence[Score]) -> None:
        self.name = name
        self.parts = list(parts)

    def __call__(
        self, question: str, paths: Sequence[Path], candidates: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        tables = [part(question, paths, candidates) for part in self.parts]
        return [
            [sum(table[i][j] for table in tables) for j in range(len(row))]
            for i, row in enumerate(candidates)
        ]


# Factories registered in kgp.names.SCORERS: each builds its scorer from the retriever's services.


def tfidf(services: Services) -> Score:
    return TfidfScorer(services.passages.texts, scope=services.passages.scope)


def embedding(services: Services) -> Score:
    return EmbeddingScorer(services.embed, services.passages.texts, services.passages.vectors)


def embedding_text(services: Services) -> Score:
    return EmbeddingScorer(
        services.embed, services.passages.texts, services.passages.vectors, encode_paths=True
    )


def hybrid(services: Services) -> Score:
    return SumScorer("hybrid", [embedding(services), tfidf(services)])

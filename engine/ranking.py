"""BM25, as pure functions over counts (the bm25s shape: one function per scoring formula) and
one small index over a pool of texts.

Every lexical ranker of kgp scores with these: the FalkorDB store's full-text ranking
(``binary``: the index gives matches, not term frequencies) and the training pairs' hard
negatives (``Bm25``: Okapi BM25 over the pool's ``kgp.text.terms``)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from kgp.text import terms

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", contravariant=True)


class Lengths(Protocol[K_contra]):
    """Passage lengths in terms, by key: a mapping, or a list by position."""

    def __getitem__(self, key: K_contra, /) -> int: ...


def idf(total: int, df: int) -> float:
    """A term's inverse document frequency when ``df`` of ``total`` passages hold it, with
    Lucene's ``1 +`` so that it is never negative."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def okapi(
    postings: Iterable[tuple[int, Iterable[tuple[K, int]]]],
    *,
    total: int,
    lengths: Lengths[K],
    average: float,
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[K, float]:
    """Okapi BM25: for each query term, its document frequency and its postings (passage,
    term frequency); ``lengths[passage]`` in terms, ``average`` over all ``total`` passages.
    The passages matching any term, with their scores, in the order first matched."""
    scores: dict[K, float] = {}
    for df, posting in postings:
        weight = idf(total, df)
        for key, tf in posting:
            norm = tf + k1 * (1 - b + b * lengths[key] / average)
            scores[key] = scores.get(key, 0.0) + weight * tf * (k1 + 1) / norm
    return scores


def binary(postings: Iterable[tuple[int, Iterable[K]]], *, total: int) -> dict[K, float]:
    """BM25 with binary term frequency and no length normalisation (Okapi with tf = 1, b = 0):
    the sum of the matched terms' ``idf``. For each query term, its document frequency and the
    passages it matches (possibly fewer than ``df``: a capped list)."""
    scores: dict[K, float] = {}
    for df, keys in postings:
        weight = idf(total, df)
        for key in keys:
            scores[key] = scores.get(key, 0.0) + weight
    return scores


def top(scores: Mapping[K, float], limit: int | None = None) -> list[tuple[K, float]]:
    """The ``limit`` best ``(key, score)`` (all without one), ties by key."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


class Bm25:
    """Okapi BM25 over a pool of texts (``kgp.text.terms``), e.g. for hard negatives."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.texts = list(texts)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths: list[int] = []
        for n, text in enumerate(self.texts):
            bag = Counter(terms(text))
            lengths.append(sum(bag.values()))
            for term, tf in bag.items():
                self.postings[term].append((n, tf))
        self.lengths = lengths
        self.average = sum(lengths) / max(len(lengths), 1) or 1.0
        self.k1, self.b = k1, b

    def scores(self, query: str) -> dict[int, float]:
        """The texts matching any term of ``query`` (by position in the pool), with scores."""
        matched = [self.postings.get(term, []) for term in set(terms(query))]
        return okapi(
            ((len(posting), posting) for posting in matched),
            total=len(self.texts),
            lengths=self.lengths,
            average=self.average,
            k1=self.k1,
            b=self.b,
        )

    def top(self, query: str, limit: int) -> list[int]:
        """The positions of the ``limit`` best texts for ``query``, ties by position."""
        return [n for n, _ in top(self.scores(query), limit)]

"""Exact similarity scores, and the k best of them, for the k-NN linker (:mod:`kgp.ingest.edges`):
scores are cosines computed in float64 from float32 vectors and rounded to six decimals, so the
same pair gets the same score however it was found; pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from kgp.ranking import top

SCORE_DECIMALS = 6
ROUGH = 1e-4  # a float32 product of unit vectors (384 dimensions) is within this of the exact
Ranked = list[tuple[str, float]]


def merge(current: Iterable[tuple[str, float]], new: Mapping[str, float], k: int) -> Ranked:
    """The k best of a passage's current neighbours and new candidates; pure."""
    return top({**dict(current), **new}, k)


def contenders(candidates: Mapping[str, float], k: int, margin: float) -> list[str]:
    """The candidates that can be among the k best once scored exactly: those an approximate
    score (the vector index's) ranks within ``margin`` of its k-th; pure."""
    if len(candidates) <= k:
        return list(candidates)
    order = top(candidates)
    bar = order[k - 1][1] - margin
    return [pid for pid, sim in order if sim >= bar]


def exact_scores(source: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Cosines of one vector (or the rows of a matrix) against the rows of ``others`` (float32
    or float64 arrays: taken in float64). Stored vectors are float16 values, whose lengths miss
    1 by up to about 3e-4: a plain product would stray from the cosine the indexes compute by
    more than ROUGH."""
    product: np.ndarray = _unit(others) @ _unit(source).T
    return np.round(product, SCORE_DECIMALS)


def _unit(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` (a vector or the rows of a matrix) in float64, each scaled to length 1."""
    out = vectors.astype(np.float64, copy=True)
    norms = np.linalg.norm(out, axis=-1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def best_of(scores: np.ndarray, ids: Sequence[str], k: int, skip: int | None = None) -> Ranked:
    """The k best of one row of exact scores against ``ids`` (``skip``: the row's own index),
    ties at the k-th broken by id; pure."""
    row = scores.astype(np.float64, copy=True)
    if skip is not None:
        row[skip] = -np.inf
    if len(row) > k:
        kth = np.partition(row, len(row) - k)[len(row) - k]
        chosen = np.nonzero(row >= kth)[0]
    else:
        chosen = np.arange(len(row))
    pairs = {ids[int(j)]: float(row[j]) for j in chosen if np.isfinite(row[j])}
    return top(pairs, k)


def offered(
    rows: np.ndarray, others: np.ndarray, bars: Sequence[float], skips: Sequence[int | None], k: int
) -> list[np.ndarray]:
    """For each row, the indices of ``others`` that can be among its k best by exact score and
    reach its bar: chosen by float32 products (twice as fast as the exact float64 ones, and within
    ROUGH of them), to be scored exactly; pure."""
    rough = _unit(rows).astype(np.float32) @ _unit(others).astype(np.float32).T
    for n, skip in enumerate(skips):
        if skip is not None:
            rough[n, skip] = -np.inf
    width = rough.shape[1]
    kth = np.partition(rough, width - k, axis=1)[:, width - k] if width > k else rough.min(axis=1)
    # the k-th of the rough scores is within ROUGH of the exact k-th: every exact top-k score
    # is within 2 ROUGH above it
    floor = np.maximum(np.asarray(bars, dtype=np.float32), kth) - 2 * ROUGH
    chosen = (rough >= floor[:, None]) & np.isfinite(rough)
    return [np.nonzero(row)[0] for row in chosen]

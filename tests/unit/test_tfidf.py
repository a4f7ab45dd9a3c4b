"""The TF-IDF cosine on term arrays against the formula written out term by term."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st
from kgp.agents.scorers import Bag, tfidf_cosines

WORDS = st.lists(st.sampled_from(["rain", "station", "farm", "pump", "cedar", "hollow", "lead"]))


def written_out(
    queries: list[Counter[str]], candidates: list[list[Counter[str]]]
) -> list[list[float]]:
    """TF-IDF cosine as its definition reads: IDF log((1 + N) / (1 + df)) over the distinct
    bags given, a zero vector's norm taken as 1."""
    distinct = {id(b): b for row in candidates for b in row}
    bags = [*distinct.values(), *queries]
    df = Counter(t for bag in bags for t in bag)
    idf = {t: math.log((1 + len(bags)) / (1 + n)) for t, n in df.items()}

    def vector(bag: Counter[str]) -> tuple[dict[str, float], float]:
        weights = {t: n * idf[t] for t, n in bag.items()}
        return weights, math.sqrt(sum(w * w for w in weights.values())) or 1.0

    out = []
    for query, row in zip(queries, candidates, strict=True):
        q, q_norm = vector(query)
        scores = []
        for bag in row:
            c, c_norm = vector(bag)
            scores.append(sum(w * q.get(t, 0.0) for t, w in c.items()) / (c_norm * q_norm))
        out.append(scores)
    return out


@given(
    st.lists(WORDS, min_size=1, max_size=4),
    st.lists(WORDS, max_size=6),
    st.data(),
)
def test_the_cosines_are_the_formulas_to_rounding(
    queries: list[list[str]], texts: list[list[str]], data: st.DataObject
) -> None:
    counters = [Counter(t) for t in texts]
    bags = [Bag.of(t) for t in texts]
    rows = [  # each query's candidates: some of the texts, a text possibly in several rows
        data.draw(st.lists(st.integers(0, len(texts) - 1), max_size=5)) if texts else []
        for _ in queries
    ]
    got = tfidf_cosines([Bag.of(q) for q in queries], [[bags[i] for i in row] for row in rows])
    want = written_out([Counter(q) for q in queries], [[counters[i] for i in row] for row in rows])
    assert [len(row) for row in got] == [len(row) for row in want]
    for mine, theirs in zip(got, want, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_a_bag_without_terms_after_the_others_leaves_their_norms_whole() -> None:
    rain, station = Bag.of(["rain"]), Bag.of(["rain", "station"])
    got = tfidf_cosines([station, Bag.of([])], [[rain], []])
    want = written_out([Counter(["rain", "station"]), Counter()], [[Counter(["rain"])], []])
    assert math.isclose(got[0][0], want[0][0], rel_tol=1e-12) and got[0][0] < 1.0


def test_a_joined_bag_counts_every_part_in_first_seen_order() -> None:
    joined = Bag.joined([Bag.of(["pump", "rain"]), Bag.of(["rain", "farm", "rain"])])
    assert joined.keys.tolist() == [hash("pump"), hash("rain"), hash("farm")]
    assert joined.counts.tolist() == [1.0, 3.0, 1.0]


SCORED = """
from kgp.agents.scorers import Bag, tfidf_cosines
texts = ["Cedar Hollow recorded the most rain of any station this spring",
         "Cedar Hollow station serves the northern farms and their pumps",
         "Birchfield ran its pumps through the dry weeks", "other words entirely"]
bags = [Bag.of(t.lower().split()) for t in texts]
asked = Bag.of("which station recorded the most rain".split())
print(repr(tfidf_cosines([asked, Bag.joined([asked, bags[0]])], [bags, bags[1:]])))
"""


def test_scores_are_the_same_to_the_last_bit_whatever_the_processs_string_hashes() -> None:
    runs = {
        subprocess.run(
            [sys.executable, "-c", SCORED],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(runs) == 1 and "0.0" in next(iter(runs))

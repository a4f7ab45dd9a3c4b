"""The final orders: ``linked`` against a direct implementation (every pair of passages ranked,
then flattened), the title links it reads, and the plain orders it generalises."""

from __future__ import annotations

import itertools

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kgp.agents.orderings import LINK_BONUS, Evidence, by_question, linked
from kgp.agents.traversal import Traversal, Visit
from kgp.ingest.keywords import Link, title_links


def walk_of(ids: list[str]) -> Traversal:
    return Traversal({pid: Visit(pid, 0, 0.0, (pid,), n) for n, pid in enumerate(ids)})


def flattened(cosine: dict[str, float], links: frozenset[Link], bonus: float) -> list[str]:
    """Every pair scored by the sum of its cosines (+ ``bonus`` when linked either way),
    best first; each pair adds its passages not yet taken, the more similar one first."""
    ids = list(cosine)
    pairs = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            linked_pair = (a, b) in links or (b, a) in links
            pairs.append((cosine[a] + cosine[b] + (bonus if linked_pair else 0.0), a, b))
    out: list[str] = []
    for _, a, b in sorted(pairs, key=lambda p: -p[0]):
        for pid in sorted((a, b), key=lambda x: -cosine[x]):
            if pid not in out:
                out.append(pid)
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=2, max_value=12).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.floats(min_value=-1, max_value=1, allow_nan=False),
                min_size=n,
                max_size=n,
                unique=True,
            ),
            st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n),
        )
    )
)
def test_linked_is_the_best_pair_order(case: tuple[list[float], set[tuple[int, int]]]) -> None:
    scores, raw_links = case
    ids = [f"p{i}" for i in range(len(scores))]
    cosine = dict(zip(ids, scores, strict=True))
    links = frozenset((ids[a], ids[b]) for a, b in raw_links if a != b)
    sums = sorted(
        cosine[a] + cosine[b] + (LINK_BONUS if (a, b) in links or (b, a) in links else 0.0)
        for i, a in enumerate(ids)
        for b in ids[i + 1 :]
    )
    assume(all(high - low > 1e-9 for low, high in itertools.pairwise(sums)))
    ranked = linked(Evidence(walk_of(ids), cosine, links))
    assert [pid for pid, _ in ranked] == flattened(cosine, links, LINK_BONUS)
    values = [score for _, score in ranked]
    assert values == sorted(values, reverse=True), "the score is the one the order is by"


def test_without_links_it_is_the_order_by_similarity() -> None:
    cosine = {"a": 0.2, "b": 0.9, "c": 0.5, "d": -0.1}
    walk = walk_of([*cosine, "no-vector"])
    evidence = Evidence(walk, cosine)
    assert [p for p, _ in linked(evidence)] == [p for p, _ in by_question(evidence)]
    assert linked(evidence)[-1] == ("no-vector", 0.0), "a passage without a vector goes last"
    assert linked(Evidence(walk_of(["only"]), {"only": 0.4})) == [("only", 0.4)]


def test_a_bridge_comes_up_beside_the_passage_that_names_it() -> None:
    """ "Where was the director of The Egg born?": the film's page names its director; the
    director's page is less similar to the question than a third film's, until linked."""
    cosine = {"film": 0.80, "other-film": 0.55, "director": 0.45, "actor": 0.30}
    links = frozenset({("film", "director"), ("film", "actor")})
    ranked = [pid for pid, _ in linked(Evidence(walk_of(list(cosine)), cosine, links))]
    assert ranked[:2] == ["film", "director"]
    assert ranked.index("actor") > ranked.index("other-film"), "a link alone does not lift all"


def test_title_links() -> None:
    texts = {
        "egg#0": "The Egg is a 1971 film directed by Ingmar Bergman in Faro.",
        "egg#1": "The Egg was filmed in Faro in the spring.",
        "bergman#0": "Ingmar Bergman was a Swedish director born in Uppsala.",
        "uppsala#0": "Uppsala is a city in Sweden; Bergman was born there.",
        "art#0": "Art in the Mainer style, by The Egg's painter.",
        "notes#0": "Notes on Ingmar Bergman (director) and his films.",
        "maine#0": "Maine is a state of the United States.",
    }
    documents = {pid: pid.split("#")[0] for pid in texts}
    titles = {
        "egg": "The Egg (film)",
        "bergman": "Ingmar Bergman",
        "uppsala": "Uppsala",
        "art": "Art",  # too short to be a link: "art" is a word of much prose
        "notes": "Notes",
        "maine": "Maine",
    }
    links = title_links(texts, documents, titles)
    assert ("egg#0", "bergman#0") in links, "a title named in the text"
    assert ("bergman#0", "uppsala#0") in links and ("uppsala#0", "bergman#0") not in links
    assert ("art#0", "egg#0") in links and ("art#0", "egg#1") in links, (
        "the title without its (qualifier) links to every passage of that document"
    )
    assert ("notes#0", "bergman#0") in links
    assert not any(b.startswith("art") for _, b in links), "short titles make no links"
    assert not any(documents[a] == documents[b] for a, b in links), "never within a document"
    assert ("art#0", "maine#0") not in links, "whole words only: Mainer is not Maine"

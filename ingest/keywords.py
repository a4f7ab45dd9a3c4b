"""TF-IDF keywords per passage (the lexical space W of the KGP paper).

Inverse document frequencies are computed over the document's own passages, so a document's
keywords never depend on the rest of the graph: adding or removing another document cannot
change them, and sync stays incremental."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from kgp.ingest.text import words

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "did",
        "didn't",
        "do",
        "does",
        "doesn't",
        "doing",
        "don't",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "hadn't",
        "has",
        "hasn't",
        "have",
        "haven't",
        "having",
        "he",
        "he'd",
        "he'll",
        "he's",
        "her",
        "here",
        "here's",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "how's",
        "i",
        "i'd",
        "i'll",
        "i'm",
        "i've",
        "if",
        "in",
        "into",
        "is",
        "isn't",
        "it",
        "it's",
        "its",
        "itself",
        "let's",
        "may",
        "me",
        "might",
        "more",
        "most",
        "must",
        "mustn't",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "shan't",
        "she",
        "she'd",
        "she'll",
        "she's",
        "should",
        "shouldn't",
        "so",
        "some",
        "such",
        "than",
        "that",
        "that's",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "there's",
        "these",
        "they",
        "they'd",
        "they'll",
        "they're",
        "they've",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "was",
        "wasn't",
        "we",
        "we'd",
        "we'll",
        "we're",
        "we've",
        "were",
        "weren't",
        "what",
        "what's",
        "when",
        "when's",
        "where",
        "where's",
        "which",
        "while",
        "who",
        "who's",
        "whom",
        "why",
        "why's",
        "will",
        "with",
        "won't",
        "would",
        "wouldn't",
        "you",
        "you'd",
        "you'll",
        "you're",
        "you've",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "one",
        "two",
        "also",
        "per",
        "via",
        "within",
        "without",
        "however",
        "therefore",
        "thus",
        "shall",
        "may",
    ]
)


def terms(text: str) -> list[str]:
    """Candidate keyword terms: words of 3+ characters (or 4+ digit numbers), no stopwords."""
    out = []
    for word in words(text):
        if word in STOPWORDS or len(word) < 3:
            continue
        if word.isdigit() and len(word) < 4:
            continue
        out.append(word)
    return out


class KeywordExtractor:
    """Top ``count`` TF-IDF terms of each passage, plus the document title."""

    def __init__(self, *, count: int = 5) -> None:
        self.count = count

    def extract(
        self, passages: Sequence[str], *, title: str = "", extra: Sequence[Sequence[str]] = ()
    ) -> list[tuple[str, ...]]:
        """Keywords of each passage; ``extra[i]`` (e.g. a section heading) joins passage i's."""
        bags = [Counter(terms(text)) for text in passages]
        df: Counter[str] = Counter()
        for bag in bags:
            df.update(bag.keys())
        n = len(bags)
        title_term = " ".join(title.lower().split())
        out: list[tuple[str, ...]] = []
        for i, bag in enumerate(bags):
            total = sum(bag.values()) or 1
            scored = sorted(
                bag.items(),
                key=lambda item: (
                    -(item[1] / total) * (1.0 + math.log((1 + n) / (1 + df[item[0]]))),
                    item[0],
                ),
            )
            chosen = [term for term, _ in scored[: self.count]]
            for more in extra[i] if i < len(extra) else ():
                more = " ".join(more.lower().split())
                if more and more not in chosen:
                    chosen.append(more)
            if title_term and title_term not in chosen:
                chosen.append(title_term)
            out.append(tuple(chosen))
        return out

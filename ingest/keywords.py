"""TF-IDF keywords per passage (the lexical space W of the KGP paper).

Inverse document frequencies are computed over the document's own passages, so a document's
keywords never depend on the rest of the graph: adding or removing another document cannot
change them, and sync stays incremental."""

from __future__ import annotations

import math
import re
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


_NAME_WORD = re.compile(r"[^\W\d_][\w'’.-]*", re.UNICODE)
_CONNECTORS = frozenset(
    ["of", "de", "del", "della", "da", "di", "la", "le", "von", "van", "der", "du"]
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_PUNCT = ',;:!?"“”‘()[]'
_PARENTHETICAL = re.compile(r"\s*\([^)]*\)\s*$")


def names(text: str, limit: int = 8) -> list[str]:
    """Proper names a passage mentions, lower-cased: runs of capitalised words (with "of",
    "de", "van"... inside; the parts on either side count too), and single capitalised words
    that do not start a sentence. They join the passage's keywords, so a passage that names
    something shares a keyword with the passages titled by that name: entity links in the
    lexical space (the paper's TAGME graph, with the knowledge base's titles as entities)."""
    found: list[str] = []

    def flush(run: list[str], start: int) -> None:
        while run and run[-1] in _CONNECTORS:
            run.pop()
        if not run:
            return
        parts: list[list[str]] = [[]]
        for word in run:
            if word in _CONNECTORS:
                parts.append([])
            else:
                parts[-1].append(word)
        pieces = [(run, start == 0)]
        if len(parts) > 1:  # "Thomas Tucker of South Carolina": each side is a name too
            pieces += [(p, start == 0 and i == 0) for i, p in enumerate(parts)]
        for chunk, at_start in pieces:
            if not chunk or (len(chunk) == 1 and (len(chunk[0]) < 3 or at_start)):
                continue
            phrase = " ".join(chunk).lower().rstrip(".")
            if phrase not in STOPWORDS and phrase not in found:
                found.append(phrase)

    for sentence in _SENTENCES.split(text):
        run: list[str] = []
        start = 0
        for index, token in enumerate(sentence.split()):
            word = token.strip(_PUNCT).rstrip(".")
            capital = bool(word) and word[0].isupper() and bool(_NAME_WORD.fullmatch(word))
            if capital and (run or word.lower() not in STOPWORDS):
                if not run:
                    start = index
                run.append(word)
            elif run and token in _CONNECTORS:
                run.append(token)
            else:
                flush(run, start)
                run = []
            if run and token[-1] in _PUNCT:
                flush(run, start)
                run = []
        flush(run, start)
        if len(found) >= limit:
            break
    return found[:limit]


def title_terms(title: str) -> list[str]:
    """The title as keywords: whole, and without a trailing "(disambiguation)" part."""
    whole = " ".join(title.lower().split())
    short = _PARENTHETICAL.sub("", whole)
    return [t for t in dict.fromkeys([whole, short]) if t]


class KeywordExtractor:
    """Top ``count`` TF-IDF terms of each passage, the proper names it mentions, and the
    document title."""

    def __init__(self, *, count: int = 5, names: int = 8) -> None:
        self.count = count
        self.names = names

    def extract(
        self, passages: Sequence[str], *, title: str = "", extra: Sequence[Sequence[str]] = ()
    ) -> list[tuple[str, ...]]:
        """Keywords of each passage; ``extra[i]`` (e.g. a section heading) joins passage i's."""
        bags = [Counter(terms(text)) for text in passages]
        df: Counter[str] = Counter()
        for bag in bags:
            df.update(bag.keys())
        n = len(bags)
        titles = title_terms(title)
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
            named = names(passages[i], self.names) if self.names else []
            for more in [*named, *(extra[i] if i < len(extra) else ())]:
                more = " ".join(more.lower().split())
                if more and more not in chosen:
                    chosen.append(more)
            chosen += [t for t in titles if t not in chosen]
            out.append(tuple(chosen))
        return out

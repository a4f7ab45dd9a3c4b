"""TF-IDF keywords per passage (the lexical space W of the KGP paper).

Inverse document frequencies are computed over the document's own passages, so a document's
keywords never depend on the rest of the graph: adding or removing another document cannot
change them, and sync stays incremental."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kgp.text import STOPWORDS, terms

_NAME_WORD = re.compile(r"[^\W\d_][\w'’.-]*", re.UNICODE)
_CONNECTORS = frozenset(
    ["of", "de", "del", "della", "da", "di", "la", "le", "von", "van", "der", "du"]
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_PUNCT = ',;:!?"“”‘()[]'
Link = tuple[str, str]  # (a, b): passage a names the title of b's document
MIN_TITLE_CHARS = 4  # shorter titles ("Art", "UK") match too much prose to be links
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


def title_links(
    texts: Mapping[str, str], documents: Mapping[str, str], titles: Mapping[str, str]
) -> frozenset[Link]:
    """(a, b) for passages a and b of different documents when a's text names the title of
    b's document (``documents``: passage → document id; ``titles``: document id → title), as a
    whole phrase, case-insensitively, with or without a trailing "(...)" qualifier."""
    patterns: dict[str, list[str]] = {}
    for doc in {documents[p] for p in texts if p in documents}:
        names = [
            t
            for t in title_terms(titles.get(doc, ""))
            if len(t) >= MIN_TITLE_CHARS and t not in STOPWORDS
        ]
        patterns[doc] = names
    lowered = {p: " ".join(text.lower().split()) for p, text in texts.items() if p in documents}
    members: dict[str, list[str]] = {}
    for p in lowered:
        members.setdefault(documents[p], []).append(p)
    links: set[Link] = set()
    for a, text in lowered.items():
        for doc, found in patterns.items():
            # the substring test first: a regex runs only where the title occurs at all
            if doc != documents[a] and any(t in text and _phrase(t).search(text) for t in found):
                links.update((a, b) for b in members[doc])
    return frozenset(links)


@functools.lru_cache(maxsize=4096)
def _phrase(title: str) -> re.Pattern[str]:
    """A title (lower-cased) as a whole phrase: not inside a longer word."""
    return re.compile(rf"(?<!\w){re.escape(title)}(?!\w)")


class _Passage(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def doc_id(self) -> str: ...


def passage_links(
    passages: Mapping[str, _Passage], documents: Mapping[str, Mapping[str, Any]]
) -> frozenset[Link]:
    """:func:`title_links` among stored passages (by id), their documents' nodes giving the
    titles."""
    return title_links(
        {pid: p.text for pid, p in passages.items()},
        {pid: p.doc_id for pid, p in passages.items()},
        {doc: str(node.get("title", "")) for doc, node in documents.items()},
    )

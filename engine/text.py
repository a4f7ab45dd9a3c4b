"""Words of a text: the one tokenizer module of kgp, with its English stop words.

Two tokenizers, on purpose. Over every question, title and paragraph of the shared QA sets
(36,816 texts) they disagree on a third, so neither can stand in for the other without
changing keywords, scores or full-text hits:

- ``words`` (keywords, tf-idf and BM25 over passages, via ``terms``) keeps apostrophes and
  hyphens inside a word ("serpent's", "well-known", the typographic apostrophe made plain)
  and lower-cases the text before matching;
- ``tokens`` (full-text queries, via ``query_terms``, and what the embedded store's full-text
  index holds, via ``index_terms``) is runs of letters and digits, each lower-cased after
  matching: full-text analyzers split at apostrophes and hyphens, and both are query syntax.
  Where lower-casing adds a combining mark ("İ" becomes "i" + U+0307) the two orders differ
  too, so each keeps its own.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator

import Stemmer

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's however i
    i'd i'll i'm i've if in into is isn't it it's its itself let's may me might more most must
    mustn't my myself no nor not of off on once one only or other ought our ours ourselves out
    over own per same shall shan't she she'd she'll she's should shouldn't so some such than
    that that's the their theirs them themselves then there there's therefore these they they'd
    they'll they're they've this those through thus to too two under until up upon us very via
    was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
    which while who who's whom why why's will with within without won't would wouldn't you you'd
    you'll you're you've your yours yourself yourselves
    """.split()  # noqa: SIM905 (192 words: a list literal would take 192 lines)
)

_WORD = re.compile(r"[^\W_][\w'’-]*[^\W_]|[^\W_]", re.UNICODE)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> Iterator[str]:
    """The words of a text, lower-cased, with apostrophes and hyphens inside a word kept (a
    typographic apostrophe read as a plain one)."""
    yield from _WORD.findall(text.lower().replace("’", "'"))


def terms(text: str) -> list[str]:
    """Lexical terms (keywords, tf-idf, BM25): ``words`` of 3+ characters (or numbers of 4+
    digits), without stop words; repeats kept, for term frequencies."""
    return [
        word
        for word in words(text)
        if len(word) >= 3 and word not in STOPWORDS and not (len(word) == 3 and word.isdigit())
    ]


def tokens(text: str) -> list[str]:
    """The runs of letters and digits of a text, each lower-cased: what a full-text index
    matches, with no query syntax left."""
    return [token.lower() for token in _TOKEN.findall(text)]


def query_terms(text: str, limit: int = 64) -> list[str]:
    """The words of a free-text query, lower-cased and deduplicated, without any syntax and
    without English stopwords (unless nothing else is left): neither FalkorDB's full-text
    scoring nor Neo4j's default analyzer discounts them enough, and "what … of the …" drowned
    the names that matter (MuSiQue dev, full-text recall@10: 8 % with them, 15 % without)."""
    found = list(dict.fromkeys(tokens(text)))
    content = [word for word in found if word not in STOPWORDS]
    return (content or found)[:limit]


_stemmers = threading.local()  # a PyStemmer object is not safe to share between threads


def stems(words: Iterable[str]) -> list[str]:
    """The Snowball English stems of words, deduplicated in order: the stemmer FalkorDB's
    full-text index applies, applied by kgp instead (``index_terms``)."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer("english")
    return list(dict.fromkeys(stemmer.stemWords(list(words))))


def index_terms(text: str) -> str:
    """What the embedded store's full-text index holds of a passage: the distinct stems of its
    ``tokens``, space-separated (stop words kept: a question of nothing else, "The Who", is
    searched by them). The embedded store builds its full-text index again at every start,
    before it answers, and stemming every text there was most of that (docs/decisions/0002,
    9); a question's terms are stemmed the same way (``StoreSearch.fulltext_search``), so a
    word matches every form of it."""
    return " ".join(stems(tokens(text)))

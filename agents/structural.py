"""Structural questions (the KGP paper's PDFTriage-style questions): "In Table 3, which
station…", "summarise page 5", "what changed between page 1 and page 2". References to pages and
tables are found by rules, then resolved to the Page and Table nodes of the documents the
question is about: a page's content is its passages and tables, a table's its Markdown. A table
is named by the number printed in its caption ("Table 6.1", "TABLE IV") or by its position."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from kgp.ingest.tables import caption_row, parse_markdown_table
from kgp.names import listing
from kgp.stores.base import GraphStore
from kgp.stores.model import DocumentSummary, PageContent, StoredPassage, StoredTable
from kgp.text import STOPWORDS, words

ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_WHOLE = r"\d{1,4}(?:st|nd|rd|th)?|(?:" + "|".join(ORDINALS) + r")\b"
_NUMBER = "(" + _WHOLE + ")"
_SEPARATOR = r"\s*(?:,|and|&|or|to|-|–|vs\.?|versus)\s*"
_LIST = _NUMBER + "((?:" + _SEPARATOR + _NUMBER + ")*)"
_PAGE = re.compile(r"\b(?:pages?|pp?\.)\s*" + _LIST, re.IGNORECASE)
_PAGE_AFTER = re.compile(r"\b" + _NUMBER + r"\s+page\b", re.IGNORECASE)  # "the second page"
# a table's number as printed: also dotted ("6.1", "A.2") or roman ("IV", up to LXXXIX)
_DOTTED = r"(?:[a-z]\.\d{1,3}|\d{1,3}(?:\.\d{1,3})+)(?:\.\d{1,3})*(?!\.?\d)"
_ROMAN = r"(?=[ivxl]+\b)l?x{0,3}(?:ix|iv|v?i{0,3})\b"
_TABLE_NUMBER = "(" + _DOTTED + "|" + _ROMAN + "|" + _WHOLE + ")"
_TABLE_LIST = _TABLE_NUMBER + "((?:" + _SEPARATOR + _TABLE_NUMBER + ")*)"
_TABLE = re.compile(r"\btables?\s*:?\s*" + _TABLE_LIST, re.IGNORECASE)
_TABLE_AFTER = re.compile(r"\b" + _NUMBER + r"\s+table\b", re.IGNORECASE)
_TABLE_TOKEN = re.compile(_TABLE_NUMBER, re.IGNORECASE)
_CAPTION_NUMBER = re.compile(r"\s*table\s*[:.]?\s*" + _TABLE_NUMBER, re.IGNORECASE)
# "the table in X", "the tables of X", "X's tables": every table of a named document
_ALL_TABLES = re.compile(
    r"\btables?\s+(?:in|of|from)\b(?!\s+contents\b)|['’]s\s+tables?\b", re.IGNORECASE
)
_SPLIT = re.compile(_SEPARATOR, re.IGNORECASE)
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50}

TableNumber = int | str  # a whole number (also written "IV" or "third"), or a label ("6.1")


@dataclass(frozen=True, slots=True)
class Reference:
    """The pages and tables a question names (1-based numbers; a table's also a dotted label
    such as "6.1"), and whether it asks for every table of the documents it names."""

    pages: tuple[int, ...] = ()
    tables: tuple[TableNumber, ...] = ()
    all_tables: bool = False

    def __bool__(self) -> bool:
        return bool(self.pages or self.tables or self.all_tables)


def _number(token: str) -> int:
    return ORDINALS.get(token.lower()) or int(re.sub(r"\D", "", token))


def roman(token: str) -> int:
    """The value of a roman numeral ("IV" is 4, "xii" 12); subtractive pairs count negative."""
    values = [_ROMAN_VALUES[ch] for ch in token.lower()]
    return sum(-v if v < after else v for v, after in zip(values, [*values[1:], 0], strict=True))


def table_number(token: str) -> TableNumber:
    """A table's number as a question or a caption writes it: a whole number for "3", "3rd",
    "third" and "III" alike, so that "Table 4" names a table captioned "TABLE IV"; a dotted
    number stays a label ("6.1", "A.2"), which names only the table captioned with it."""
    if "." in token:
        return token.upper()
    if token[:1].isdigit() or token.lower() in ORDINALS:
        return _number(token)
    return roman(token)


def caption_number(caption: str) -> TableNumber | None:
    """The number a table's caption prints ("Table: 5 Public ..." is 5), if it has one."""
    match = _CAPTION_NUMBER.match(caption)
    return table_number(match.group(1)) if match else None


def _tokens(match: re.Match[str]) -> list[str]:
    return [match.group(1), *(t for t in _SPLIT.split(match.group(2) or "") if t)]


def _span(match: re.Match[str], values: list[int]) -> list[int]:
    """The range of "pages 3 to 5" or "pages 3-5"; otherwise the numbers as written."""
    if len(values) == 2 and re.search(r"\d\s*(?:to|-|–)\s*\d", match.group(0)):
        low, high = sorted(values)
        if high - low <= 20:
            return list(range(low, high + 1))
    return values


def _table_numbers(match: re.Match[str]) -> list[TableNumber]:
    tokens = _tokens(match)
    if tokens[0] == "I" and match.group(0).startswith("t"):
        return []  # "the table I need": a pronoun; a table numbered I is cited as "Table I"
    values = [table_number(t) for t in tokens]
    whole = [v for v in values if isinstance(v, int)]
    return list(_span(match, whole)) if len(whole) == len(values) else values


_STRUCTURE_WORDS = re.compile(r"\b(?:pages?|tables?|p\.)", re.IGNORECASE)
LLM_PROMPT = (
    "Which page numbers and which table numbers does this question refer to? Reply with JSON "
    'only, like {{"pages": [2], "tables": []}}; use empty lists when it names none.\n'
    "Question: {question}"
)


def mentions_structure(question: str) -> bool:
    return bool(_STRUCTURE_WORDS.search(question))


def parse_reference(reply: str) -> Reference:
    """The model's JSON reply as a Reference; anything unreadable is no reference."""
    match = re.search(r"\{.*\}", reply, flags=re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else {}
    except ValueError:
        return Reference()

    def values(key: str) -> list[object]:
        found = data.get(key, []) if isinstance(data, dict) else []
        return found if isinstance(found, list) else []

    pages = (int(v) for v in values("pages") if isinstance(v, int | str) and str(v).isdigit())
    tables = (
        table_number(str(v))
        for v in values("tables")
        if isinstance(v, int | str) and _TABLE_TOKEN.fullmatch(str(v))
    )
    return Reference(
        tuple(dict.fromkeys(n for n in pages if 0 < n < 100_000)),
        tuple(dict.fromkeys(n for n in tables if isinstance(n, str) or n > 0)),
    )


def detect(question: str, ask: Callable[[str], str] | None = None) -> Reference:
    """Page and table references in a question: by rules ("page 5", "pages 3-5", "Table 6.1",
    "TABLE IV", "the second table", "the tables of budget.pdf"); when they find none but the
    question talks about pages or tables and ``ask`` (a chat model) is given, by the model."""
    pages = [n for m in _PAGE.finditer(question) for n in _span(m, list(map(_number, _tokens(m))))]
    pages += [_number(m.group(1)) for m in _PAGE_AFTER.finditer(question)]
    tables = [n for m in _TABLE.finditer(question) for n in _table_numbers(m)]
    tables += [_number(m.group(1)) for m in _TABLE_AFTER.finditer(question)]
    found = Reference(
        tuple(dict.fromkeys(n for n in pages if n > 0)),
        tuple(dict.fromkeys(n for n in tables if isinstance(n, str) or n > 0)),
        all_tables=bool(_ALL_TABLES.search(question)),
    )
    if found or ask is None or not mentions_structure(question):
        return found
    return parse_reference(ask(LLM_PROMPT.format(question=question)))


@dataclass
class StructuralItem:
    """One piece of structural evidence: a page's passage or a table's Markdown."""

    id: str
    doc_id: str
    page: int
    text: str
    kind: str  # "passage" or "table"
    via: str  # the Page or Table node that answered the reference


@dataclass
class Resolution:
    """What a reference resolved to: the documents its items come from (``named``: those the
    question names, whose passages lead the content evidence), the items, and notices."""

    reference: Reference
    documents: list[str] = field(default_factory=list)
    items: list[StructuralItem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # pages or tables a named document lacks
    named: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pages": list(self.reference.pages),
            "tables": list(self.reference.tables),
            "all_tables": self.reference.all_tables,
            "documents": self.documents,
            "notice": "; ".join(self.notices) or None,
        }


def mentions(question: str, document: DocumentSummary) -> bool:
    """Whether the question names the document: its file name ("health.pdf"), its title when
    it is more than one plain word ("Annual rainfall report 2024"), or a file-name-like stem
    ("us-001", "report_2024", also with spaces for "-" and "_"). A plain word alone
    ("stations") is a word of the question, not a name."""
    lowered = " ".join(question.lower().split())
    name = document.path.rsplit("/", 1)[-1].lower()
    stem = name.rsplit(".", 1)[0]
    title = " ".join(document.title.lower().split())
    spaced = _spaced(stem)
    distinctive = len(stem) > 3 and not stem.isalpha()
    return bool(
        (name and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", lowered))
        or (len(title) > 3 and not title.isalpha() and title in lowered)
        or (distinctive and (stem in lowered or spaced in lowered))
    )


def title_phrase(question: str, document: DocumentSummary) -> int:
    """How many words long the longest run of the document's title or file name that the
    question holds is, counting runs of two content words or more ("the rainfall report" holds
    "rainfall report" of "Riverside Water - Annual rainfall report 2024": 2); else 0."""
    asked = " " + " ".join(words(question)) + " "
    stem = document.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    best = 0
    for name in (document.title, _spaced(stem)):
        own = list(words(name))
        for start in range(len(own)):
            for end in range(start + 2, len(own) + 1):
                if f" {' '.join(own[start:end])} " not in asked:
                    break
                run = own[start:end]
                if run[-1] not in STOPWORDS and sum(w not in STOPWORDS for w in run) >= 2:
                    best = max(best, end - start)
    return best


def _spaced(stem: str) -> str:
    """A file name's stem as words: "rainfall-2024" and "rainfall_2024" as "rainfall 2024"."""
    return stem.replace("-", " ").replace("_", " ")


def printed_caption(table: StoredTable) -> str:
    """The caption printed beside the table, or else one its first row holds ("Table: 5 ...",
    which the table reader took for a row)."""
    if table.caption:
        return table.caption
    return caption_row(parse_markdown_table(table.markdown.split("\n", 1)[0]))


def numbered(tables: Sequence[StoredTable], number: TableNumber) -> list[StoredTable]:
    """The tables of one document (in document order) that ``number`` names: those whose
    caption prints it; when none does, for a whole number, the document's n-th table."""
    captioned = [t for t in tables if caption_number(printed_caption(t)) == number]
    if captioned or isinstance(number, str):
        return captioned
    return [tables[number - 1]] if number <= len(tables) else []


def by_similarity(
    query: np.ndarray, passages: Sequence[StoredPassage]
) -> list[tuple[StoredPassage, float]]:
    """Passages by the cosine of their stored vectors with the question's (best first, ties
    by id), so a named document's most relevant passages lead without a model call."""
    if not passages:
        return []
    vectors = np.asarray([p.embedding for p in passages], dtype=np.float32)
    scores = vectors @ np.asarray(query, dtype=np.float32)
    ranked = sorted(zip(passages, scores.tolist(), strict=True), key=lambda x: (-x[1], x[0].id))
    return [(p, float(score)) for p, score in ranked]


def resolve(
    store: GraphStore,
    question: str,
    reference: Reference,
    ranked_documents: Sequence[str],
    *,
    max_documents: int = 1,
) -> Resolution:
    """The Page and Table nodes a reference points at, in the documents the question is about:
    the documents it names (by file name or title), or else the documents that have such pages
    or tables, those holding the longest phrase of their title in the question first
    (:func:`title_phrase`), then by content retrieval's rank (``ranked_documents``). "Every table"
    needs a named document. A named document that lacks a page or table the question asks for
    gets a notice; another document's page is never given in its place."""
    if not reference:
        return Resolution(reference)
    documents = {d.id: d for d in store.list_documents()}
    named = [doc for doc, summary in documents.items() if mentions(question, summary)]
    if not named:
        reference = replace(reference, all_tables=False)
    result = Resolution(reference, named=named)
    if not reference:
        return result
    pages = store.page_contents(reference.pages) if reference.pages else []
    tables: dict[str, list[StoredTable]] = {}
    if reference.tables or reference.all_tables:
        for table in store.tables():
            tables.setdefault(table.doc_id, []).append(table)
    if named:
        chosen = named
    else:
        holders = {p.doc_id for p in pages} | {
            doc for doc, rows in tables.items() if any(numbered(rows, n) for n in reference.tables)
        }
        # a phrase of a title the question holds ("the rainfall report") comes before rank
        rank = {doc: i for i, doc in reversed(list(enumerate(ranked_documents)))}
        phrase = {doc: title_phrase(question, documents[doc]) for doc in holders}
        chosen = sorted(holders, key=lambda d: (-phrase[d], rank.get(d, len(rank)), d))
        chosen = chosen[:max_documents]
        if not chosen:
            wanted = [f"page {listing(map(str, reference.pages))}"] if reference.pages else []
            wanted += [f"table {listing(map(str, reference.tables))}"] if reference.tables else []
            result.notices.append(f"no document has {' or '.join(wanted)}")
    result.documents = chosen
    for doc in chosen:
        _gather(result, doc, pages, tables.get(doc, []), documents[doc])
    # a table on a named page and named as "Table n" appears once
    unique: dict[str, StructuralItem] = {}
    for item in result.items:
        unique.setdefault(item.id, item)
    result.items = list(unique.values())
    return result


def _gather(
    result: Resolution,
    doc: str,
    pages: list[PageContent],
    tables: list[StoredTable],
    summary: DocumentSummary,
) -> None:
    """One document's pages and tables the reference names; a notice for each it lacks."""
    found = {page.number for page in pages if page.doc_id == doc}
    for page in (p for p in pages if p.doc_id == doc):
        via = f"{doc}#page={page.number}"
        for x in page.passages:
            result.items.append(StructuralItem(x.id, doc, page.number, x.text, "passage", via))
        for t in page.tables:
            result.items.append(StructuralItem(t.id, doc, page.number, t.markdown, "table", via))
    missing_pages = [n for n in result.reference.pages if n not in found]
    if missing_pages:
        count = summary.pages
        result.notices.append(
            f"{summary.path} has no page {listing(map(str, missing_pages))} "
            f"(it has {count} page{'s' if count != 1 else ''})"
        )
    by_number = {n: numbered(tables, n) for n in result.reference.tables}
    given = tables if result.reference.all_tables else [t for f in by_number.values() for t in f]
    for table in given:
        result.items.append(
            StructuralItem(table.id, doc, table.page, table.markdown, "table", table.id)
        )
    missing_tables = [n for n, named in by_number.items() if not named]
    if missing_tables:
        count = len(tables)
        result.notices.append(
            f"{summary.path} has no table {listing(map(str, missing_tables))} "
            f"(it has {count} table{'s' if count != 1 else ''})"
        )
    elif result.reference.all_tables and not tables:
        result.notices.append(f"{summary.path} has no tables")

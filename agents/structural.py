"""Structural questions (the KGP paper's PDFTriage-style questions): "In Table 3, which
station…", "summarise page 5", "what changed between page 1 and page 2". References to pages and
tables are found by rules, then resolved to the Page and Table nodes of the documents the
question is about: a page's content is its passages and tables, a table's its Markdown."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgp.names import listing
from kgp.stores.base import GraphStore
from kgp.stores.model import DocumentSummary, PageContent, StoredTable

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
_NUMBER = r"(\d{1,4}(?:st|nd|rd|th)?|" + "|".join(ORDINALS) + ")"
_LIST = _NUMBER + r"((?:\s*(?:,|and|&|or|to|-|–|vs\.?|versus)\s*" + _NUMBER + r")*)"
_PAGE = re.compile(r"\b(?:pages?|pp?\.)\s*" + _LIST, re.IGNORECASE)
_PAGE_AFTER = re.compile(r"\b" + _NUMBER + r"\s+page\b", re.IGNORECASE)  # "the second page"
_TABLE = re.compile(r"\btables?\s*" + _LIST, re.IGNORECASE)
_TABLE_AFTER = re.compile(r"\b" + _NUMBER + r"\s+table\b", re.IGNORECASE)
_SPLIT = re.compile(r"\s*(?:,|and|&|or|to|-|–|vs\.?|versus)\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Reference:
    """The pages and tables a question names (1-based numbers)."""

    pages: tuple[int, ...] = ()
    tables: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.pages or self.tables)


def _number(token: str) -> int:
    return ORDINALS.get(token.lower()) or int(re.sub(r"\D", "", token))


def _numbers(match: re.Match[str]) -> list[int]:
    tokens = [match.group(1), *(t for t in _SPLIT.split(match.group(2) or "") if t)]
    values = [_number(t) for t in tokens if t[:1].isdigit() or t.lower() in ORDINALS]
    # "pages 3 to 5" / "pages 3-5": the range
    if len(values) == 2 and re.search(r"\d\s*(?:to|-|–)\s*\d", match.group(0)):
        low, high = sorted(values)
        if high - low <= 20:
            return list(range(low, high + 1))
    return values


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

    def numbers(key: str) -> tuple[int, ...]:
        values = data.get(key, []) if isinstance(data, dict) else []
        if not isinstance(values, list):
            return ()
        found = (int(v) for v in values if isinstance(v, int | str) and str(v).isdigit())
        return tuple(dict.fromkeys(n for n in found if 0 < n < 100_000))

    return Reference(numbers("pages"), numbers("tables"))


def detect(question: str, ask: Callable[[str], str] | None = None) -> Reference:
    """Page and table references in a question: by rules; when they find none but the
    question talks about pages or tables and ``ask`` (a chat model) is given, by the model."""
    pages = [n for m in _PAGE.finditer(question) for n in _numbers(m)]
    pages += [_number(m.group(1)) for m in _PAGE_AFTER.finditer(question)]
    tables = [n for m in _TABLE.finditer(question) for n in _numbers(m)]
    tables += [_number(m.group(1)) for m in _TABLE_AFTER.finditer(question)]
    found = Reference(
        tuple(dict.fromkeys(n for n in pages if n > 0)),
        tuple(dict.fromkeys(n for n in tables if n > 0)),
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
    reference: Reference
    documents: list[str] = field(default_factory=list)
    items: list[StructuralItem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # pages or tables a named document lacks

    def as_dict(self) -> dict[str, Any]:
        return {
            "pages": list(self.reference.pages),
            "tables": list(self.reference.tables),
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
    spaced = stem.replace("-", " ").replace("_", " ")
    distinctive = len(stem) > 3 and not stem.isalpha()
    return bool(
        (name and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", lowered))
        or (len(title) > 3 and not title.isalpha() and title in lowered)
        or (distinctive and (stem in lowered or spaced in lowered))
    )


def resolve(
    store: GraphStore,
    question: str,
    reference: Reference,
    ranked_documents: Sequence[str],
    *,
    max_documents: int = 1,
) -> Resolution:
    """The Page and Table nodes a reference points at, in the documents the question is about:
    the documents it names (by file name or title), or else the best-ranked documents of
    content retrieval (``ranked_documents``) that have such pages or tables. A named document
    that lacks a page or table the question asks for gets a notice; another document's page
    is never given in its place."""
    result = Resolution(reference)
    if not reference:
        return result
    documents = {d.id: d for d in store.list_documents()}
    pages = store.page_contents(reference.pages) if reference.pages else []
    tables: dict[str, list[StoredTable]] = {}
    if reference.tables:
        for table in store.tables():
            tables.setdefault(table.doc_id, []).append(table)
    named = [doc for doc, summary in documents.items() if mentions(question, summary)]
    if named:
        chosen = named
    else:
        holders = {p.doc_id for p in pages} | {
            doc for doc, rows in tables.items() if any(n <= len(rows) for n in reference.tables)
        }
        rank = {doc: i for i, doc in reversed(list(enumerate(ranked_documents)))}
        chosen = sorted(holders, key=lambda d: (rank.get(d, len(rank)), d))[:max_documents]
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
    for n in result.reference.tables:
        if n <= len(tables):
            table = tables[n - 1]
            result.items.append(
                StructuralItem(table.id, doc, table.page, table.markdown, "table", table.id)
            )
    missing_tables = [n for n in result.reference.tables if n > len(tables)]
    if missing_tables:
        count = len(tables)
        result.notices.append(
            f"{summary.path} has no table {listing(map(str, missing_tables))} "
            f"(it has {count} table{'s' if count != 1 else ''})"
        )

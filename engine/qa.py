"""Multi-hop QA sets in their native formats (MuSiQue, HotpotQA, 2WikiMultihopQA) and kgp's own
format for a user's questions, read into one shape for evaluation: each question with its
answer, its paragraphs and its gold paragraphs (native sets), or its supporting references into an
existing graph (kgp's format).

kgp's format is JSON lines (or a JSON list), one question per row::

    {"id": "q1", "question": "Which station serves the mill?", "answer": "Alder Creek",
     "supporting": ["The station manager is Mira Kovac.",
                    {"document": "reports/stations.pdf", "page": 3},
                    {"document": "reports/stations.pdf", "table": 2}]}

``id`` and ``answer`` are optional (``answer`` may be a list of accepted answers). A supporting
reference is a passage's text (a string, or ``{"text": ...}``), a page of a document, a table
(the document's n-th, counting from 1) or a whole document; a document is named by its path as
synced, or by a unique end of it (its file name).

The shared-corpus setting: every paragraph of every question is one passage of one graph,
deduplicated by (title, text); :func:`shared_corpus` writes that corpus and says which passage
id each paragraph became."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgp.errors import DocumentError
from kgp.files import write_private
from kgp.stores.model import passage_id

Paragraph = tuple[str, str]  # (title, text)


FORMATS = "MuSiQue, HotpotQA, 2Wiki or kgp's JSONL (question + supporting)"


@dataclass(frozen=True, slots=True)
class Support:
    """One supporting reference of a question in kgp's format."""

    text: str | None = None
    document: str | None = None
    page: int | None = None
    table: int | None = None

    def describe(self) -> str:
        if self.text is not None:
            return f"text {self.text[:60]!r}"
        where = f" page {self.page}" if self.page else f" table {self.table}" if self.table else ""
        return f"{self.document}{where}"


@dataclass(frozen=True, slots=True)
class QaItem:
    id: str
    question: str
    answer: str
    paragraphs: tuple[Paragraph, ...]
    gold: tuple[Paragraph, ...]  # in hop order where the format gives it
    supports: tuple[Support, ...] = ()  # kgp's format: references into an existing graph
    aliases: tuple[str, ...] = ()  # other accepted answers
    kind: str = ""  # the set's question type: bridge, comparison, compositional, ...
    steps: tuple[tuple[str, Paragraph], ...] = ()  # MuSiQue: (sub-question, its paragraph)

    @property
    def has_gold(self) -> bool:
        return bool(self.gold or self.supports)

    @property
    def answers(self) -> tuple[str, ...]:
        return tuple(a for a in (self.answer, *self.aliases) if a)


def _paragraph(title: Any, text: Any) -> Paragraph:
    return (" ".join(str(title).split()), " ".join(str(text).split()))


def _context(context: Sequence[Any]) -> list[Paragraph]:
    # HotpotQA sentences carry their own leading spaces, 2Wiki's do not
    out = []
    for title, sentences in context:
        joined = "".join(sentences) if any(s.startswith(" ") for s in sentences[1:]) else None
        out.append(_paragraph(title, joined if joined is not None else " ".join(sentences)))
    return out


def _by_titles(paragraphs: Sequence[Paragraph], facts: Sequence[Any]) -> tuple[Paragraph, ...]:
    order = list(dict.fromkeys(" ".join(str(f[0]).split()) for f in facts))
    return tuple(p for title in order for p in paragraphs if p[0] == title)


def parse_item(raw: dict[str, Any], where: str) -> QaItem:
    """One question in any of the four formats."""
    if isinstance(raw, dict) and "supporting" in raw:
        return _user_item(raw, where)
    try:
        qid = str(raw.get("id") or raw.get("_id") or "")
        question, answer = str(raw["question"]), str(raw.get("answer", ""))
        aliases = tuple(str(a) for a in raw.get("answer_aliases") or ())
        steps: tuple[tuple[str, Paragraph], ...] = ()
        if "paragraphs" in raw:  # MuSiQue
            paragraphs = [_paragraph(p["title"], p["paragraph_text"]) for p in raw["paragraphs"]]
            by_idx = {int(p["idx"]): paragraphs[i] for i, p in enumerate(raw["paragraphs"])}
            hops = [
                by_idx[int(step["paragraph_support_idx"])]
                for step in raw.get("question_decomposition", [])
                if step.get("paragraph_support_idx") is not None
            ]
            flagged = [paragraphs[i] for i, p in enumerate(raw["paragraphs"]) if p["is_supporting"]]
            gold = tuple(dict.fromkeys([*hops, *flagged]))
            steps = _sub_questions(raw.get("question_decomposition", []), by_idx)
        elif "context" in raw:  # HotpotQA, 2Wiki
            paragraphs = _context(raw["context"])
            gold = _by_titles(paragraphs, raw["supporting_facts"])
        elif "gold_passages" in raw:  # 2Wiki with a separate corpus
            gold = tuple(_paragraph(p["title"], p["text"]) for p in raw["gold_passages"])
            paragraphs = list(gold)
        else:
            raise KeyError("paragraphs, context or gold_passages")
        kind = str(raw.get("type") or "")
        if raw.get("evidences"):  # 2Wiki: the triples are in hop order
            gold = _by_evidence(gold, raw["evidences"])
        elif kind == "bridge" and "context" in raw:  # HotpotQA
            gold = _bridge_order(gold)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise DocumentError(f"{where}: not a {FORMATS} question (missing or bad {exc})") from None
    return QaItem(
        qid, question, answer, tuple(paragraphs), gold, aliases=aliases, kind=kind, steps=steps
    )


def _sub_questions(
    decomposition: Sequence[Any], by_idx: dict[int, Paragraph]
) -> tuple[tuple[str, Paragraph], ...]:
    """MuSiQue's decomposition as plain sub-questions: "#k" replaced by step k's answer, the
    "subject >> relation" form written as words."""
    answers: list[str] = []
    out = []
    for step in decomposition:
        text = str(step.get("question", ""))
        for k, answer in enumerate(answers, start=1):
            text = text.replace(f"#{k}", answer)
        answers.append(str(step.get("answer", "")))
        support = step.get("paragraph_support_idx")
        if support is not None and int(support) in by_idx:
            out.append((" ".join(text.replace(">>", " ").split()), by_idx[int(support)]))
    return tuple(out)


def _name(title: str) -> str:
    """A title compared loosely: lower case, without a trailing "(...)" qualifier."""
    return " ".join(re.sub(r"\s*\([^)]*\)\s*$", "", str(title)).lower().split())


def _by_evidence(gold: tuple[Paragraph, ...], evidences: Sequence[Any]) -> tuple[Paragraph, ...]:
    """Gold paragraphs in the order their titles appear as subjects of the evidence triples
    (2Wiki's hop order), then as objects; the rest keep their place after them."""
    subjects = [_name(triple[0]) for triple in evidences]
    objects = [_name(triple[-1]) for triple in evidences]

    def rank(paragraph: Paragraph) -> int:
        name = _name(paragraph[0])
        if name in subjects:
            return subjects.index(name)
        return len(subjects) + (objects.index(name) if name in objects else len(objects))

    return tuple(sorted(gold, key=rank))


def _bridge_order(gold: tuple[Paragraph, ...]) -> tuple[Paragraph, ...]:
    """A HotpotQA bridge pair: the paragraph that names the other's title comes first."""
    if len(gold) != 2:
        return gold
    (a_title, a_text), (b_title, b_text) = gold
    names_b, names_a = _name(b_title) in a_text.lower(), _name(a_title) in b_text.lower()
    return (gold[1], gold[0]) if names_a and not names_b else gold


def _user_item(raw: dict[str, Any], where: str) -> QaItem:
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DocumentError(f"{where}: 'question' must be a non-empty string")
    answers = raw.get("answer") or []
    answers = [answers] if isinstance(answers, str) else answers
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise DocumentError(f"{where}: 'answer' must be a string or a list of strings")
    supporting = raw["supporting"]
    if not isinstance(supporting, list):
        raise DocumentError(f"{where}: 'supporting' must be a list of texts or references")
    supports = tuple(
        _support(entry, f"{where} supporting {n}") for n, entry in enumerate(supporting)
    )
    answer = answers[0] if answers else ""
    return QaItem(str(raw.get("id") or ""), question, answer, (), (), supports, tuple(answers[1:]))


def _support(entry: Any, where: str) -> Support:
    if isinstance(entry, str):
        entry = {"text": entry}
    if not isinstance(entry, dict):
        raise DocumentError(f"{where}: give a passage's text or {{document, page | table}}")
    text, document = entry.get("text"), entry.get("document")
    if isinstance(text, str) and text.strip() and document is None:
        return Support(text=" ".join(text.split()))
    if not isinstance(document, str) or not document.strip():
        raise DocumentError(f"{where}: give a passage's text or {{document, page | table}}")
    numbers = {key: entry.get(key) for key in ("page", "table") if entry.get(key) is not None}
    if len(numbers) > 1 or any(
        not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in numbers.values()
    ):
        raise DocumentError(f"{where}: give one of page or table, a number from 1")
    return Support(document=document.strip(), **numbers)


# the public sets kgp reads natively, with their licences (model cards name them)
SETS = {
    "musique": ("MuSiQue", "CC BY 4.0"),
    "hotpotqa": ("HotpotQA", "CC BY-SA 4.0"),
    "2wiki": ("2WikiMultihopQA", "Apache-2.0"),
}


def qa_set(row: Any) -> str:
    """Which format a QA row is in: a key of :data:`SETS`, ``kgp`` (a user's question) or
    ``corpus`` (a ``{title, text}`` passage)."""
    if not isinstance(row, dict):
        return "unknown"
    if "supporting" in row:
        return "kgp"
    if "paragraphs" in row:
        return "musique"
    if "evidences" in row or "gold_passages" in row:
        return "2wiki"
    if "context" in row:
        return "hotpotqa"
    return "corpus" if "text" in row and "question" not in row else "unknown"


def load_qa(path: str | Path, *, limit: int | None = None) -> list[QaItem]:
    """The questions of a QA file (a JSON list, or JSON lines)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise DocumentError(f"{file}: cannot read the QA file ({exc.strerror})") from None
    try:
        rows = json.loads(text) if text.lstrip().startswith("[") else _lines(text)
    except ValueError as exc:
        raise DocumentError(f"{file}: not JSON or JSON lines ({exc})") from None
    if not isinstance(rows, list) or not rows:
        raise DocumentError(f"{file}: expected a non-empty list of questions")
    return [parse_item(row, f"{file} question {n}") for n, row in enumerate(rows[:limit], 1)]


def _lines(text: str) -> list[Any]:
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        try:
            rows.append(json.loads(line)) if line.strip() else None
        except ValueError as exc:
            raise ValueError(f"line {n}: {exc}") from None
    return rows


def load_corpus(path: str | Path) -> list[Paragraph]:
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DocumentError(f"{path}: not a readable JSON corpus ({exc})") from None
    return [_paragraph(e.get("title", ""), e["text"]) for e in entries]


@dataclass(frozen=True, slots=True)
class SharedCorpus:
    entries: list[Paragraph]
    ids: dict[Paragraph, str]  # paragraph -> passage id once synced with ``prefix``

    def write(self, path: Path) -> Path:
        rows = [{"title": t, "text": x} for t, x in self.entries]
        return write_private(path, json.dumps(rows, ensure_ascii=False))


def shared_corpus(
    items: Iterable[QaItem], prefix: str, extra: Iterable[Paragraph] = ()
) -> SharedCorpus:
    """Every paragraph once, in first-seen order; ids as ``sync_corpus(prefix=...)`` makes them."""
    entries: list[Paragraph] = []
    ids: dict[Paragraph, str] = {}
    for paragraph in [*extra, *(p for item in items for p in (*item.paragraphs, *item.gold))]:
        if paragraph not in ids:
            ids[paragraph] = passage_id(f"{prefix}/{len(entries)}", 0)
            entries.append(paragraph)
    return SharedCorpus(entries, ids)

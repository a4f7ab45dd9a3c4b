"""Multi-hop QA sets in their native formats (MuSiQue, HotpotQA, 2WikiMultihopQA), read into one
shape for evaluation: each question with its answer, its paragraphs and its gold paragraphs.

The shared-corpus setting: every paragraph of every question is one passage of one graph,
deduplicated by (title, text); :func:`shared_corpus` writes that corpus and says which passage
id each paragraph became."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgp.errors import DocumentError
from kgp.stores.model import passage_id

Paragraph = tuple[str, str]  # (title, text)


@dataclass(frozen=True, slots=True)
class QaItem:
    id: str
    question: str
    answer: str
    paragraphs: tuple[Paragraph, ...]
    gold: tuple[Paragraph, ...]  # in hop order where the format gives it


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
    """One question in any of the three formats."""
    try:
        qid = str(raw.get("id") or raw.get("_id") or "")
        question, answer = str(raw["question"]), str(raw.get("answer", ""))
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
        elif "context" in raw:  # HotpotQA, 2Wiki
            paragraphs = _context(raw["context"])
            gold = _by_titles(paragraphs, raw["supporting_facts"])
        elif "gold_passages" in raw:  # 2Wiki with a separate corpus
            gold = tuple(_paragraph(p["title"], p["text"]) for p in raw["gold_passages"])
            paragraphs = list(gold)
        else:
            raise KeyError("paragraphs, context or gold_passages")
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise DocumentError(
            f"{where}: not a MuSiQue, HotpotQA or 2Wiki question (missing or bad {exc})"
        ) from None
    return QaItem(qid, question, answer, tuple(paragraphs), gold)


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
    items = [parse_item(row, f"{file} question {n}") for n, row in enumerate(rows[:limit])]
    return items


def _lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


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
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        return path


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

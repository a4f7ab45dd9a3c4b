"""Training pairs from multi-hop QA data, with hard negatives (the question's own distractors
and BM25's best non-gold passages of the whole pool). Two kinds:

- ``hops`` (``kgp train mdr``): each question's gold passages in hop order, and for each hop t,
  (question + passages 1..t-1 -> passage t);
- ``questions`` (``kgp train encoder``): the question alone -> each of its gold passages, and
  MuSiQue's sub-questions -> their passages: what the graph's encoder is asked at query time."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

from kgp.agents.generators import t5_prompt
from kgp.errors import ConfigurationError, TrainingError
from kgp.qa import Paragraph, QaItem, load_corpus, load_qa
from kgp.ranking import Bm25

MAX_PATH_PASSAGES = 3  # the mdr scorer's query keeps the path's last three passages


def passage_text(paragraph: Paragraph) -> str:
    title, text = paragraph
    return f"{title}\n{text}" if title else text


@dataclass(frozen=True, slots=True)
class Pair:
    question: str
    evidence: tuple[str, ...]  # the supporting passages so far, in hop order
    positive: str
    negatives: tuple[str, ...]
    source: str = ""  # the QA question it comes from (a sub-question's is its parent's)

    @property
    def group(self) -> str:
        """Pairs of one QA question are held out together."""
        return self.source or self.question

    def mdr_query(self) -> str:
        return " ".join([self.question, *self.evidence[-MAX_PATH_PASSAGES:]])

    def t5_input(self) -> str:
        return t5_prompt(self.question, self.evidence)


# what a pair teaches: (query, evidence so far, the passage to find)
Target = tuple[str, tuple[str, ...], Paragraph]
PAIR_KINDS = ("hops", "questions")


def hop_orders(item: QaItem) -> list[tuple[Paragraph, ...]]:
    """The orders to learn: the gold in hop order; comparison questions both ways."""
    if "comparison" in item.kind and len(item.gold) == 2:
        return [item.gold, item.gold[::-1]]
    return [item.gold]


def hop_targets(item: QaItem) -> Iterator[Target]:
    """MDR's pairs: the question and the gold passages so far -> the next gold passage."""
    for order in hop_orders(item):
        for hop, paragraph in enumerate(order):
            yield item.question, tuple(passage_text(p) for p in order[:hop]), paragraph


def question_targets(item: QaItem) -> Iterator[Target]:
    """The graph encoder's pairs: the question alone -> each of its gold passages (the
    second hop's too, so the question finds the bridge's passage), and each of MuSiQue's
    sub-questions -> its own passage."""
    for paragraph in dict.fromkeys(item.gold):
        yield item.question, (), paragraph
    for sub_question, paragraph in item.steps:
        yield sub_question, (), paragraph


@dataclass
class PairSet:
    pairs: list[Pair]
    questions: int
    skipped: int  # questions without gold passages


def build_pairs(
    items: Sequence[QaItem],
    *,
    extra: Iterable[Paragraph] = (),
    negatives: int = 3,
    seed: int = 13,
    kind: str = "hops",
) -> PairSet:
    """Training pairs of ``items``: ``hops`` (MDR's, see the module's docstring) or
    ``questions`` (:func:`question_targets`), each with hard negatives: BM25's best non-gold
    passages of the pool for its query, mixed with the question's own distractors. ``extra``
    adds passages to the BM25 pool (a retrieval corpus beside the questions)."""
    if kind not in PAIR_KINDS:
        raise ConfigurationError(f"unknown pair kind {kind!r}; choose {' or '.join(PAIR_KINDS)}")
    targets = hop_targets if kind == "hops" else question_targets
    rng = random.Random(seed)
    pool = list(dict.fromkeys([*extra, *(p for i in items for p in (*i.paragraphs, *i.gold))]))
    index = Bm25([passage_text(p) for p in pool])
    pairs: list[Pair] = []
    usable = [item for item in items if len(item.gold) >= 1]
    for item in usable:
        gold = set(item.gold)
        distractors = [p for p in item.paragraphs if p not in gold]
        for query, evidence, paragraph in targets(item):
            search = " ".join([query, *evidence])
            lexical = [pool[n] for n in index.top(search, 4 * negatives) if pool[n] not in gold]
            own = rng.sample(distractors, min(len(distractors), negatives))
            mixed = [p for both in zip_longest(lexical[:negatives], own) for p in both if p]
            chosen = list(dict.fromkeys(mixed))
            pairs.append(
                Pair(
                    query,
                    evidence,
                    passage_text(paragraph),
                    tuple(passage_text(p) for p in chosen[:negatives]),
                    item.question,
                )
            )
    return PairSet(pairs, len(usable), len(items) - len(usable))


def load_training_data(
    paths: Sequence[Path],
    corpora: Sequence[Path] = (),
    *,
    negatives: int = 3,
    seed: int = 13,
    kind: str = "hops",
) -> PairSet:
    """Pairs from QA files in any format ``kgp eval`` reads (kgp's own format has no
    paragraphs to learn from and is refused)."""
    items: list[QaItem] = []
    for path in paths:
        loaded = load_qa(path)
        if any(item.supports for item in loaded):
            raise ConfigurationError(
                f"{path}: kgp's JSONL refers into a graph; training needs MuSiQue, HotpotQA or "
                "2Wiki questions with their passages"
            )
        items += loaded
    extra = [p for corpus in corpora for p in load_corpus(corpus)]
    pairs = build_pairs(items, extra=extra, negatives=negatives, seed=seed, kind=kind)
    if not pairs.pairs:
        raise TrainingError("no training pairs: none of the questions has gold passages")
    return pairs

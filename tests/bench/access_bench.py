"""Access control at scale: a graph of 10,000 passages in 20 access groups, each question asked by
a caller in its one group, against a graph built from only that group's documents.

    python -m tests.bench.access_bench [--passages 10000] [--groups 20] [--callers 5]
        [--data-dir DIR]
    python -m tests.bench.access_bench --eval-dir DIR   # filtering on vs off on kgp eval's graphs

Passages are the train paragraphs of MuSiQue, HotpotQA and 2Wiki plus the 2Wiki train corpus,
one document each (9,002 distinct paragraphs); to reach 10,000, the non-gold paragraphs of the
dev sets fill in as distractor text only (no dev question is asked, nothing is tuned on them).
Each train question's paragraphs go to one group (question i to group i mod G), the rest to
random groups (seeded), so a caller's documents are about 1/G of the graph. A question counts
when its gold paragraphs all lie in its group. For each of the first ``--callers`` groups,
every such question is asked (default kgp retrieval, k = 30):

- in the mixed graph by a caller in the group (filtered),
- in the mixed graph by the admin (``*``, every document: the filter does not narrow),
- in a graph of only the group's documents (no one else's passages exist).

Printed: recall@5, recall@30, all-supporting@30 and p50/p95 latency of each, and the ratios of
p50 against the group-only graph and against the admin.

With ``--eval-dir`` (a ``kgp --data-dir DIR eval`` directory holding the dev sets' graphs, every
document in the one default group): each dev question is asked by a caller in that group
(filtering on) and by the admin (off), alternately in one process, so noise falls on both; the
retrieved ids must be identical, and the p50 ratio is printed per set.

``--data-dir`` keeps the graphs, so a second run skips ingest. The last line is one JSON object
of the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import kgp
from kgp.access import ADMIN_CALLER, Caller
from kgp.client import KnowledgeGraph
from kgp.metrics import all_found, recall
from kgp.qa import Paragraph, QaItem, load_corpus, load_qa
from kgp.stores.model import passage_id

REPO = Path(__file__).resolve().parents[2]
TRAIN = REPO.parent / "shared" / "data" / "qa" / "train"
DEV_DIR = TRAIN.parent / "dev"
SETS = ("musique_train.json", "hotpotqa_train.json", "2wiki_train.json")
DEV = ("musique_dev.json", "hotpotqa_dev.json", "2wiki_dev.json")


def corpus(size: int, groups: int) -> tuple[list[tuple[Paragraph, str]], list[tuple[QaItem, str]]]:
    """Up to ``size`` distinct paragraphs, each with its group, and the questions with theirs."""
    rng = random.Random(7)
    items = [item for name in SETS for item in load_qa(TRAIN / name)]
    group_of: dict[Paragraph, str] = {}
    questions = []
    for i, item in enumerate(items):
        group = f"g{i % groups:02d}"
        for paragraph in (*item.paragraphs, *item.gold):
            group_of.setdefault(paragraph, group)
        questions.append((item, group))
    dev = [item for name in DEV for item in load_qa(DEV_DIR / name)]
    filler = [p for item in dev for p in item.paragraphs if p not in set(item.gold)]
    for paragraph in [*load_corpus(TRAIN / "2wiki_corpus.json"), *filler]:
        if len(group_of) >= size:
            break
        group_of.setdefault(paragraph, f"g{rng.randrange(groups):02d}")
    entries = list(group_of.items())[:size]
    kept = {p for p, _ in entries}
    asked = [
        (item, group)
        for item, group in questions
        if item.gold and all(p in kept and group_of[p] == group for p in item.gold)
    ]
    return entries, asked


def build(root: Path, name: str, entries: Sequence[tuple[Paragraph, str]]) -> dict[Paragraph, str]:
    """A graph of ``entries`` under ``root/name`` (kept for the next run); paragraph -> id."""
    rows = [{"title": t, "text": x, "groups": [g]} for (t, x), g in entries]
    file = root / f"{name}.json"
    file.write_text(json.dumps(rows, ensure_ascii=False))
    with kgp.open(data_dir=root / name, groups="*") as kg:
        started = time.perf_counter()
        report = kg.sync_corpus(file, prefix="c")
        if report.added:
            print(
                f"{name}: {len(report.added):,} passages in {time.perf_counter() - started:.0f} s"
            )
    return {p: passage_id(f"c/{n}", 0) for n, (p, _) in enumerate(entries)}


def ask(
    kg: KnowledgeGraph,
    caller: Caller,
    questions: Sequence[QaItem],
    ids: dict[Paragraph, str],
) -> dict[str, float]:
    r5, r30, a30, times = [], [], [], []
    with kg.store.reading_as(caller):
        kg.retrieve(questions[0].question, 30)  # warm: models and caches
        for item in questions:
            started = time.perf_counter()
            got = [p.id for p in kg.retrieve(item.question, 30).passages]
            times.append(1000 * (time.perf_counter() - started))
            units = [[ids[p]] for p in item.gold]
            r5.append(recall(units, got, 5))
            r30.append(recall(units, got, 30))
            a30.append(all_found(units, got, 30))
    return {
        "recall@5": 100 * statistics.fmean(r5),
        "recall@30": 100 * statistics.fmean(r30),
        "all@30": 100 * statistics.fmean(a30),
        "p50_ms": statistics.median(times),
        "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))],
    }


def filter_on_off(eval_dir: Path) -> dict[str, dict[str, float]]:
    """Per dev set: p50 of the default retrieval read as the default group and as the admin,
    questions alternating between the two."""
    out = {}
    for name in ("musique", "hotpotqa", "2wiki"):
        (graph,) = (eval_dir / "eval").glob(f"{name}-dev-*")
        questions = [i.question for i in load_qa(DEV_DIR / f"{name}_dev.json")]
        on, off = [], []
        with kgp.open(data_dir=graph / "kb") as kg:
            caller = kg.caller
            for question in questions[:10]:  # warm both callers' caches and the models
                for who in (caller, ADMIN_CALLER):
                    with kg.store.reading_as(who):
                        kg.retrieve(question, 30)
            for question in questions:
                got = {}
                for who, times in ((caller, on), (ADMIN_CALLER, off)):
                    with kg.store.reading_as(who):
                        started = time.perf_counter()
                        got[who] = [p.id for p in kg.retrieve(question, 30).passages]
                        times.append(1000 * (time.perf_counter() - started))
                assert got[caller] == got[ADMIN_CALLER], f"{name}: {question!r} differs"
        out[name] = {
            "questions": len(questions),
            "p50_on_ms": round(statistics.median(on), 1),
            "p50_off_ms": round(statistics.median(off), 1),
            "ratio": round(statistics.median(on) / statistics.median(off), 2),
        }
        print(f"{name}: {out[name]} (caller {caller}, identical results)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--callers", type=int, default=5)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--eval-dir", type=Path)
    args = parser.parse_args()
    if args.eval_dir:
        print(json.dumps(filter_on_off(args.eval_dir)))
        return
    root = args.data_dir or Path(tempfile.mkdtemp(prefix="kgp-access-"))
    root.mkdir(parents=True, exist_ok=True)
    entries, asked = corpus(args.passages, args.groups)
    print(
        f"{len(entries):,} passages in {args.groups} groups; {len(asked)} questions whole in "
        f"their group"
    )
    mixed_ids = build(root, "mixed", entries)
    rows: dict[str, dict[str, list[float]]] = {}
    counts = {}
    with kgp.open(data_dir=root / "mixed", groups="*") as mixed:
        for g in range(args.callers):
            group = f"g{g:02d}"
            questions = [item for item, grp in asked if grp == group]
            own = [(p, grp) for p, grp in entries if grp == group]
            counts[group] = (len(own), len(questions))
            if not questions:
                continue
            own_ids = build(root, f"only-{group}", own)
            with kgp.open(data_dir=root / f"only-{group}", groups="*") as alone:
                measured = {
                    "filtered": ask(mixed, Caller((group,)), questions, mixed_ids),
                    "admin": ask(mixed, ADMIN_CALLER, questions, mixed_ids),
                    "group-only graph": ask(alone, ADMIN_CALLER, questions, own_ids),
                }
            for way, figures in measured.items():
                for key, value in figures.items():
                    rows.setdefault(way, {}).setdefault(key, []).extend([value] * len(questions))
    total = sum(q for _, q in counts.values())
    shares = [f"{g} ({p} passages, {q} questions)" for g, (p, q) in counts.items()]
    print(f"callers: {', '.join(shares)}")
    summary = {
        way: {k: round(statistics.fmean(v), 2) for k, v in fig.items()} for way, fig in rows.items()
    }
    print(f"\n{total} questions | recall@5 | recall@30 | all@30 | p50 ms | p95 ms")
    for way, figures in summary.items():
        print(
            f"{way:17} | {figures['recall@5']:8.1f} | {figures['recall@30']:9.1f} | "
            f"{figures['all@30']:6.1f} | {figures['p50_ms']:6.1f} | {figures['p95_ms']:6.1f}"
        )
    filtered, admin, alone = (
        summary[w]["p50_ms"] for w in ("filtered", "admin", "group-only graph")
    )
    summary["ratios"] = {
        "p50 filtered / group-only graph": round(filtered / alone, 2),
        "p50 filtered / admin": round(filtered / admin, 2),
    }
    print(f"p50 filtered / group-only graph {filtered / alone:.2f}; / admin {filtered / admin:.2f}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

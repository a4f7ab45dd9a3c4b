"""What to evaluate: the QA set, the retrievers, their budget, the questions and the setting."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kgp.baselines import RETRIEVERS, known
from kgp.errors import ConfigurationError
from kgp.qa import QaItem
from kgp.settings import DEFAULT_K

SETTINGS = ("shared", "per-question")


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """One evaluation of ``retrievers`` on ``dataset``.

    ``retrievers``: names or comma-separated lists of them, ``all`` for every retriever that can
    run here; ``k``: every retriever's passage budget; ``limit``: only that many questions (with
    ``seed``, a random sample, and the RNGs seeded); ``setting``: ``shared`` or ``per-question``
    for native sets (kgp's format is always asked of the configured graph); ``corpus``: a
    ``[{title, text}]`` JSON file of more passages for the shared graph; ``reader``: answer from
    each retriever's passages and grade the answers."""

    dataset: Path
    retrievers: tuple[str, ...] = ("all",)
    k: int = DEFAULT_K
    limit: int | None = None
    seed: int | None = None
    setting: str = "shared"
    corpus: Path | None = None
    reader: bool = False

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigurationError(f"k must be at least 1, not {self.k}")
        if self.setting not in SETTINGS:
            raise ConfigurationError(
                f"unknown setting {self.setting!r}; choose from {', '.join(SETTINGS)}"
            )

    def named(self) -> set[str]:
        """The retrievers named one by one (not through ``all``): they must run."""
        return {n.strip() for r in self.retrievers for n in r.split(",")} - {"all"}


def parse_retrievers(names: Sequence[str]) -> list[str]:
    """Comma-separated names (or ``all``), checked against the known retrievers."""
    out: list[str] = []
    for name in names:
        for part in (p.strip() for p in name.split(",")):
            if part == "all":
                out += RETRIEVERS
            elif part and not known(part):
                raise ConfigurationError(
                    f"unknown retriever {part!r}; choose from all, {', '.join(RETRIEVERS)} "
                    "(or kgp-SCORER:SEEDER[:ORDER])"
                )
            elif part:
                out.append(part)
    if not out:
        raise ConfigurationError("no retrievers given")
    return list(dict.fromkeys(out))


def choose_items(items: list[QaItem], limit: int | None, seed: int | None) -> list[QaItem]:
    """The first ``limit`` questions, or with ``seed`` a random sample of ``limit``."""
    if limit is None or limit >= len(items):
        return items
    if seed is None:
        return items[:limit]
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]

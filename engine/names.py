"""The registries of kgp's interchangeable parts: scorers, seeders, orderings and retrieval
methods, each name with a one-line summary and where its implementation lives.

Settings validation, the CLI's help, ``kgp eval`` and the retriever all read them here, so the
lists cannot drift apart. The module imports nothing heavy (a ``kgp --help`` reads it): an
entry names its implementation as ``"module:attribute"``, imported by :meth:`Registry.load` on
first use. Adding a scorer is its class (or factory) plus one :class:`Entry` below."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kgp.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    summary: str  # one line for help texts and docs
    target: str  # "module:attribute" of the implementation, imported on first use


class Registry:
    """Names of one kind of part, in the order help texts list them."""

    def __init__(self, kind: str, entries: Iterable[Entry]) -> None:
        self.kind = kind
        self.entries = {entry.name: entry for entry in entries}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def check(self, name: str) -> str:
        """``name`` when registered, else a ConfigurationError listing the choices."""
        if name not in self.entries:
            raise ConfigurationError(
                f"unknown {self.kind} {name!r}; choose one of {', '.join(self.entries)}"
            )
        return name

    def load(self, name: str) -> Any:
        """The implementation registered as ``name`` (its module imported now)."""
        module, _, attribute = self.entries[self.check(name)].target.partition(":")
        return getattr(importlib.import_module(module), attribute)


# Eq. (1)'s f/g/φ for each hop of the traversal: factories taking the retriever's Services
SCORERS = Registry(
    "scorer",
    [
        Entry("tfidf", "TF-IDF cosine, question + path vs candidate", "kgp.agents.scorers:tfidf"),
        Entry("embedding", "encoder cosine, path vectors composed", "kgp.agents.scorers:embedding"),
        Entry("hybrid", "embedding + tfidf", "kgp.agents.scorers:hybrid"),
        Entry(
            "embedding-text",
            "encoder cosine, path text encoded",
            "kgp.agents.scorers:embedding_text",
        ),
        Entry(
            "mdr",
            "fine-tuned bi-encoder on question + path (KGP_MDR_MODEL, else the shipped model)",
            "kgp.agents.models:mdr",
        ),
        Entry("t5", "fine-tuned seq2seq evidence writer (KGP_T5_MODEL)", "kgp.agents.models:t5"),
        Entry("llm", "chat model writes the next evidence (KGP_LLM_*)", "kgp.agents.models:llm"),
    ],
)
# where the traversal starts (Algorithm 1's g(V, X, q)): functions (services, question, count)
SEEDERS = Registry(
    "seeder",
    [
        Entry("hybrid", "vector and full-text, fused by rank", "kgp.agents.seeders:hybrid"),
        Entry("vector", "the vector index", "kgp.agents.seeders:vector"),
        Entry("fulltext", "the full-text index", "kgp.agents.seeders:fulltext"),
        Entry("tfidf", "full-text hits re-ranked by TF-IDF", "kgp.agents.seeders:tfidf"),
        Entry("gnn", "GNN-Ret's nearest passages", "kgp.agents.seeders:gnn"),
    ],
)
# the final order of the K passages: functions of an Evidence (walk, cosines, links, texts)
ORDERS = Registry(
    "order",
    [
        Entry(
            "learned",
            "each passage by the shipped kgp-order model over its signals",
            "kgp.agents.learned:learned",
        ),
        Entry(
            "linked",
            "by similarity, passages that name each other's title paired",
            "kgp.agents.orderings:linked",
        ),
        Entry("visit", "as the traversal visited them", "kgp.agents.orderings:by_visit"),
        Entry("question", "by similarity to the question", "kgp.agents.orderings:by_question"),
        Entry("fused", "visit and similarity, fused by rank", "kgp.agents.orderings:fused"),
        Entry("paths", "each seed, then its best child", "kgp.agents.orderings:by_paths"),
    ],
)
# how passages are found: functions (parts, question, k) -> (seeds, walk, steps)
METHODS = Registry(
    "method",
    [
        Entry("kgp", "Algorithm 1", "kgp.agents.methods:algorithm_one"),
        Entry("gnn", "GNN-Ret", "kgp.agents.methods:gnn_ret"),
        Entry("rgnn", "RGNN-Ret", "kgp.agents.methods:rgnn_ret"),
    ],
)


# kgp eval's retrievers besides the traversal's kgp-SCORER[:SEEDER[:ORDER]]
ANSWER_BOUNDS = ("none", "golden")  # only meaningful with a reader
BASELINES = ("bm25", "tfidf", "knn", "dense", "mdr")
GNN_RETRIEVERS = ("gnn-ret", "rgnn-ret")
RETRIEVERS = (*ANSWER_BOUNDS, *BASELINES, *(f"kgp-{name}" for name in SCORERS), *GNN_RETRIEVERS)


def listing(names: Iterable[str]) -> str:
    """``a, b or c``: for help texts."""
    items = list(names)
    return ", ".join(items[:-1]) + " or " + items[-1] if len(items) > 1 else items[0]

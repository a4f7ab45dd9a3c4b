"""The retrievers ``kgp eval`` compares, all with the same passage budget ``k`` (KGP supplement
§8.2): ``bm25``, ``tfidf``, ``knn`` (dense top half + fuzzy Levenshtein top half), ``dense``,
``mdr`` (two-hop beam, pairs ranked by the product of their scores), ``none`` and ``golden``
(bounds for answering: no passages, the gold passages), ``kgp-<scorer>`` (the traversal with
the configured seeder; ``kgp-<scorer>:<seeder>[:<order>]`` picks the seeder and final order),
``gnn-ret`` and ``rgnn-ret`` (GNN-Ret and RGNN-Ret over the same graph)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from kgp.agents.context import RetrievalConfig, Services
from kgp.agents.passages import PassageCache
from kgp.agents.seeders import Seeder
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError
from kgp.names import (
    ANSWER_BOUNDS,
    BASELINES,
    GNN_RETRIEVERS,
    ORDERS,
    RETRIEVERS,
    SCORERS,
    SEEDERS,
)
from rapidfuzz import fuzz, process

SEEDER_BASELINES = {"dense": "vector", "bm25": "fulltext", "tfidf": "tfidf"}
KGP_RETRIEVERS = tuple(f"kgp-{name}" for name in SCORERS)
__all__ = ["ANSWER_BOUNDS", "BASELINES", "GNN_RETRIEVERS", "RETRIEVERS", "known", "make_runner"]

# Retrieve for a question (its text and its gold units): passage ids, best first.
Run = Callable[[str, Sequence[Sequence[str]]], list[str]]


def make_runner(kg: KnowledgeGraph, name: str, k: int) -> Run:
    """The retriever ``name`` over ``kg``; a :class:`ConfigurationError` when it cannot run here
    (a model scorer whose model is not configured)."""
    if name == "none":
        return lambda question, gold: []
    if name == "golden":
        return lambda question, gold: list(dict.fromkeys(p for unit in gold for p in unit))
    if name in SEEDER_BASELINES:
        seeder = Seeder(services(kg), SEEDER_BASELINES[name])
        return lambda question, gold: [pid for pid, _ in seeder.seeds(question, k)]
    if name == "knn":
        return Knn(kg, k)
    if name == "mdr":
        return TwoHopBeam(kg, k)
    if name in GNN_RETRIEVERS:
        gnn = kg.retriever(method=name.removesuffix("-ret"))
        return lambda question, gold: [p.id for p in gnn.retrieve(question, k).passages]
    if known(name) and name.startswith("kgp-"):
        scorer, *choice = name.removeprefix("kgp-").split(":")
        retriever = kg.retriever(
            scorer=scorer,
            seeder=choice[0] if choice else None,
            order=choice[1] if len(choice) > 1 else None,
        )
        return lambda question, gold: [p.id for p in retriever.retrieve(question, k).passages]
    raise ConfigurationError(f"unknown retriever {name!r}; choose from {', '.join(RETRIEVERS)}")


def services(kg: KnowledgeGraph) -> Services:
    """What a seeder baseline uses: the graph's store and encoder, and no passage cache (a
    baseline reads what it needs for each question, as a stateless retriever would)."""
    passages = PassageCache(kg.store, capacity=0)
    return Services(
        kg.store, kg.encoder.encode, RetrievalConfig(models=kg.settings), passages=passages
    )


def known(name: str) -> bool:
    """A retriever's name: one of :data:`RETRIEVERS`, or ``kgp-SCORER:SEEDER[:ORDER]``."""
    if name in RETRIEVERS:
        return True
    head, _, rest = name.partition(":")
    seeder, _, order = rest.partition(":")
    return head in KGP_RETRIEVERS and seeder in SEEDERS and (not order or order in ORDERS)


class Knn:
    """The paper's KNN baseline: the top half of the budget by embedding similarity, the rest
    by fuzzy matching (Levenshtein-based ``WRatio``) of the question against every passage."""

    def __init__(self, kg: KnowledgeGraph, k: int) -> None:
        self.kg = kg
        self.k = k
        self.dense = Seeder(services(kg), "vector")
        # every passage's id and text, by the caller that read them
        self._passages: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}

    def passages(self) -> tuple[list[str], list[str]]:
        """Every passage the caller may read, id and text, read once per caller (two
        queries)."""
        caller = self.kg.store.caller_now().key
        if caller not in self._passages:
            docs = [d.id for d in self.kg.store.list_documents()]
            rows = self.kg.store.document_passages(docs)
            self._passages[caller] = [r.id for r in rows], [r.text for r in rows]
        return self._passages[caller]

    def __call__(self, question: str, gold: Sequence[Sequence[str]]) -> list[str]:
        dense = [pid for pid, _ in self.dense.seeds(question, (self.k + 1) // 2)]
        ids, texts = self.passages()
        matches = process.extract(question, texts, scorer=fuzz.WRatio, limit=self.k)
        fuzzy = [ids[index] for _, _, index in matches]
        return list(dict.fromkeys([*dense, *fuzzy]))[: self.k]


class TwoHopBeam:
    """MDR's retrieval (supplement §8.2): the ``first`` passages nearest the question, then for
    each the ``second`` nearest to question + that passage; the pairs ranked by the product of
    their two scores, flattened into passages until the budget is spent. Four store calls."""

    def __init__(self, kg: KnowledgeGraph, k: int, first: int = 15, second: int = 3) -> None:
        self.store = kg.store
        self.encode = kg.encoder.encode
        self.k, self.first, self.second = k, first, second

    def __call__(self, question: str, gold: Sequence[Sequence[str]]) -> list[str]:
        hits = self.store.vector_search(self.encode([question])[0].tolist(), self.first)
        if not hits:
            return []
        texts = self.store.passage_vectors([h.id for h in hits])
        queries = [f"{question} {texts[h.id].text if h.id in texts else ''}" for h in hits]
        vectors = self.encode(queries)
        found = self.store.nearest(
            vectors.tolist(), want=self.second, exclude_ids=[[h.id] for h in hits]
        )
        stored = self.store.passage_vectors({pid for row in found for pid, _ in row})
        per_hit: dict[int, list[tuple[float, str]]] = {}
        for i, row in enumerate(found):
            for pid, _ in row[: self.second]:
                if pid in stored:
                    score = float(np.dot(vectors[i], np.asarray(stored[pid].embedding)))
                    per_hit.setdefault(i, []).append((score, pid))
        pairs = [
            (hits[i].score * score, hits[i].id, pid)
            for i, scored in per_hit.items()
            for score, pid in sorted(scored, reverse=True)[: self.second]
        ]
        pairs.sort(key=lambda pair: -pair[0])
        ranked = [pid for _, a, b in pairs for pid in (a, b)]
        ranked += [h.id for h in hits]  # first-hop passages whose pairs all fell short
        return list(dict.fromkeys(ranked))[: self.k]

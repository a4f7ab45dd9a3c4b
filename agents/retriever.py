"""The retriever: seeds, then Algorithm 1 over the store's neighbourhoods, scored per hop."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from kgp.agents.models import model_scorer
from kgp.agents.scorers import EmbeddingScorer, TfidfScorer
from kgp.agents.seeders import Seeder, reciprocal_rank_fusion
from kgp.agents.traversal import Score, traverse
from kgp.errors import ConfigurationError
from kgp.settings import Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import EdgeKind
from kgp.stores.tracer import QueryEvent

SCORERS = ("embedding", "embedding-text", "tfidf", "mdr", "t5", "llm")
# the final order of the K passages: as visited, by similarity to the question alone, or both
# fused by reciprocal rank
ORDERS = ("visit", "question", "fused")
MAX_QUESTION_CHARS = 4000
CACHE_ROWS = 200_000  # passages a retriever keeps in memory between questions


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    id: str
    text: str
    score: float
    document: dict[str, str]
    page: int
    path: list[str]
    hop: int


@dataclass
class Retrieval:
    question: str
    passages: list[RetrievedPassage] = field(default_factory=list)
    seeds: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    store_calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def clean_question(question: str) -> str:
    text = " ".join(str(question).split())
    if not text:
        raise ConfigurationError("the question is empty; ask something")
    return text[:MAX_QUESTION_CHARS]


class Retriever:
    """KGP retrieval over one store. ``embed`` is the sentence encoder's batch function."""

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        *,
        seeder: str = "hybrid",
        scorer: str = "embedding",
        seeds: int = 10,
        branching: int = 3,
        kinds: Iterable[EdgeKind] = tuple(EdgeKind),
        neighbour_limit: int = 30,
        max_df: int = 50,
        order: str = "fused",
        settings: Settings | None = None,
    ) -> None:
        """``settings`` give the model paths and endpoint of the mdr, t5 and llm scorers."""
        if scorer not in SCORERS:
            raise ConfigurationError(
                f"unknown scorer {scorer!r}; available here: {', '.join(SCORERS)}"
            )
        if order not in ORDERS:
            raise ConfigurationError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
        self.store = store
        self._embed = embed
        self._encoded: dict[str, np.ndarray] = {}
        self.seeder = Seeder(store, self._embed_question, seeder, self._texts)
        self.order = order
        self._rows: dict[str, dict[str, Any]] = {}
        self.settings = settings
        self.scorer = self._make_scorer(scorer)
        self.seed_count = seeds
        self.branching = branching
        self.kinds = tuple(kinds)
        self.neighbour_limit = neighbour_limit
        self.max_df = max_df

    def _make_scorer(self, name: str) -> Score:
        if name == "tfidf":
            return TfidfScorer(self._texts)
        if name.startswith("embedding"):
            return EmbeddingScorer(
                self._embed_question,
                self._texts,
                self._vectors,
                encode_paths=name == "embedding-text",
            )
        if self.settings is None:
            raise ConfigurationError(f"scorer {name!r} needs settings (its model or endpoint)")
        return model_scorer(
            name,
            self.settings,
            embed=self._embed_question,
            texts=self._texts,
            vectors=self._vectors,
        )

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        return self._texts(ids)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self._vectors(ids)

    def forget(self) -> None:
        """Drop cached passages (after the graph changed)."""
        self._rows.clear()

    def _embed_question(self, texts: list[str]) -> np.ndarray:
        """The encoder, remembering the question's vector (the seeder and the final ordering
        both need it)."""
        if len(texts) != 1:
            return self._embed(texts)
        if texts[0] not in self._encoded:
            self._encoded = {texts[0]: self._embed(texts)}
        return self._encoded[texts[0]]

    def _ordered(self, question: str, ids: list[str]) -> list[str]:
        if self.order == "visit" or len(ids) < 2:
            return ids
        vectors = self._vectors(ids)
        query = self._embed_question([question])[0]
        similar = sorted(
            ids,
            key=lambda i: -float(np.dot(query, vectors[i])) if i in vectors else float("inf"),
        )
        if self.order == "question":
            return similar
        return [pid for pid, _ in reciprocal_rank_fusion([ids, similar], len(ids))]

    def _load(self, ids: Sequence[str]) -> None:
        missing = [i for i in ids if i not in self._rows]
        if missing:
            if len(self._rows) + len(missing) > CACHE_ROWS:
                self._rows.clear()
            for pid, row in self.store.passage_vectors(missing).items():
                row["embedding"] = np.asarray(row["embedding"], dtype=np.float32)
                self._rows[pid] = row

    def _texts(self, ids: Sequence[str]) -> dict[str, str]:
        self._load(ids)
        return {i: str(self._rows[i]["text"]) for i in ids if i in self._rows}

    def _vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._load(ids)
        return {i: self._rows[i]["embedding"] for i in ids if i in self._rows}

    def _expand(self, ids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {i: [] for i in ids}
        for n in self.store.neighbours(
            ids, self.kinds, limit=self.neighbour_limit, max_df=self.max_df
        ):
            found.setdefault(n.source, []).append(n.target)
        # the scorer needs the paths' texts and the candidates' vectors: one fetch for the hop
        self._load([*ids, *(t for targets in found.values() for t in targets)])
        return found

    def retrieve(self, question: str, k: int = 30) -> Retrieval:
        question = clean_question(question)
        if k < 1:
            raise ConfigurationError(f"k must be at least 1, not {k}")
        calls = 0
        previous = self.store.tracer

        def count(event: QueryEvent) -> None:
            nonlocal calls
            calls += 1
            if previous is not None:
                previous(event)

        self.store.tracer = count
        try:
            return self._retrieve(question, k, lambda: calls)
        finally:
            self.store.tracer = previous

    def _retrieve(self, question: str, k: int, calls: Callable[[], int]) -> Retrieval:
        started = time.perf_counter()
        seeds = self.seeder.seeds(question, min(self.seed_count, k))
        seeded = time.perf_counter()
        walk = traverse(
            question, seeds, self._expand, self.scorer, budget=k, branching=self.branching
        )
        walked = time.perf_counter()
        self._load(walk.ids())
        ids = self._ordered(question, walk.ids())
        docs = self.store.fetch_nodes(
            {str(self._rows[i]["doc_id"]) for i in ids if i in self._rows}
        )
        passages = []
        for pid in ids:
            row = self._rows.get(pid)
            if row is None:
                continue
            doc = docs.get(str(row["doc_id"]), {})
            visit = walk.visits[pid]
            passages.append(
                RetrievedPassage(
                    id=pid,
                    text=str(row["text"]),
                    score=round(visit.score, 6),
                    document={
                        "id": str(row["doc_id"]),
                        "path": str(doc.get("path", "")),
                        "title": str(doc.get("title", "")),
                    },
                    page=int(row.get("page") or 1),
                    path=list(visit.path),
                    hop=visit.hop,
                )
            )
        done = time.perf_counter()
        return Retrieval(
            question=question,
            passages=passages,
            seeds=[{"id": s, "score": round(float(v), 6)} for s, v in seeds],
            timings={
                "seed_ms": round(1000 * (seeded - started), 2),
                "traverse_ms": round(1000 * (walked - seeded), 2),
                "fetch_ms": round(1000 * (done - walked), 2),
                "total_ms": round(1000 * (done - started), 2),
            },
            store_calls=calls(),
        )

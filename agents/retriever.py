"""The retriever: seeds, then Algorithm 1 over the store's neighbourhoods, scored per hop."""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from kgp.agents.gnn import GnnRetriever, RecurrentGnnRetriever, describe, gnn_params
from kgp.agents.llm import ChatClient
from kgp.agents.models import model_scorer
from kgp.agents.scorers import EmbeddingScorer, SumScorer, TfidfScorer
from kgp.agents.seeders import Seeder, reciprocal_rank_fusion
from kgp.agents.structural import detect, resolve
from kgp.agents.traversal import Score, Traversal, Visit, traverse
from kgp.errors import ConfigurationError, LlmError
from kgp.names import METHODS, ORDERS, SCORERS
from kgp.settings import Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import EdgeKind

MAX_QUESTION_CHARS = 4000
CACHE_ROWS = 200_000  # passages a retriever keeps in memory between questions


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    """One piece of evidence. ``score`` is what the final order is by (the cosine with the
    question by default; 1.0 for the pages and tables a structural question names, which come
    first); ``step_score`` is the score the traversal took it with (Eq. 1, or the seed's)."""

    id: str
    text: str
    score: float
    document: dict[str, str]
    page: int
    path: list[str]
    hop: int
    kind: str = "passage"  # "table": a whole table's Markdown; "table-rows": a passage of its rows
    step_score: float = 0.0
    table: str | None = None  # the table a "table-rows" passage belongs to


@dataclass
class Retrieval:
    question: str
    passages: list[RetrievedPassage] = field(default_factory=list)
    seeds: list[dict[str, Any]] = field(default_factory=list)
    structure: dict[str, Any] | None = None  # pages and tables the question named, if any
    steps: dict[str, Any] | None = None  # RGNN-Ret: sub-questions, answers, why it stopped
    timings: dict[str, float] = field(default_factory=dict)
    store_calls: int = 0
    notices: list[str] = field(default_factory=list)  # what the user should know (a cut question)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def save(self, store: GraphStore, *, scorer: str, seeder: str) -> str:
        """Keep this retrieval in the graph as a ``Trace`` (for Neo4j Browser); its id."""
        created = datetime.now(UTC).isoformat(timespec="seconds")
        digest = hashlib.sha256(f"{created}|{self.question}".encode()).hexdigest()[:10]
        trace = {
            "id": f"trace-{created}-{digest}",
            "question": self.question,
            "created": created,
            "scorer": scorer,
            "seeder": seeder,
        }
        rows: dict[str, list[dict[str, Any]]] = {"passage": [], "table": []}
        for rank, p in enumerate(self.passages, start=1):
            node = "table" if p.kind == "table" else "passage"  # table rows are Passage nodes
            rows[node].append({"id": p.id, "rank": rank, "hop": p.hop, "score": p.score})
        steps = {
            (a, b): {"source": a, "target": b, "hop": hop}
            for p in self.passages
            if p.kind != "table" and p.hop > 0
            for hop, (a, b) in enumerate(itertools.pairwise(p.path), start=1)
        }
        return store.save_trace(trace, rows["passage"], rows["table"], list(steps.values()))


def clean_question(question: str) -> tuple[str, list[str]]:
    """The question with its whitespace collapsed, and notices about it (one cut to the length
    limit says so)."""
    text = " ".join(str(question).split())
    if not text:
        raise ConfigurationError("the question is empty; ask something")
    if len(text) <= MAX_QUESTION_CHARS:
        return text, []
    return text[:MAX_QUESTION_CHARS], [
        f"the question has {len(text):,} characters; only its first {MAX_QUESTION_CHARS:,} "
        "were used"
    ]


class Retriever:
    """KGP retrieval over one store. ``embed`` is the sentence encoder's batch function."""

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        *,
        seeder: str = "hybrid",
        scorer: str = "tfidf",
        seeds: int = 10,
        branching: int = 3,
        kinds: Iterable[EdgeKind] = tuple(EdgeKind),
        neighbour_limit: int = 30,
        max_df: int = 50,
        order: str = "question",
        settings: Settings | None = None,
        method: str = "kgp",
    ) -> None:
        """``settings`` give the model paths and endpoint of the mdr, t5 and llm scorers, and
        GNN-Ret's parameters. ``method``: ``kgp`` (Algorithm 1), ``gnn`` (GNN-Ret's ranking) or
        ``rgnn`` (RGNN-Ret, with the chat model)."""
        if method not in METHODS:
            raise ConfigurationError(
                f"unknown method {method!r}; choose one of {', '.join(METHODS)}"
            )
        if scorer not in SCORERS:
            raise ConfigurationError(
                f"unknown scorer {scorer!r}; available here: {', '.join(SCORERS)}"
            )
        if order not in ORDERS:
            raise ConfigurationError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
        self.store = store
        self._embed = embed
        self._encoded: dict[str, np.ndarray] = {}
        self.settings = settings
        self.method = method
        self._gnn: GnnRetriever | None = None  # built on first use (method gnn/rgnn, gnn seeds)
        self.max_df = max_df
        self.recurrent = self._recurrent() if method == "rgnn" else None
        self.seeder = Seeder(store, self._embed_question, seeder, self._texts, self._gnn_seeds)
        self.order = order if method == "kgp" else "visit"  # GNN-Ret's order is its ranking
        self._rows: dict[str, dict[str, Any]] = {}
        self.scorer = self._make_scorer(scorer)
        self._structure_model = self._ask_structure()
        self.seed_count = seeds
        self.branching = branching
        self.kinds = tuple(kinds)
        self.neighbour_limit = neighbour_limit

    def _make_scorer(self, name: str) -> Score:
        if name == "tfidf":
            return TfidfScorer(self._texts)
        if name == "hybrid":
            return SumScorer("hybrid", [self._make_scorer("embedding"), TfidfScorer(self._texts)])
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

    @property
    def gnn(self) -> GnnRetriever:
        if self._gnn is None:
            params = gnn_params(self.settings)
            self._gnn = GnnRetriever(self.store, self._embed_question, params, max_df=self.max_df)
        return self._gnn

    def _gnn_seeds(self, question: str, count: int) -> list[tuple[str, float]]:
        return [(pid, round(1.0 - d, 6)) for pid, d in self.gnn.retrieve(question, count)]

    def _recurrent(self) -> RecurrentGnnRetriever:
        settings = self.settings
        if settings is None or not settings.llm_base_url or not settings.llm_model:
            raise ConfigurationError(
                "rgnn needs a chat model for its sub-questions: set KGP_LLM_BASE_URL and "
                "KGP_LLM_MODEL"
            )
        return RecurrentGnnRetriever(self.gnn, ChatClient(settings), max_steps=settings.rgnn_steps)

    def _ask_structure(self) -> Callable[[str], str] | None:
        """The chat model for structural references the rules miss, when one is configured;
        if it fails, the question is answered as a content question."""
        settings = self.settings
        if settings is None or not settings.llm_base_url or not settings.llm_model:
            return None
        client = ChatClient(settings)

        def ask(prompt: str) -> str:
            try:
                return client.complete([{"role": "user", "content": prompt}], max_tokens=64)
            except LlmError:
                return ""

        return ask

    def forget(self) -> None:
        """Drop cached passages (after the graph changed)."""
        self._rows.clear()
        for part in [self.scorer, *getattr(self.scorer, "parts", [])]:
            if hasattr(part, "forget"):
                part.forget()

    def _embed_question(self, texts: list[str]) -> np.ndarray:
        """The encoder, remembering the question's vector (the seeder and the final ordering
        both need it)."""
        if len(texts) != 1:
            return self._embed(texts)
        if texts[0] not in self._encoded:
            self._encoded = {texts[0]: self._embed(texts)}
        return self._encoded[texts[0]]

    def _ordered(self, question: str, walk: Traversal) -> list[tuple[str, float]]:
        """The retrieved passages in their final order, each with the score that order is by:
        the cosine with the question (``question``, ``paths``), the reciprocal-rank fusion of
        visiting order and similarity (``fused``), or the traversal's own (``visit``)."""
        ids = walk.ids()
        if self.order == "visit" or len(ids) < 2:
            return [(pid, walk.visits[pid].score) for pid in ids]
        vectors = self._vectors(ids)
        query = self._embed_question([question])[0]
        cosine = {pid: float(np.dot(query, vectors[pid])) for pid in ids if pid in vectors}
        similar = sorted(ids, key=lambda i: -cosine[i] if i in cosine else float("inf"))
        if self.order == "question":
            return [(pid, cosine.get(pid, 0.0)) for pid in similar]
        if self.order == "paths":  # each seed, by similarity, then its best-scored child
            children: dict[str, list[Visit]] = {}
            for visit in walk.visits.values():
                if visit.parent is not None:
                    children.setdefault(visit.parent, []).append(visit)
            out: dict[str, None] = {}
            for pid in similar:
                if walk.visits[pid].hop == 0:
                    out[pid] = None
                    best = max(children.get(pid, []), key=lambda v: v.score, default=None)
                    if best is not None:
                        out[best.id] = None
            return [(pid, cosine.get(pid, 0.0)) for pid in dict.fromkeys([*out, *similar])]
        return reciprocal_rank_fusion([ids, similar], len(ids))

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
        if k < 1:
            raise ConfigurationError(f"k must be at least 1, not {k}; ask for one passage or more")
        question, notices = clean_question(question)
        with self.store.counting() as calls:
            result = self._retrieve(question, k, calls)
        result.notices = notices + result.notices
        return result

    def _retrieve(self, question: str, k: int, calls: Callable[[], int]) -> Retrieval:
        started = time.perf_counter()
        steps: dict[str, Any] | None = None
        if self.method == "kgp":
            # at most a third of the budget goes to seeds, so a small k still leaves room to hop
            seeds = self.seeder.seeds(question, min(self.seed_count, max(1, -(-k // 3))))
            seeded = time.perf_counter()
            walk = traverse(
                question, seeds, self._expand, self.scorer, budget=k, branching=self.branching
            )
        else:  # GNN-Ret / RGNN-Ret: one ranking by integrated distance, every passage a seed
            if self.recurrent is not None:
                outcome = self.recurrent.retrieve(question, k)
                ranked, steps = outcome.passages, describe(outcome)
            else:
                ranked = self.gnn.retrieve(question, k)
            seeds = [(pid, round(1.0 - d, 6)) for pid, d in ranked]
            seeded = time.perf_counter()
            walk = Traversal(
                {pid: Visit(pid, 0, score, (pid,), n) for n, (pid, score) in enumerate(seeds)}
            )
        walked = time.perf_counter()
        self._load(walk.ids())
        order = [(i, score) for i, score in self._ordered(question, walk) if i in self._rows]
        ids = [i for i, _ in order]
        reference = detect(question, self._structure_model)
        structure = resolve(
            self.store,
            question,
            reference,
            list(dict.fromkeys(str(self._rows[i]["doc_id"]) for i in ids)),
        )
        resolved = time.perf_counter()
        items = structure.items[: max(1, k - min(5, k // 3))] if structure.items else []
        taken = {item.id for item in items}
        ranking = dict(order)
        ids = [i for i in ids if i not in taken][: k - len(items)]
        docs = self.store.fetch_nodes(
            {item.doc_id for item in items} | {str(self._rows[i]["doc_id"]) for i in ids}
        )

        def document(doc_id: str) -> dict[str, str]:
            node = docs.get(doc_id, {})
            return {
                "id": doc_id,
                "path": str(node.get("path", "")),
                "title": str(node.get("title", "")),
            }

        passages = [
            RetrievedPassage(
                id=item.id,
                text=item.text,
                score=1.0,
                step_score=1.0,
                document=document(item.doc_id),
                page=item.page,
                path=[item.via, item.id] if item.via != item.id else [item.id],
                hop=0,
                kind=item.kind,
            )
            for item in items
        ]
        for pid in ids:
            row = self._rows[pid]
            visit = walk.visits[pid]
            passages.append(
                RetrievedPassage(
                    id=pid,
                    text=str(row["text"]),
                    score=round(ranking[pid], 6),
                    step_score=round(visit.score, 6),
                    document=document(str(row["doc_id"])),
                    page=int(row.get("page") or 1),
                    path=list(visit.path),
                    hop=visit.hop,
                    kind="table-rows" if row.get("table_id") else "passage",
                    table=str(row["table_id"]) if row.get("table_id") else None,
                )
            )
        done = time.perf_counter()
        return Retrieval(
            question=question,
            passages=passages,
            seeds=[{"id": s, "score": round(float(v), 6)} for s, v in seeds],
            structure=structure.as_dict() if reference else None,
            timings={
                "seed_ms": round(1000 * (seeded - started), 2),
                "traverse_ms": round(1000 * (walked - seeded), 2),
                "structure_ms": round(1000 * (resolved - walked), 2),
                "fetch_ms": round(1000 * (done - resolved), 2),
                "total_ms": round(1000 * (done - started), 2),
            },
            store_calls=calls(),
            steps=steps,
            notices=list(structure.notices),
        )

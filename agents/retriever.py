"""The retriever: a question in, a :class:`~kgp.agents.results.Retrieval` out.

Its configuration is a frozen :class:`~kgp.agents.context.RetrievalConfig`; its method, seeder,
scorer and final order come from the registries in ``kgp.names``; its parts share one
:class:`~kgp.agents.context.Services` (store, encoder, passage cache, GNN-Ret). Models load on
the first question. A retriever is safe to share between threads: its configuration is
immutable and every cache it holds is behind a lock."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from kgp.agents.context import OnFirstUse, QuestionVectors, RetrievalConfig, Services
from kgp.agents.learned import learned, shipped_order
from kgp.agents.methods import Found, Method, Parts
from kgp.agents.orderings import Evidence, Ranked, by_visit, linked
from kgp.agents.passages import CachedPassage, PassageCache
from kgp.agents.results import Retrieval, RetrievedPassage
from kgp.agents.seeders import Seeder
from kgp.agents.structural import StructuralItem, by_similarity, detect, resolve
from kgp.agents.traversal import Score
from kgp.errors import ConfigurationError, LlmError, ModelMissingError
from kgp.ingest.keywords import passage_links
from kgp.names import METHODS, ORDERS, SCORERS
from kgp.settings import DEFAULT_K, MAX_QUESTION_CHARS
from kgp.stores.base import GraphStore
from kgp.stores.coverage import read_covered
from kgp.stores.model import StoredPassage

if TYPE_CHECKING:
    from kgp.agents.rgnn import RecurrentGnnRetriever

log = logging.getLogger(__name__)
_said: set[str] = set()  # the fallbacks already logged by this process
Documents = dict[str, dict[str, Any]]  # document id -> its node's properties
RGNN_NEEDS_CHAT = (
    "rgnn needs a chat model for its sub-questions: set KGP_LLM_BASE_URL and KGP_LLM_MODEL"
)


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
    """KGP retrieval over one store. ``embed`` is the graph's sentence encoder (batch
    function), ``encoder`` its name as the graph records it."""

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        config: RetrievalConfig | None = None,
        *,
        encoder: str = "",
    ) -> None:
        self.config = config or RetrievalConfig()
        if self.config.method == "rgnn":
            self.config.chat_settings(RGNN_NEEDS_CHAT)
        self.store = store
        self.passages = PassageCache(store)
        self.services = Services(
            store,
            QuestionVectors(embed, scope=self.passages.scope),
            self.config,
            passages=self.passages,
            encoder=encoder,
        )
        self.scorer: Score = SCORERS.load(self.config.scorer)(self.services)
        self.method: Method = METHODS.load(self.config.method)
        self.order: Callable[..., Ranked] = ORDERS.load(self.config.order)
        self.order_notice = ""
        if self.order is learned:
            self.order, self.order_notice = _learned_or_linked()
        self._parts = Parts(
            services=self.services,
            seeder=Seeder(self.services, self.config.seeder),
            scorer=self.scorer,
            expand=self._expand,
            recurrent=OnFirstUse(self._recurrent).get,
        )
        self._structure_model = OnFirstUse(self._chat_for_structure)

    def _recurrent(self) -> RecurrentGnnRetriever:
        from kgp.agents.llm import ChatClient
        from kgp.agents.rgnn import RecurrentGnnRetriever

        settings = self.config.chat_settings(RGNN_NEEDS_CHAT)
        assert settings is not None  # chat_settings raised otherwise
        return RecurrentGnnRetriever(
            self.services.gnn, ChatClient(settings), max_steps=settings.rgnn_steps
        )

    def _chat_for_structure(self) -> Callable[[str], str] | None:
        """The chat model for structural references the rules miss, when one is configured;
        if it fails, the question is answered as a content question."""
        settings = self.config.chat_settings("")
        if settings is None:
            return None
        from kgp.agents.llm import ChatClient

        client = ChatClient(settings)

        def ask(prompt: str) -> str:
            try:
                return client.complete([{"role": "user", "content": prompt}], max_tokens=64)
            except LlmError:
                return ""

        return ask

    def forget(self) -> None:
        """Drop cached passages (after the graph changed)."""
        self.passages.clear()
        for part in [self.scorer, *getattr(self.scorer, "parts", [])]:
            if hasattr(part, "forget"):
                part.forget()

    def _expand(self, ids: Sequence[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {i: [] for i in ids}
        config = self.config
        for n in self.store.neighbours(
            ids, config.kinds, limit=config.neighbour_limit, max_df=config.max_df
        ):
            found.setdefault(n.source, []).append(n.target)
        # the paths' and candidates' texts, one query for the hop; a scorer by vectors reads
        # them in a second (vectors cost twenty times the texts to read; TF-IDF reads none)
        self.passages.get(
            [*ids, *(t for targets in found.values() for t in targets)], vectors=False
        )
        return found

    def _evidence(
        self, question: str, found: Found, rows: dict[str, CachedPassage], docs: Documents
    ) -> Evidence:
        """What the final order reads of the retrieved passages: their cosines with the
        question, the links among them, their texts and their documents' titles (the one
        document lookup of the question, into ``docs``, which the result reuses)."""
        walk = found.walk
        query = self.services.embed([question])[0]
        ids = walk.ids()
        cosine = {pid: float(np.dot(query, v)) for pid, v in self.passages.vectors(ids).items()}
        self._documents([rows[pid] for pid in cosine], (), docs)
        return Evidence(
            walk,
            cosine,
            passage_links({pid: rows[pid] for pid in cosine}, docs),
            question=question,
            texts={pid: rows[pid].text for pid in cosine},
            titles={pid: str(docs.get(rows[pid].doc_id, {}).get("title", "")) for pid in cosine},
        )

    def _ordered(
        self, question: str, found: Found, rows: dict[str, CachedPassage], docs: Documents
    ) -> Ranked:
        """The retrieved passages in their final order, each with the score that order is by."""
        if self.order is by_visit or len(found.walk.ids()) < 2:
            return by_visit(Evidence(found.walk, {}))
        return self.order(self._evidence(question, found, rows, docs))

    def evidence(self, question: str, k: int = DEFAULT_K) -> Evidence:
        """What the final order reads for ``question`` (what ``kgp train order`` fits on)."""
        question, _ = clean_question(question)
        found = self.method(self._parts, question, k)
        rows = self.passages.get(found.walk.ids(), vectors=False)
        return self._evidence(question, found, rows, {})

    def retrieve(self, question: str, k: int = DEFAULT_K) -> Retrieval:
        if k < 1:
            raise ConfigurationError(f"k must be at least 1, not {k}; ask for one passage or more")
        question, notices = clean_question(question)
        # a caller reading every document skips the document checks (kgp.stores.coverage)
        result = read_covered(self.store, partial(self._counted, question, k), again=self.forget)
        result.notices = notices + result.notices
        return result

    def _counted(self, question: str, k: int) -> Retrieval:
        """A retrieval with its store calls (not those asking whether it may skip the checks:
        their number would tell a caller whether it reads every document)."""
        with self.store.counting() as calls:
            result = self._retrieve(question, k)
            result.store_calls = calls()
        return result

    def _retrieve(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        found = self.method(self._parts, question, k)
        walked = time.perf_counter()
        rows = self.passages.get(found.walk.ids(), vectors=False)  # an order reads its own
        docs: Documents = {}
        ranked = self._ordered(question, found, rows, docs)
        order = [(i, score) for i, score in ranked if i in rows]
        ids = [i for i, _ in order]
        reference = detect(question, self._structure_model.get())
        structure = resolve(
            self.store, question, reference, list(dict.fromkeys(rows[i].doc_id for i in ids))
        )
        named = self._named_passages(question, structure.named)
        resolved = time.perf_counter()
        items = structure.items[: max(1, k - min(5, k // 3))] if structure.items else []
        taken = {item.id for item in items}
        # the documents the question names lead the content; a table given whole is not
        # repeated by the passages of its rows
        content: dict[str, CachedPassage | StoredPassage] = {p.id: p for p, _ in named}
        for i in ids:
            content.setdefault(i, rows[i])
        chosen = [p for p in content.values() if p.id not in taken and p.table_id not in taken]
        ranking = dict(order) | {p.id: score for p, score in named}
        passages = self._passages(found, items, ranking, chosen[: k - len(items)], docs)
        done = time.perf_counter()
        return Retrieval(
            question=question,
            passages=passages,
            seeds=[{"id": s, "score": round(float(v), 6)} for s, v in found.seeds],
            structure=structure.as_dict() if structure.reference else None,
            timings={
                "seed_ms": round(1000 * found.seed_seconds, 2),
                "traverse_ms": round(1000 * (walked - started - found.seed_seconds), 2),
                "structure_ms": round(1000 * (resolved - walked), 2),
                "fetch_ms": round(1000 * (done - resolved), 2),
                "total_ms": round(1000 * (done - started), 2),
            },
            steps=found.steps,
            notices=[*([self.order_notice] if self.order_notice else []), *structure.notices],
        )

    def _named_passages(
        self, question: str, documents: Sequence[str]
    ) -> list[tuple[StoredPassage, float]]:
        """Every passage of the documents a structural question names, by similarity to the
        question (their stored vectors: one query, no encoder call for the passages)."""
        if not documents:
            return []
        query = self.services.embed([question])[0]
        return by_similarity(query, self.store.document_passages(documents))

    def _documents(
        self,
        passages: Sequence[CachedPassage | StoredPassage],
        more: Sequence[str],
        docs: Documents,
    ) -> None:
        """Add to ``docs`` the documents of ``passages`` and the ids ``more``: from what the
        passage rows hold of their documents (title and path), one ``fetch_nodes`` for the
        rest."""
        for passage in passages:
            if passage.doc_id not in docs and passage.doc_title is not None:
                docs[passage.doc_id] = {"title": passage.doc_title, "path": passage.doc_path or ""}
        wanted = {*more, *(p.doc_id for p in passages)} - docs.keys()
        if wanted:
            docs.update(self.store.fetch_nodes(wanted))

    def _passages(
        self,
        found: Found,
        items: Sequence[StructuralItem],
        ranking: dict[str, float],
        chosen: Sequence[CachedPassage | StoredPassage],
        docs: Documents,
    ) -> list[RetrievedPassage]:
        """The evidence: the pages and tables the question named first, then the passages. A
        passage of a named document that the traversal did not reach is there by its
        document: its path is the document and the passage, its step score its similarity."""
        self._documents(chosen, [item.doc_id for item in items], docs)

        def document(doc_id: str) -> dict[str, str]:
            node = docs.get(doc_id, {})
            return {
                "id": doc_id,
                "path": str(node.get("path", "")),
                "title": str(node.get("title", "")),
            }

        out = [
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
        for passage in chosen:
            score = ranking[passage.id]
            visit = found.walk.visits.get(passage.id)
            out.append(
                RetrievedPassage(
                    id=passage.id,
                    text=passage.text,
                    score=round(score, 6),
                    step_score=round(visit.score if visit else score, 6),
                    document=document(passage.doc_id),
                    page=passage.page,
                    path=list(visit.path) if visit else [passage.doc_id, passage.id],
                    hop=visit.hop if visit else 0,
                    kind="table-rows" if passage.table_id else "passage",
                    table=passage.table_id,
                )
            )
        return out


def _learned_or_linked() -> tuple[Callable[..., Ranked], str]:
    """The shipped learned order, or the linked order with a notice when its model is missing
    or damaged (logged once per process)."""
    try:
        return shipped_order(), ""
    except ModelMissingError as exc:
        if str(exc) not in _said:
            _said.add(str(exc))
            log.warning("%s", exc)
        return linked, str(exc)

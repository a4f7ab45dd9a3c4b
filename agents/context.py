"""What a retrieval is configured with (:class:`RetrievalConfig`, frozen) and what its parts may
use (:class:`Services`): the store, the graph's encoder, the passage cache and GNN-Ret. Scorer
and seeder factories registered in ``kgp.names`` receive the services, never the retriever."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from kgp.agents.passages import PassageCache
from kgp.errors import ConfigurationError
from kgp.names import METHODS, ORDERS, SCORERS, SEEDERS
from kgp.settings import Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import EdgeKind

if TYPE_CHECKING:
    from kgp.agents.gnn import GnnRetriever

T = TypeVar("T")
# what a question's retrieval does beside its main line (the full-text seeds while the question
# is encoded): a thread for each question that may run at once (kgp serve's handlers run on
# anyio's 40 threads), each started when first needed
_MEANWHILE = ThreadPoolExecutor(max_workers=64, thread_name_prefix="kgp-meanwhile")
QUESTION_VECTORS = 256  # question vectors remembered (the seeder, scorer and order share one)


def _default(name: str) -> Any:
    return Settings.model_fields[name].default


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """How to retrieve. ``models`` gives the model paths, the chat endpoint and GNN-Ret's
    parameters (the settings, themselves frozen); without it only the scorers and methods that
    need none of them can run."""

    # the defaults are the settings' (defined there once)
    method: str = _default("method")  # kgp.names.METHODS
    scorer: str = _default("scorer")  # kgp.names.SCORERS
    seeder: str = _default("seeder")  # kgp.names.SEEDERS
    order: str = _default("order")  # kgp.names.ORDERS; for GNN-Ret, its own ranking ("visit")
    seeds: int = _default("seeds")
    branching: int = _default("branching")
    kinds: tuple[EdgeKind, ...] = tuple(EdgeKind)
    neighbour_limit: int = 30
    max_df: int = _default("keyword_max_df")
    models: Settings | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        METHODS.check(self.method)
        SCORERS.check(self.scorer)
        SEEDERS.check(self.seeder)
        ORDERS.check(self.order)
        if self.method != "kgp":  # GNN-Ret ranks by itself: no scorer, seeder or order to load
            for name, value in (("scorer", "tfidf"), ("seeder", "hybrid"), ("order", "visit")):
                object.__setattr__(self, name, value)

    @classmethod
    def from_settings(cls, settings: Settings, **choices: Any) -> RetrievalConfig:
        """The settings' defaults, with ``choices`` (fields of this class; None keeps the
        setting)."""
        config = cls(
            method=settings.method,
            scorer=settings.scorer,
            seeder=settings.seeder,
            order=settings.order,
            seeds=settings.seeds,
            branching=settings.branching,
            max_df=settings.keyword_max_df,
            models=settings,
        )
        return replace(config, **{k: v for k, v in choices.items() if v is not None})

    def chat_settings(self, missing: str) -> Settings | None:
        """The settings when a chat model is configured; None, or with ``missing`` a
        ConfigurationError saying so."""
        if self.models is None or not self.models.llm_base_url or not self.models.llm_model:
            if missing:
                raise ConfigurationError(missing)
            return None
        return self.models


_UNSET = object()


class OnFirstUse:
    """A value built by ``build`` the first time it is asked for (thread-safe): models load on
    the first question, never in a constructor."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._value: Any = _UNSET  # None is a value (no chat model configured, say)
        self._lock = threading.Lock()

    def get(self) -> Any:
        if self._value is _UNSET:
            with self._lock:
                if self._value is _UNSET:
                    self._value = self._build()
        return self._value


class QuestionVectors:
    """The encoder, remembering recent single texts' vectors (a question is embedded once for
    the seeder, the scorer and the final order); safe to share between threads."""

    def __init__(
        self,
        embed: Callable[[list[str]], np.ndarray],
        scope: Callable[[], Hashable] = lambda: None,
    ) -> None:
        self._embed = embed
        self._scope = scope  # the caller: one caller's questions never speed up another's
        self._held: dict[tuple[Hashable, str], np.ndarray] = {}
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        if len(texts) != 1:
            return self._embed(texts)
        key = (self._scope(), texts[0])
        with self._lock:
            found = self._held.get(key)
        if found is None:
            found = self._embed(texts)
            with self._lock:
                if len(self._held) >= QUESTION_VECTORS:
                    self._held.clear()
                self._held[key] = found
        return found


class Services:
    """What scorers, seeders and methods may use: the store, the graph's encoder (``embed``,
    and its name ``encoder``), the configuration and the passage cache. GNN-Ret is built on
    first use."""

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        config: RetrievalConfig,
        *,
        passages: PassageCache | None = None,
        encoder: str = "",
    ) -> None:
        self.store = store
        self.embed = embed
        self.encoder = encoder  # the graph's encoder, as the graph records it
        self.config = config
        self.passages = passages or PassageCache(store)
        self._gnn: GnnRetriever | None = None
        self._lock = threading.Lock()

    def meanwhile(self, work: Callable[..., T], *args: Any) -> Future[T]:
        """``work(*args)`` on another thread, as the caller (the store's reader and its call
        count are context variables: the work runs in a copy of the caller's context)."""
        return _MEANWHILE.submit(contextvars.copy_context().run, work, *args)

    @property
    def gnn(self) -> GnnRetriever:
        with self._lock:
            if self._gnn is None:
                from kgp.agents.gnn import GnnRetriever, gnn_params

                params = gnn_params(self.config.models)
                self._gnn = GnnRetriever(self.store, self.embed, params, max_df=self.config.max_df)
            return self._gnn

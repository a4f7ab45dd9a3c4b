"""GNN-Ret (Li et al., "Graph Neural Network Enhanced Retrieval for Question Answering of
LLMs", ``../shared/papers/002_*``) over kgp's passage graph.

A passage's semantic distance to the question is ``1 - cosine`` with the graph's encoder (h⁰).
Each layer l samples the K passages with the smallest distances (the relevant set T_K); their
neighbours (NEXT and shared keywords, optionally SIMILAR) receive the smallest distance among
their relevant neighbours as message (Eq. 3) and mix it with their own by α (Eq. 4); the others
keep theirs. Passages are retrieved by the integrated distance. Distances are computed for the
vector index's nearest ``pool`` passages and for every neighbour reached (one neighbours query
and one vector fetch per layer, as in the traversal); a passage outside both is farther than all
of them, so the ranking of the top k is exact up to the index's recall. RGNN-Ret is in
``kgp.agents.rgnn``, the fitting of α and β in ``kgp.agents.gnn_fit``."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from kgp.errors import ConfigurationError
from kgp.ingest.keywords import passage_links
from kgp.settings import DEFAULT_K, Settings
from kgp.stores.base import GraphStore
from kgp.stores.model import EdgeKind, Neighbour, StoredPassage

Distances = dict[str, float]
Adjacency = Mapping[str, Iterable[str]]
LINKS = ("keywords", "titles")


@dataclass(frozen=True)
class GnnParams:
    alphas: tuple[float, ...] = (0.5,)  # one per layer (the paper's untrained α¹ = 0.5)
    beta: float = 0.9  # RGNN: weight of the current step's distances
    top_k: int = 5  # K: relevant passages that send messages
    pool: int = 100  # passages whose distances come from the vector index
    similar: bool = False  # also pass messages along SIMILAR edges
    # shared keywords pass messages ("keywords"), or only those where one passage names the
    # other's document title ("titles": entity links, closest to the paper's Wikipedia links)
    links: str = "keywords"
    trained_on: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.alphas or any(not 0.0 <= a <= 1.0 for a in self.alphas):
            raise ConfigurationError(f"GNN alphas must be in [0, 1], one per layer: {self.alphas}")
        if not 0.0 <= self.beta <= 1.0:
            raise ConfigurationError(f"GNN beta must be in [0, 1], not {self.beta}")
        if self.top_k < 1 or self.pool < 1:
            raise ConfigurationError("GNN top_k and pool must be at least 1")
        if self.links not in LINKS:
            raise ConfigurationError(f"GNN links must be {' or '.join(LINKS)}, not {self.links!r}")

    @property
    def kinds(self) -> tuple[EdgeKind, ...]:
        base = (EdgeKind.NEXT, EdgeKind.KEYWORD)
        return (*base, EdgeKind.SIMILAR) if self.similar else base

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, path: str | Path) -> GnnParams:
        try:
            raw = json.loads(Path(path).expanduser().read_text())
            if not isinstance(raw, dict) or not raw:
                raise ValueError("no parameters in it")
            if "alphas" in raw:  # a partial file keeps the defaults of what it leaves out
                raw["alphas"] = tuple(raw["alphas"])
            return cls(**raw)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{path}: not GNN parameters written by kgp ({exc})") from None


def gnn_params(settings: Settings | None) -> GnnParams:
    """GNN-Ret's parameters: fitted ones from ``KGP_GNN_PARAMS`` (``kgp train gnn``), else the
    paper's untrained defaults."""
    if settings is None or not settings.gnn_params:
        return GnnParams()
    return GnnParams.load(settings.gnn_params)


def relevant(h: Distances, k: int) -> list[str]:
    """T_K: the ``k`` passages with the smallest distances (ties by id)."""
    return sorted(h, key=lambda n: (h[n], n))[:k]


def messages(h: Distances, adjacency: Adjacency, k: int) -> Distances:
    """Eq. 3: each neighbour of a relevant passage receives the smallest distance among its
    relevant neighbours."""
    out: Distances = {}
    for j in relevant(h, k):
        for i in adjacency.get(j, ()):
            if i != j and i in h:
                out[i] = min(out.get(i, math.inf), h[j])
    return out


def layer(h: Distances, adjacency: Adjacency, alpha: float, k: int) -> Distances:
    """Eq. 4 for the passages that received a message; the others keep their distance."""
    received = messages(h, adjacency, k)
    return {n: alpha * d + (1 - alpha) * received[n] if n in received else d for n, d in h.items()}


def propagate(h0: Distances, adjacency: Adjacency, params: GnnParams) -> Distances:
    h = h0
    for alpha in params.alphas:
        h = layer(h, adjacency, alpha, params.top_k)
    return h


class GnnRetriever:
    """GNN-Ret over a graph store: ``distances(question)`` gives the integrated distances of
    the passages it reached; ``retrieve`` the ``k`` nearest by them."""

    def __init__(
        self,
        store: GraphStore,
        embed: Callable[[list[str]], np.ndarray],
        params: GnnParams | None = None,
        *,
        max_df: int = 50,
    ) -> None:
        self.store = store
        self.embed = embed
        self.params = params or GnnParams()
        self.max_df = max_df

    def semantic(self, question: str, pool: int) -> tuple[np.ndarray, Distances]:
        vector = self.embed([question])[0]
        hits = self.store.vector_search(vector.tolist(), pool)
        return vector, {h.id: 1.0 - h.score for h in hits}

    def distances(self, question: str, k: int = DEFAULT_K) -> Distances:
        vector, h = self.semantic(question, max(self.params.pool, k))
        if not h:
            return {}
        adjacency: dict[str, set[str]] = {}
        for alpha in self.params.alphas:
            sources = [n for n in relevant(h, self.params.top_k) if n not in adjacency]
            self._expand(sources, adjacency, vector, h)
            h = layer(h, adjacency, alpha, self.params.top_k)
        return h

    def _expand(
        self, sources: list[str], adjacency: dict[str, set[str]], vector: np.ndarray, h: Distances
    ) -> None:
        """Neighbours of ``sources`` (one query) and the distances of the new ones (one)."""
        for source in sources:
            adjacency.setdefault(source, set())
        if not sources:
            return
        edges = self.store.neighbours(sources, self.params.kinds, max_df=self.max_df)
        reached = {e.target for e in edges}
        titles = self.params.links == "titles"
        texts_too = set(sources) if titles else set()  # title links read the sources' texts
        rows = self.store.passage_vectors(sorted((reached - h.keys()) | texts_too))
        if titles:
            edges = self._title_links(edges, rows)
        for edge in edges:
            adjacency[edge.source].add(edge.target)
        for pid in sorted({t for s in sources for t in adjacency[s]} - h.keys()):
            if pid in rows:
                stored = np.asarray(rows[pid].embedding, dtype=np.float32)
                norm = float(np.linalg.norm(stored)) or 1.0
                h[pid] = 1.0 - float(np.dot(vector, stored)) / norm

    def _title_links(
        self, edges: list[Neighbour], rows: Mapping[str, StoredPassage]
    ) -> list[Neighbour]:
        """The keyword edges where one passage names the other's document title (one document
        lookup); NEXT and SIMILAR edges stay."""
        links = passage_links(rows, self.store.fetch_nodes({r.doc_id for r in rows.values()}))
        return [
            e
            for e in edges
            if e.kind is not EdgeKind.KEYWORD
            or (e.source, e.target) in links
            or (e.target, e.source) in links
        ]

    def retrieve(self, question: str, k: int) -> list[tuple[str, float]]:
        """Passage ids and integrated distances, nearest first."""
        h = self.distances(question, k)
        return [(n, h[n]) for n in relevant(h, k)]

"""How healthy a graph's vector index is: whether it is complete, how many orphaned entries it
holds (FalkorDB 4.16 keeps the vector of every rewritten or deleted passage, issue #2179), and
the recall@10 of vector search against exact search on a sample of passages, and the number
of candidates its searches keep (HNSW's efRuntime, which kgp raises as the graph grows:
:func:`ef_for`). ``kgp stats`` shows it; ``kgp maintain`` rebuilds an index that has lost recall
or was built for a smaller graph."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

from kgp.access import ADMIN_CALLER

RECALL_FLOOR = 0.95  # a sampled recall@10 below this asks for a rebuild
ORPHAN_MIN = 1000  # never rebuild for fewer orphans than this (nor for under a fifth)
EF_LEAST = 256  # the vector index's efRuntime up to EF_PASSAGES passages
EF_PASSAGES = 50_000
EF_MOST = 4096
VECTOR_M = 32  # HNSW's links per entry (FalkorDB's default 16: 0.898 at 795k passages, 0.954)


def ef_for(passages: int) -> int:
    """The efRuntime kgp builds a graph's vector index with (the candidates each search keeps):
    EF_LEAST up to EF_PASSAGES passages, twice as many each time the graph is four times larger,
    at most EF_MOST; pure. HNSW at a fixed efRuntime loses recall as the graph grows (recall@10 of
    the scale bench's questions at 256: 0.996 at 10k, 0.947 at 100k, 0.836 at 300k, 0.692 at 1M);
    by this schedule 0.983 at 100k (512) and 0.966 at 300k (1024), for 1.0 and 3.1 ms more per
    vector search there (docs/benchmarks.md, "The vector index's candidates"). Those are M 16's;
    with VECTOR_M (32) the schedule holds 0.954 at the top of the 1,024 band (795k), where 16
    gave 0.898."""
    ef, size = EF_LEAST, EF_PASSAGES
    while passages > size and ef < EF_MOST:
        ef, size = 2 * ef, 4 * size
    return ef


def built_with(options: dict[str, Any], ef_wanted: int, m_wanted: int) -> dict[str, int]:
    """A FalkorDB vector index's options (``db.indexes()``) as IndexHealth's fields; pure."""
    built = {"ef_runtime": int(options["efRuntime"]), "m": int(options["M"])}
    return built | {"ef_wanted": ef_wanted, "m_wanted": m_wanted}


@dataclass(frozen=True, slots=True)
class IndexHealth:
    state: str  # "complete", "building" (searches are exact meanwhile) or "none"
    passages: int  # live entries
    orphans: int  # entries of passages that are gone
    sampled: int = 0  # passages whose 10 nearest were compared with exact search
    recall_at_10: float | None = None
    ef_runtime: int | None = None  # the index's efRuntime (None where the store has none)
    ef_wanted: int | None = None  # what kgp would build it with now (the setting or ef_for)
    m: int | None = None  # the index's M (HNSW links per entry; None where the store has none)
    m_wanted: int | None = None  # what kgp would build it with now (KGP_VECTOR_M)

    @property
    def low_recall(self) -> bool:
        return self.recall_at_10 is not None and self.recall_at_10 < RECALL_FLOOR

    @property
    def orphaned(self) -> bool:
        return too_many_orphans(self.passages, self.orphans)

    @property
    def ef_behind(self) -> bool:
        """Built with fewer candidates than the graph's size (or the setting) asks for now; an
        index built with more is left alone (a graph that shrank past a step, or a lowered
        setting, gets it at the next start, or kgp maintain --rebuild)."""
        if self.ef_runtime is None or self.ef_wanted is None:
            return False
        return self.ef_runtime < self.ef_wanted

    @property
    def m_differs(self) -> bool:
        """Built with another M than the setting asks for (only a rebuild changes it)."""
        return None not in (self.m, self.m_wanted) and self.m != self.m_wanted

    @property
    def needs_rebuild(self) -> bool:
        stale = self.low_recall or self.orphaned or self.ef_behind or self.m_differs
        return self.state == "complete" and stale

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "needs_rebuild": self.needs_rebuild}


def too_many_orphans(live: int, orphans: int) -> bool:
    """Orphans past a fifth of the index's entries, and at least ORPHAN_MIN: the index is
    worth rebuilding (FalkorStore heals it then after a sync; kgp maintain too)."""
    return orphans > max(ORPHAN_MIN, (live + orphans) // 5)


class Sampled(Protocol):
    """What the sampled check needs of a store (FalkorStore)."""

    def run(self, name: str, parameters: Any = None, *, write: bool = False) -> list[Any]: ...
    def nearest(
        self, vectors: list[list[float]], *, want: int
    ) -> list[list[tuple[str, float]]]: ...
    def reading_as(self, caller: Any) -> Any: ...


def sampled_recall(store: Sampled, sample: int, passages: int) -> tuple[int, float | None]:
    """Recall@10 of the store's vector search (the index, searched past orphans as retrieval
    does) against exact search, averaged over about ``sample`` random passages' vectors."""
    if sample < 1 or passages < 1:
        return 0, None
    share = min(1.0, 2.0 * sample / passages)
    with store.reading_as(ADMIN_CALLER):
        rows = store.run("sample_passages", {"share": share, "limit": sample})
        while not rows and share < 1.0:  # drew none (about e^-2*sample: 1 in 400 for 3)
            share = min(1.0, 4.0 * share)
            rows = store.run("sample_passages", {"share": share, "limit": sample})
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
        searched = store.nearest(vectors, want=10)  # every sample in one query
        found = []
        for vector, hits in zip(vectors, searched, strict=True):
            near = {pid for pid, _ in hits[:10]}
            request = {"i": 0, "vector": vector, "limit": 10, "exclude": [], "exclude_doc": ""}
            (exact,) = store.run("knn_exact", {"row": request, "limit": 10})
            truth = {str(pid) for pid, _ in exact["hits"]}
            found.append(len(near & truth) / max(1, len(truth)))
    return len(found), (round(sum(found) / len(found), 4) if found else None)

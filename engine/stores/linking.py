"""What the k-NN linker (kgp.ingest.edges) asks of a store beyond the port: vectors of stored
passages, the SIMILAR lists it keeps exact (degrees, weakest scores, flags for refills,
documents whose reverse edges are pending) and the floor's budget. A store's ``links``; every
query goes through the store's ``run``, so the caller's access applies as everywhere."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from kgp.stores.model import PassageVector

Row = dict[str, Any]


class Runs(Protocol):
    """A store, as far as these queries need it (kgp.stores.base.GraphStore)."""

    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]: ...


class LinkQueries:
    """The linker's queries against one store (``store.links``)."""

    def __init__(self, store: Runs) -> None:
        self._store = store

    def _run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]:
        # (the store's run as it is now: a test may wrap it to fail on cue)
        return self._store.run(name, parameters, write=write)

    def passage_embeddings(self, ids: Iterable[str]) -> dict[str, list[float]]:
        """The embeddings of passages by id (those that exist), nothing else: what linking
        needs (less time than :meth:`passage_vectors`, which also reads texts and checks
        access)."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        rows = self._run("passage_embeddings", {"ids": id_list})
        return {str(r["id"]): r["embedding"] for r in rows}

    def vectors_by_text_hash(self, hashes: Iterable[str]) -> dict[str, list[float]]:
        """A stored embedding for each hash of a passage text the graph already holds."""
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        rows = self._run("passages_by_text_hash", {"hashes": wanted})
        return {str(r["hash"]): r["embedding"] for r in rows if r["embedding"] is not None}

    def best_similarities(
        self, ids: Iterable[str], vectors: Sequence[Sequence[float]]
    ) -> dict[str, float]:
        """For passages by id (those that exist), the highest cosine similarity of their
        embedding to any of ``vectors``, computed by the store in float32 (within ``TIE`` of
        the exact score). What the k-NN linker asks instead of reading the vectors of weakly
        linked passages, most of which no new passage comes near: a score a passage is cheaper
        to send than its vector."""
        id_list = list(dict.fromkeys(ids))
        if not id_list or not vectors:
            return {}
        rows = self._run(
            "best_similarities",
            {"ids": id_list, "vectors": [list(map(float, vector)) for vector in vectors]},
        )
        return {str(r["id"]): float(r["best"]) for r in rows}

    def count_passages(self) -> int:
        """How many passages the graph holds, every document's (from the label's count)."""
        rows = self._run("count_passages")
        return int(rows[0]["n"]) if rows else 0  # (no graph yet)

    def similar_edges(self, ids: Iterable[str]) -> dict[str, list[tuple[str, float]]]:
        """The SIMILAR out-edges of passages: ``{id: [(target, score), ...]}``."""
        id_list = list(dict.fromkeys(ids))
        out: dict[str, list[tuple[str, float]]] = {pid: [] for pid in id_list}
        if id_list:
            for row in self._run("similar_edges", {"ids": id_list}):
                out[str(row["source"])].append((str(row["target"]), float(row["score"])))
        return out

    def weakest_links(
        self, ids: Iterable[str], *, flags: bool = True
    ) -> dict[str, tuple[int, float | None, bool]]:
        """For passages by id: ``(degree, weakest score, flagged)`` of their SIMILAR out-edges
        (absent ids are not in the graph). ``flags=False``: the caller knows the graph holds no
        NEEDS_KNN flag (:meth:`knn_flags`), so none is read and every passage reads unflagged
        (a third less time)."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        query = "weakest_links" if flags else "similar_degrees"
        return {
            str(r["id"]): (
                int(r["degree"]),
                None if r["weakest"] is None else float(r["weakest"]),
                bool(r.get("flagged", False)),
            )
            for r in self._run(query, {"ids": id_list})
        }

    def links_within_reach(
        self, best: Mapping[str, float], *, k: int, margin: float
    ) -> dict[str, tuple[int, float | None]]:
        """``(degree, weakest score)`` of the passages of ``best`` (id -> its highest similarity
        to a new passage) whose neighbour list that passage may enter: fewer than ``k``
        out-edges, or ``best`` at least the weakest less ``margin``; for a graph that holds no
        NEEDS_KNN flag (:meth:`knn_flags`). Absent ids are not in the graph or cannot gain: in
        a large graph most passages a small group's searches find cannot, and their rows would
        cost as much to turn into Python as the store spends looking them up."""
        if not best:
            return {}
        ids = list(best)
        rows = self._run(
            "links_within_reach",
            {"ids": ids, "best": [float(best[pid]) for pid in ids], "k": k, "margin": margin},
        )
        return {
            str(r["id"]): (int(r["degree"]), None if r["weakest"] is None else float(r["weakest"]))
            for r in rows
        }

    def weak_passages(self, threshold: float) -> list[str]:
        """Passages whose weakest SIMILAR edge scores at most ``threshold``."""
        return [str(r["id"]) for r in self._run("weak_passages", {"t": float(threshold)})]

    def count_weak_edges(self, threshold: float, cap: int) -> int:
        """SIMILAR edges scoring at most ``threshold``, counted up to ``cap``."""
        rows = self._run("count_weak_edges", {"t": float(threshold), "cap": int(cap)})
        return int(rows[0]["n"]) if rows else 0

    def knn_budget(self) -> float | None:
        """The k-NN floor's budget the last long sync tuned, if any."""
        rows = self._run("knn_budget")
        return float(rows[0]["budget"]) if rows and rows[0]["budget"] is not None else None

    def set_knn_budget(self, budget: float) -> None:
        self._run("set_knn_budget", {"budget": float(budget)}, write=True)

    def pending_documents(self) -> list[str]:
        """Documents whose older neighbours were not yet linked to them (an interrupted sync)."""
        return [str(r["id"]) for r in self._run("pending_documents")]

    def replace_similar(
        self, rows: Sequence[Mapping[str, Any]], *, done: Sequence[str] = ()
    ) -> None:
        """Replace the SIMILAR out-edges of passages (``{source, targets: [{id, score,
        method}]}``), clear their NEEDS_KNN flags and the pending mark of documents ``done``,
        in one query."""
        if rows or done:
            params = {"rows": [dict(r) for r in rows], "done": list(done)}
            self._run("replace_similar", params, write=True)

    def passages_needing_knn(self, limit: int = 1000, after: str = "") -> list[PassageVector]:
        """Passages flagged because a removed or replaced document held some of their SIMILAR
        neighbours, in id order after ``after``."""
        rows = self._run("passages_needing_knn", {"limit": limit, "after": after})
        return [PassageVector(str(r["id"]), r["embedding"]) for r in rows]

    def knn_flags(self) -> int:
        """How many passages are flagged (``passages_needing_knn``), from the relationship count
        alone: cheap at any size, unlike a search for the flags."""
        rows = self._run("count_knn_flags")
        return int(rows[0]["n"]) if rows else 0  # (no graph yet: a read of it finds no row)

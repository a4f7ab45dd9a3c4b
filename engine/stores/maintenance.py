"""What keeps a stored graph whole, for every store: the bookkeeping of SIMILAR edges (the exact
k nearest of each passage, flags for refills, documents whose reverse edges are pending), schema
migrations and the canonical dump that tests compare graphs by. :class:`GraphStore` inherits it;
everything here goes through ``run`` with named queries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgp.access import DEFAULT_GROUPS
from kgp.errors import ConfigurationError
from kgp.stores.model import PassageVector, text_hash

Row = dict[str, Any]
# 2: NEEDS_KNN relationships, text hashes, exact k-NN, pending documents; 3: access groups;
# 4: NEEDS_KNN flags carry flag: true (indexed in FalkorDB); 5: the record of the group sets in
# use (Meta.access_sets, kgp.stores.coverage); 6: the embedded store's full-text index holds each
# passage's terms (kgp.text.index_terms)
SCHEMA_VERSION = 7
# the Meta properties a dump leaves out: the linker's tuning state (it follows timings) and the
# record of group sets (a superset of those in use, in the order they came)
_BOOKKEEPING = frozenset(
    {"knn_budget", "access_sets", "access_version", "vkey", "next_vkey", "dimension"}
)


class RunsQueries(ABC):
    """What the store's parts build on: running a named query (``GraphStore.run``)."""

    @abstractmethod
    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]: ...


class StoreMaintenance(RunsQueries):
    @abstractmethod
    def rebuild_vector_index(self) -> None: ...

    @abstractmethod
    def describe(self) -> str: ...

    def passages_needing_knn(self, limit: int = 1000, after: str = "") -> list[PassageVector]:
        """Passages flagged because a removed or replaced document held some of their SIMILAR
        neighbours, in id order after ``after``."""
        rows = self.run("passages_needing_knn", {"limit": limit, "after": after})
        return [PassageVector(str(r["id"]), r["embedding"]) for r in rows]

    def knn_flags(self) -> int:
        """How many passages are flagged (``passages_needing_knn``), from the relationship count
        alone: cheap at any size, unlike a search for the flags."""
        rows = self.run("count_knn_flags")
        return int(rows[0]["n"]) if rows else 0  # (no graph yet: a read of it finds no row)

    def passage_ids(self) -> list[str]:
        """Every passage's id, in no order."""
        return [str(r["id"]) for r in self.run("passage_ids")]

    def count_passages(self) -> int:
        """How many passages the graph holds, every document's (from the label's count)."""
        rows = self.run("count_passages")
        return int(rows[0]["n"]) if rows else 0  # (no graph yet)

    def similar_edges(self, ids: Iterable[str]) -> dict[str, list[tuple[str, float]]]:
        """The SIMILAR out-edges of passages: ``{id: [(target, score), ...]}``."""
        id_list = list(dict.fromkeys(ids))
        out: dict[str, list[tuple[str, float]]] = {pid: [] for pid in id_list}
        if id_list:
            for row in self.run("similar_edges", {"ids": id_list}):
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
            for r in self.run(query, {"ids": id_list})
        }

    def links_within_reach(
        self, best: Mapping[str, float], *, k: int, margin: float
    ) -> dict[str, tuple[int, float | None]]:
        """``(degree, weakest score)`` of the passages of ``best`` (id -> its highest similarity
        to a new passage) whose neighbour list that passage may enter: fewer than ``k``
        out-edges, or ``best`` at least the weakest less ``margin``; for a graph that holds no
        NEEDS_KNN flag (:meth:`knn_flags`). Absent ids are not in the graph or cannot gain
        (at 300k passages most of the 10,000 a small group's searches find: their rows cost
        as much to turn into Python as the store spends looking them up)."""
        if not best:
            return {}
        ids = list(best)
        rows = self.run(
            "links_within_reach",
            {"ids": ids, "best": [float(best[pid]) for pid in ids], "k": k, "margin": margin},
        )
        return {
            str(r["id"]): (int(r["degree"]), None if r["weakest"] is None else float(r["weakest"]))
            for r in rows
        }

    def weak_passages(self, threshold: float) -> list[str]:
        """Passages whose weakest SIMILAR edge scores at most ``threshold``."""
        return [str(r["id"]) for r in self.run("weak_passages", {"t": float(threshold)})]

    def count_weak_edges(self, threshold: float, cap: int) -> int:
        """SIMILAR edges scoring at most ``threshold``, counted up to ``cap``."""
        rows = self.run("count_weak_edges", {"t": float(threshold), "cap": int(cap)})
        return int(rows[0]["n"]) if rows else 0

    def knn_budget(self) -> float | None:
        """The k-NN floor's budget the last long sync tuned, if any."""
        rows = self.run("knn_budget")
        return float(rows[0]["budget"]) if rows and rows[0]["budget"] is not None else None

    def set_knn_budget(self, budget: float) -> None:
        self.run("set_knn_budget", {"budget": float(budget)}, write=True)

    def pending_documents(self) -> list[str]:
        """Documents whose older neighbours were not yet linked to them (an interrupted sync)."""
        return [str(r["id"]) for r in self.run("pending_documents")]

    def replace_similar(
        self, rows: Sequence[Mapping[str, Any]], *, done: Sequence[str] = ()
    ) -> None:
        """Replace the SIMILAR out-edges of passages (``{source, targets: [{id, score,
        method}]}``), clear their NEEDS_KNN flags and the pending mark of documents ``done``,
        in one query."""
        if rows or done:
            params = {"rows": [dict(r) for r in rows], "done": list(done)}
            self.run("replace_similar", params, write=True)

    # -- schema versions ---------------------------------------------------------------------

    def migrate(self, default_groups: Sequence[str] = DEFAULT_GROUPS) -> list[str]:
        """Bring a graph written by an older kgp to the current schema (documents without access
        groups get ``default_groups``); the steps taken."""
        rows = self.run("graph_schema")
        if not rows and not self.run("count_labels"):
            return []  # an empty graph: its first sync records the schema
        version = int(rows[0]["schema"]) if rows and rows[0]["schema"] is not None else 1
        if version == SCHEMA_VERSION:
            return []
        if version > SCHEMA_VERSION:  # an older kgp would write it without newer records
            raise ConfigurationError(
                f"{self.describe()} holds a graph of schema {version}, written by a newer kgp "
                f"than this one (schema {SCHEMA_VERSION}); upgrade kgp to open it"
            )
        steps: list[str] = []
        if version < 2:
            steps += self._migrate_to_2()
        if version < 3:
            self.run("migrate_groups", {"groups": list(default_groups)}, write=True)
            steps.append(f"schema 3: access groups, {', '.join(default_groups)} where none")
        if version < 4:
            self.run("migrate_flag_property", write=True)
            steps.append("schema 4: NEEDS_KNN flags indexed")
        if version < 5:
            self.record_access_sets()
            steps.append("schema 5: the group sets in use recorded")
        if version < 6:
            steps += self._migrate_to_6()
        if version < 7:
            steps += self._migrate_to_7()
        self.run("set_graph_schema", {"schema": SCHEMA_VERSION}, write=True)
        return steps

    def record_access_sets(self) -> None:
        """Record the group sets the documents hold now, from every document (writes only add
        sets; this drops those of removed documents): kgp.stores.coverage."""
        self.run("record_access_sets", write=True)

    def _migrate_to_2(self) -> list[str]:
        """Flags become relationships (every passage flagged for an exact refill), passages
        get text hashes, and the vector index is rebuilt."""
        self.run("migrate_flags", write=True)
        after = ""
        while rows := self.run("passages_without_text_hash", {"limit": 2000, "after": after}):
            hashed = [{"id": r["id"], "hash": text_hash(str(r["text"] or ""))} for r in rows]
            self.run("set_text_hashes", {"rows": hashed}, write=True)
            after = str(rows[-1]["id"])
        self.rebuild_vector_index()
        return ["schema 2: NEEDS_KNN flags, text hashes, vector index rebuilt"]

    def _migrate_to_6(self) -> list[str]:
        """Schema 6 changed the embedded store's full-text index alone (FalkorStore)."""
        return []

    def _migrate_to_7(self) -> list[str]:
        """Schema 7 moved the embedded store's vectors to an index beside the graph alone."""
        return []

    def dump(self) -> tuple[list[Row], list[Row]]:
        """Every node (without embeddings) and every relationship, in a canonical order."""
        nodes = [
            {"label": r["label"], "key": r["key"], "props": _clean(r["props"])}
            for r in self.run("dump_nodes")
        ]
        # (the embedded store's Meta node holds its vector keys' counter from the first write)
        nodes = [n for n in nodes if n["label"] != "Meta" or n["props"] != {"id": "kgp"}]
        rels = [
            {
                "type": r["type"],
                "source": r["source"],
                "target": r["target"],
                "props": _clean(r["props"]),
            }
            for r in self.run("dump_relationships")
        ]
        nodes.sort(key=lambda n: (n["label"], str(n["key"])))
        rels.sort(
            key=lambda r: (
                r["type"],
                str(r["source"]),
                str(r["target"]),
                sorted(r["props"].items()),
            )
        )
        return nodes, rels


def _clean(props: Mapping[str, Any] | None) -> dict[str, Any]:
    """A node's properties for a dump: its content, without the bookkeeping two syncs of the
    same files may differ in (``_BOOKKEEPING``)."""
    return {k: v for k, v in dict(props or {}).items() if v is not None and k not in _BOOKKEEPING}

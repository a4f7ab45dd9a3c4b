"""What keeps a stored graph whole, for every store: schema versions, the records a graph keeps
of its encoder and access groups, the vector index's health and rebuild, writes made ready,
checkpoints and backups, and the canonical dump that tests compare graphs by. A store's ``upkeep``
(:class:`Upkeep`; the embedded store's own kind: kgp.stores.falkordb.upkeep); everything here
goes through the store's ``run`` with named queries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kgp.access import ADMIN_CALLER, DEFAULT_GROUPS, Caller
from kgp.errors import BackupError, ConfigurationError
from kgp.stores.health import IndexHealth
from kgp.stores.model import text_hash

if TYPE_CHECKING:
    from kgp.stores.model import GraphCounts

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


class KeptStore(Protocol):
    """What an upkeep needs of its store (kgp.stores.base.GraphStore)."""

    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]: ...

    def reading_as(self, caller: Caller) -> AbstractContextManager[None]: ...

    def describe(self) -> str: ...


class Upkeep:
    """A store's upkeep (``store.upkeep``); a store whose database keeps its own files and
    vector index complete needs nothing more than this."""

    def __init__(self, store: KeptStore) -> None:
        self.store = store

    def _run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]:
        """The store's ``run`` as it is now (a test may wrap it to fail on cue)."""
        return self.store.run(name, parameters, write=write)

    # -- the vector index ---------------------------------------------------------------------

    def vector_index_entries(self) -> int:
        """How many passages the vector index holds."""
        rows = self._run("vector_index_bound")
        return int(rows[0]["live"]) if rows else 0

    def rebuild_vector_index(self) -> None:
        """Build the vector index anew from the stored vectors (a store whose index the
        database keeps needs nothing)."""
        return None

    def index_health(self, sample: int = 10) -> IndexHealth:
        """The vector index's state and sampled recall (kgp.stores.health); here, a store whose
        index the database keeps complete, unsampled."""
        with self.store.reading_as(ADMIN_CALLER):
            return IndexHealth("complete", self.vector_index_entries())

    # -- writes and files ---------------------------------------------------------------------

    def prepare_writes(self) -> None:
        """Make the indexes writes use ready (a store may set some aside at close)."""
        return None

    def checkpoint(self, *, force: bool = False) -> bool:
        """Make the store quick to reopen after many writes (the embedded store compacts its
        log once it has grown, or whatever its size with ``force``); True if it did. Nothing to
        do for stores that manage their own files."""
        return False

    # -- backups (kgp.backup) -----------------------------------------------------------------

    def writes(self) -> AbstractContextManager[None]:
        """Around each document's write, which a backup's snapshot waits for; nothing for a
        store whose database takes its own backups."""
        return nullcontext()

    def snapshot(self, path: Path, pause_timeout: float) -> GraphCounts:
        """Write the graph as it is at one moment to ``path`` (and beside it what a start
        from it needs), while others read and write; the graph's counts at that moment."""
        raise BackupError(
            f"kgp backup copies the embedded store, not {self.store.describe()}; back Neo4j up "
            "with neo4j-admin database dump or backup (docs/operations.md)"
        )

    # -- the graph's records --------------------------------------------------------------------

    def graph_encoder(self) -> str | None:
        """The encoder recorded for the graph's vectors, if any."""
        rows = self._run("graph_encoder")
        return str(rows[0]["encoder"]) if rows and rows[0]["encoder"] is not None else None

    def set_graph_encoder(self, encoder: str) -> None:
        """Record the graph's encoder (at its first sync), with the schema it is written in, and
        the group sets its documents hold (kgp.stores.coverage)."""
        self._run("set_graph_encoder", {"encoder": encoder, "schema": SCHEMA_VERSION}, write=True)
        self.record_access_sets()

    # -- schema versions ---------------------------------------------------------------------

    def migrate(self, default_groups: Sequence[str] = DEFAULT_GROUPS) -> list[str]:
        """Bring a graph written by an older kgp to the current schema (documents without access
        groups get ``default_groups``); the steps taken."""
        rows = self._run("graph_schema")
        if not rows and not self._run("count_labels"):
            return []  # an empty graph: its first sync records the schema
        version = int(rows[0]["schema"]) if rows and rows[0]["schema"] is not None else 1
        if version == SCHEMA_VERSION:
            return []
        if version > SCHEMA_VERSION:  # an older kgp would write it without newer records
            raise ConfigurationError(
                f"{self.store.describe()} holds a graph of schema {version}, written by a newer "
                f"kgp than this one (schema {SCHEMA_VERSION}); upgrade kgp to open it"
            )
        steps: list[str] = []
        if version < 2:
            steps += self._migrate_to_2()
        if version < 3:
            self._run("migrate_groups", {"groups": list(default_groups)}, write=True)
            steps.append(f"schema 3: access groups, {', '.join(default_groups)} where none")
        if version < 4:
            self._run("migrate_flag_property", write=True)
            steps.append("schema 4: NEEDS_KNN flags indexed")
        if version < 5:
            self.record_access_sets()
            steps.append("schema 5: the group sets in use recorded")
        if version < 6:
            steps += self._migrate_to_6()
        if version < 7:
            steps += self._migrate_to_7()
        self._run("set_graph_schema", {"schema": SCHEMA_VERSION}, write=True)
        return steps

    def record_access_sets(self) -> None:
        """Record the group sets the documents hold now, from every document (writes only add
        sets; this drops those of removed documents): kgp.stores.coverage."""
        self._run("record_access_sets", write=True)

    def _migrate_to_2(self) -> list[str]:
        """Flags become relationships (every passage flagged for an exact refill), passages
        get text hashes, and the vector index is rebuilt."""
        self._run("migrate_flags", write=True)
        after = ""
        while rows := self._run("passages_without_text_hash", {"limit": 2000, "after": after}):
            hashed = [{"id": r["id"], "hash": text_hash(str(r["text"] or ""))} for r in rows]
            self._run("set_text_hashes", {"rows": hashed}, write=True)
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
            for r in self._run("dump_nodes")
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
            for r in self._run("dump_relationships")
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

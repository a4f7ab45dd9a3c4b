"""The ``GraphStore`` interface. Both stores run the same named queries, one file per dialect;
this class holds everything that does not depend on the dialect."""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

from kgp import cypher
from kgp.errors import ConfigurationError
from kgp.ingest.keywords import STOPWORDS
from kgp.stores.model import (
    DocumentGraph,
    DocumentSummary,
    EdgeKind,
    GraphCounts,
    Neighbour,
    SearchHit,
    document_rows,
    neighbour_rows,
)
from kgp.stores.tracer import QueryEvent, Tracer

Row = dict[str, Any]
TIE = 1e-4  # similarities closer than this may be ordered differently by the index
SCHEMA_VERSION = 2  # 2: NEEDS_KNN relationships, text hashes, exact k-NN, pending documents

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(text: str, limit: int = 64) -> list[str]:
    """The words of a free-text query, lower-cased and deduplicated, without any syntax and
    without English stopwords (unless nothing else is left): neither FalkorDB's full-text
    scoring nor Neo4j's default analyzer discounts them enough, and "what … of the …" drowned
    the names that matter (MuSiQue dev, full-text recall@10: 8 % with them, 15 % without)."""
    found = list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))
    content = [word for word in found if word not in STOPWORDS]
    return (content or found)[:limit]


class GraphStore(ABC):
    """A graph store holding kgp's schema. Construct, then ``open()`` (or use ``with``)."""

    dialect: cypher.Dialect

    def __init__(self, *, tracer: Tracer | None = None) -> None:
        self.tracer = tracer
        self.dimension: int | None = None

    # -- lifecycle (subclasses) --------------------------------------------------------------

    @abstractmethod
    def open(self) -> Self: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _execute(self, query: str, parameters: Mapping[str, Any], *, write: bool) -> list[Row]:
        """Run one query in one transaction; translate driver errors into ``KgpError``."""

    @abstractmethod
    def ensure_schema(self, dimension: int) -> None:
        """Create constraints and the id, vector and full-text indexes (idempotent)."""

    @abstractmethod
    def _fulltext_query(self, terms: Sequence[str]) -> str:
        """The dialect's full-text query string matching any of the terms."""

    @abstractmethod
    def describe(self) -> str:
        """Where the store is, for messages (never a secret)."""

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- running named queries ---------------------------------------------------------------

    def run(
        self, name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False
    ) -> list[Row]:
        """Run the named query of this store's dialect and report it to the tracer."""
        params = dict(parameters or {})
        started = time.perf_counter()
        rows = self._execute(cypher.load(self.dialect, name), params, write=write)
        if self.tracer is not None:
            self.tracer(QueryEvent(name, params, len(rows), time.perf_counter() - started))
        return rows

    @contextmanager
    def counting(self) -> Iterator[Callable[[], int]]:
        """Count the store calls made inside the block (any tracer set keeps receiving them)."""
        calls = 0
        previous = self.tracer

        def count(event: QueryEvent) -> None:
            nonlocal calls
            calls += 1
            if previous is not None:
                previous(event)

        self.tracer = count
        try:
            yield lambda: calls
        finally:
            self.tracer = previous

    # -- operations --------------------------------------------------------------------------

    def write_document(self, graph: DocumentGraph) -> None:
        """Write one document's whole subgraph in one transaction, replacing an older version."""
        self.run("write_document", document_rows(graph, self.dimension), write=True)

    def delete_document(self, doc_id: str) -> bool:
        """Delete a document, its nodes and relationships and orphaned keywords; False if absent."""
        rows = self.run("delete_document", {"id": doc_id}, write=True)
        return bool(rows and rows[0]["found"])

    def list_documents(self) -> list[DocumentSummary]:
        return [
            DocumentSummary(
                str(r["id"]),
                str(r["path"]),
                str(r["sha256"]),
                str(r["title"] or ""),
                int(r["pages"] or 0),
            )
            for r in self.run("list_documents")
        ]

    def vector_search(self, vector: Sequence[float], limit: int = 10) -> list[SearchHit]:
        """The ``limit`` passages nearest to ``vector`` by cosine similarity, best first."""
        if limit < 1:
            return []
        if self.dimension is not None and len(vector) != self.dimension:
            raise ConfigurationError(
                f"query vector has {len(vector)} dimensions, the graph uses {self.dimension}"
            )
        (hits,) = self.nearest([vector], want=limit)
        return [SearchHit(pid, score) for pid, score in hits[:limit]]

    def nearest(
        self,
        vectors: Sequence[Sequence[float]],
        *,
        want: int,
        floor: float | None = None,
        exclude_docs: Sequence[str] = (),
        exclude_ids: Sequence[Sequence[str]] = (),
        depth_cap: int | None = None,
    ) -> list[list[tuple[str, float]]]:
        """For each vector, its nearest passages as ``(id, cosine)``, best first (ties by id):
        at least ``want`` of them with every passage tied with the ``want``-th (within
        ``TIE``, so the order by id is the same whatever order the index was built in), and
        with ``floor``, every passage more similar than it.
        Per vector the passages of document ``exclude_docs[i]`` and the ids ``exclude_ids[i]``
        are left out.

        The vector index is asked to a depth, then deeper for the vectors that came back short:
        orphaned vectors (FalkorDB 4.16 keeps the vector of every deleted or rewritten passage)
        and excluded passages take places in the index's answer without being returned. A depth
        of the index's size bound (live passages plus orphans) has seen everything;
        ``depth_cap`` stops earlier."""
        if not vectors or want < 1:
            return [[] for _ in vectors]
        results: list[list[tuple[str, float]]] = [[] for _ in vectors]
        pending = list(range(len(vectors)))
        depth = want + max(10, want)
        while pending:
            rows = [
                {
                    "i": i,
                    "vector": [float(x) for x in vectors[i]],
                    "limit": depth,
                    "exclude": list(exclude_ids[i]) if i < len(exclude_ids) else [],
                    "exclude_doc": exclude_docs[i] if i < len(exclude_docs) else "",
                }
                for i in pending
            ]
            seen = {int(r["i"]): r for r in self.run("knn_candidates", {"rows": rows})}
            # a vector whose every index entry at this depth was an orphan gets no row
            bound = next((int(r["bound"]) for r in seen.values()), None)
            still = []
            for i in pending:
                row = seen.get(i)
                hits = [(str(pid), float(sim)) for pid, sim in (row["hits"] if row else [])]
                hits.sort(key=lambda hit: (-hit[1], hit[0]))
                results[i] = hits
                short = (
                    len(hits) < want
                    or hits[-1][1] >= hits[want - 1][1] - TIE
                    or (floor is not None and hits[-1][1] > floor)
                )
                if short:
                    still.append(i)
            if not still:
                break
            if bound is None:
                bound = self.vector_index_bound()
            if depth >= bound or (depth_cap is not None and depth >= depth_cap):
                break
            pending = still
            depth = min(4 * depth, max(bound, want), depth_cap or bound)
        return results

    def vector_index_bound(self) -> int:
        """How deep a vector search must go to see every entry of the index."""
        rows = self.run("vector_index_bound")
        return int(rows[0]["live"]) + int(rows[0]["orphans"]) if rows else 0

    def orphaned_vectors(self) -> int:
        """Vectors of deleted passages still in the vector index (0 where the store removes
        them)."""
        rows = self.run("vector_index_bound")
        return int(rows[0]["orphans"]) if rows else 0

    def rebuild_vector_index(self) -> None:
        """Drop and re-create the vector index, which clears orphaned vectors (stores that
        remove them need nothing)."""
        return None

    def heal_vector_index(self) -> bool:
        """Rebuild the vector index if orphaned vectors have piled up; True if it did."""
        return False

    def fulltext_search(self, text: str, limit: int = 10) -> list[SearchHit]:
        """Passages matching any word of ``text`` in the full-text index, best first."""
        terms = query_terms(text)
        if not terms or limit < 1:
            return []
        rows = self.run("fulltext_search", {"query": self._fulltext_query(terms), "limit": limit})
        return [SearchHit(str(r["id"]), float(r["score"])) for r in rows]

    def neighbours(
        self,
        ids: Iterable[str],
        kinds: Iterable[EdgeKind] = tuple(EdgeKind),
        *,
        limit: int = 50,
        max_df: int = 50,
    ) -> list[Neighbour]:
        """Neighbours of many passages at once, all edge kinds in one query: at most ``limit``
        per passage and kind; keywords used by more than ``max_df`` passages are not
        expanded."""
        id_list = list(dict.fromkeys(ids))
        wanted = [k.value for k in dict.fromkeys(EdgeKind(k) for k in kinds)]
        if not id_list or not wanted:
            return []
        params = {"ids": id_list, "kinds": wanted, "limit": limit, "max_df": max_df}
        return neighbour_rows(self.run("neighbours", params))

    def fetch_nodes(self, ids: Iterable[str]) -> dict[str, Row]:
        """Nodes by id (passages, pages, tables, documents): ``{id: {label, **properties}}``."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        out: dict[str, Row] = {}
        for row in self.run("fetch_nodes", {"ids": id_list}):
            props = {k: v for k, v in dict(row["props"]).items() if v is not None}
            out[str(row["id"])] = {"label": row["label"], **props}
        return out

    def page_contents(self, numbers: Iterable[int]) -> list[Row]:
        """Pages with these numbers in every document: ``doc_id``, ``number``, ``passages``
        (id, text) and ``tables`` (id, markdown), in reading order."""
        wanted = sorted({int(n) for n in numbers})
        if not wanted:
            return []
        return [
            {
                "doc_id": str(r["doc_id"]),
                "number": int(r["number"]),
                "passages": [dict(x) for x in r["passages"]],
                "tables": [dict(x) for x in r["tables"]],
            }
            for r in self.run("page_contents", {"numbers": wanted})
        ]

    def save_trace(
        self,
        trace: Mapping[str, Any],
        items: Sequence[Row],
        tables: Sequence[Row],
        steps: Sequence[Row],
    ) -> str:
        """Keep a retrieval in the graph (one query): a ``Trace`` node, ``RETRIEVED`` to each
        passage (``items``) and table, ``STEP`` along each reasoning path."""
        params = {"trace": dict(trace), "items": list(items), "tables": list(tables)}
        rows = self.run("save_trace", {**params, "steps": list(steps)}, write=True)
        return str(rows[0]["id"]) if rows else str(trace["id"])

    def graph_encoder(self) -> str | None:
        """The encoder recorded for the graph's vectors, if any."""
        rows = self.run("graph_encoder")
        return str(rows[0]["encoder"]) if rows and rows[0]["encoder"] is not None else None

    def set_graph_encoder(self, encoder: str) -> None:
        """Record the graph's encoder (at its first sync), with the schema it is written in."""
        self.run("set_graph_encoder", {"encoder": encoder, "schema": SCHEMA_VERSION}, write=True)

    def tables(self) -> list[Row]:
        """Every table (id, doc_id, page, index, markdown) in document order."""
        return [dict(r) for r in self.run("document_tables")]

    def counts(self) -> GraphCounts:
        labels = {str(r["name"]): int(r["count"]) for r in self.run("count_labels")}
        rels = {str(r["name"]): int(r["count"]) for r in self.run("count_relationships")}
        return GraphCounts(dict(sorted(labels.items())), dict(sorted(rels.items())))

    # -- k-NN maintenance (used by ingest) ---------------------------------------------------

    def passage_vectors(self, ids: Iterable[str]) -> dict[str, Row]:
        """``{id: {doc_id, text, embedding}}`` for passages by id."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        return {str(r["id"]): r for r in self.run("passage_vectors", {"ids": id_list})}

    def document_passages(self, doc_ids: Iterable[str]) -> list[Row]:
        """The stored passages of some documents, in one query: id, text, embedding."""
        ids = list(dict.fromkeys(doc_ids))
        return self.run("document_passages", {"doc_ids": ids}) if ids else []

    def vectors_by_text_hash(self, hashes: Iterable[str]) -> dict[str, list[float]]:
        """A stored embedding for each hash of a passage text the graph already holds."""
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        rows = self.run("passages_by_text_hash", {"hashes": wanted})
        return {str(r["hash"]): r["embedding"] for r in rows if r["embedding"] is not None}

    def passages_needing_knn(self, limit: int = 1000, after: str = "") -> list[Row]:
        """Passages flagged because a removed or replaced document held some of their SIMILAR
        neighbours: id and embedding, in id order after ``after``."""
        return self.run("passages_needing_knn", {"limit": limit, "after": after})

    def similar_edges(self, ids: Iterable[str]) -> dict[str, list[tuple[str, float]]]:
        """The SIMILAR out-edges of passages: ``{id: [(target, score), ...]}``."""
        id_list = list(dict.fromkeys(ids))
        out: dict[str, list[tuple[str, float]]] = {pid: [] for pid in id_list}
        if id_list:
            for row in self.run("similar_edges", {"ids": id_list}):
                out[str(row["source"])].append((str(row["target"]), float(row["score"])))
        return out

    def weakest_links(self, ids: Iterable[str]) -> dict[str, tuple[int, float | None, bool]]:
        """For passages by id: ``(degree, weakest score, flagged)`` of their SIMILAR out-edges
        (absent ids are not in the graph)."""
        id_list = list(dict.fromkeys(ids))
        if not id_list:
            return {}
        return {
            str(r["id"]): (
                int(r["degree"]),
                None if r["weakest"] is None else float(r["weakest"]),
                bool(r["flagged"]),
            )
            for r in self.run("weakest_links", {"ids": id_list})
        }

    def weak_passages(self, threshold: float) -> list[str]:
        """Passages whose weakest SIMILAR edge scores at most ``threshold``."""
        return [str(r["id"]) for r in self.run("weak_passages", {"t": float(threshold)})]

    def count_weak_edges(self, threshold: float, cap: int) -> int:
        """SIMILAR edges scoring at most ``threshold``, counted up to ``cap``."""
        rows = self.run("count_weak_edges", {"t": float(threshold), "cap": int(cap)})
        return int(rows[0]["n"]) if rows else 0

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

    def migrate(self) -> list[str]:
        """Bring a graph written by an older kgp to the current schema; the steps taken."""
        rows = self.run("graph_schema")
        if not rows and not self.run("count_labels"):
            return []  # an empty graph: its first sync records the schema
        version = int(rows[0]["schema"]) if rows and rows[0]["schema"] is not None else 1
        if version == SCHEMA_VERSION:
            return []
        steps: list[str] = []
        if version < 2:
            steps += self._migrate_to_2()
        self.run("set_graph_schema", {"schema": SCHEMA_VERSION}, write=True)
        return steps

    def _migrate_to_2(self) -> list[str]:
        """Flags become relationships (every passage flagged for an exact refill), passages
        get text hashes, and the vector index is rebuilt without orphans."""
        from kgp.stores.model import text_hash

        self.run("migrate_flags", write=True)
        after = ""
        while rows := self.run("passages_without_text_hash", {"limit": 2000, "after": after}):
            hashed = [{"id": r["id"], "hash": text_hash(str(r["text"] or ""))} for r in rows]
            self.run("set_text_hashes", {"rows": hashed}, write=True)
            after = str(rows[-1]["id"])
        self.rebuild_vector_index()
        return ["schema 2: NEEDS_KNN flags, text hashes, vector index rebuilt"]

    def checkpoint(self) -> None:
        """Make the store quick to reopen after many writes (FalkorDB compacts its log);
        nothing to do for stores that manage their own files."""
        return None

    def clear(self) -> None:
        """Delete every node and relationship (for tests and ``kgp reset``)."""
        self.run("clear", write=True)

    def dump(self) -> tuple[list[Row], list[Row]]:
        """Every node (without embeddings) and every relationship, in a canonical order."""
        nodes = [
            {"label": r["label"], "key": r["key"], "props": _clean(r["props"])}
            for r in self.run("dump_nodes")
        ]
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
    return {k: v for k, v in dict(props or {}).items() if v is not None}

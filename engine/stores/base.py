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
            DocumentSummary(str(r["id"]), str(r["path"]), str(r["sha256"]))
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
        # HNSW indexes can return fewer than k hits (FalkorDB after deletions): ask for more.
        ask = max(2 * limit, limit + 20)
        rows = self.run("vector_search", {"vector": [float(x) for x in vector], "limit": ask})
        return [SearchHit(str(r["id"]), float(r["score"])) for r in rows[:limit]]

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
        self.run("set_graph_encoder", {"encoder": encoder}, write=True)

    def tables(self) -> list[Row]:
        """Every table (id, doc_id, page, index, markdown) in document order."""
        return [dict(r) for r in self.run("document_tables")]

    def counts(self) -> GraphCounts:
        labels = {str(r["name"]): int(r["count"]) for r in self.run("count_labels")}
        rels = {str(r["name"]): int(r["count"]) for r in self.run("count_relationships")}
        return GraphCounts(dict(sorted(labels.items())), dict(sorted(rels.items())))

    # -- k-NN maintenance (used by ingest) ---------------------------------------------------

    def knn_candidates(
        self,
        vectors: Sequence[Sequence[float]],
        *,
        limit: int,
        exclude_docs: Sequence[str] = (),
        exclude_ids: Sequence[Sequence[str]] = (),
    ) -> list[tuple[int, str]]:
        """Nearest passages of many vectors in one query: ``(vector index, passage id)`` pairs,
        leaving out, per vector, the passages of document ``exclude_docs[i]`` and the passages
        ``exclude_ids[i]``."""
        if not vectors or limit < 1:
            return []
        rows = [
            {
                "i": i,
                "vector": [float(x) for x in vector],
                "exclude": list(exclude_ids[i]) if i < len(exclude_ids) else [],
                "exclude_doc": exclude_docs[i] if i < len(exclude_docs) else "",
            }
            for i, vector in enumerate(vectors)
        ]
        params = {"rows": rows, "limit": limit}
        return [(int(r["i"]), str(r["id"])) for r in self.run("knn_candidates", params)]

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

    def passages_needing_knn(self, limit: int = 1000, after: str = "") -> list[Row]:
        """Passages flagged because a removed or replaced document held some of their SIMILAR
        neighbours, or because they had fewer than k: id and embedding, in id order after
        ``after``."""
        return self.run("passages_needing_knn", {"limit": limit, "after": after})

    def replace_similar(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Replace the SIMILAR out-edges of passages (``{source, targets: [{id, score,
        method}], full}``) in one query; the flag is cleared where ``full``."""
        if rows:
            self.run("replace_similar", {"rows": [dict(r) for r in rows]}, write=True)

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

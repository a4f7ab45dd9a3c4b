"""Finding passages: the vector index searched to a depth that sees past passages excluded and
passages the caller may not read, and full-text matches ranked by BM25 over what the caller may
read. :class:`GraphStore` inherits it; everything goes through ``run`` with named queries."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from typing import Any

from kgp import ranking
from kgp.access import ADMIN_CALLER, Caller
from kgp.errors import ConfigurationError
from kgp.stores.coverage import reads_all
from kgp.stores.maintenance import RunsQueries, Upkeep
from kgp.stores.model import SearchHit, passage_document
from kgp.text import query_terms, stems

TIE = 1e-4  # similarities closer than this may be ordered differently by the index
FULLTEXT_CAP = 2000  # passages per query term that BM25 ranking reads
COUNT_SECONDS = 30.0  # how long a caller's count of readable passages is kept


def first_depth(want: int) -> int:
    """How deep :meth:`StoreSearch.nearest` first asks the index, for ``want`` passages; pure."""
    return want + max(10, want)


class StoreSearch(RunsQueries):
    """Vector and full-text search, for every store."""

    dimension: int | None
    # whether the full-text index holds each passage's kgp.text.index_terms (stemmed by kgp)
    # rather than its text (stemmed by the index): the embedded store's
    terms_indexed = False
    fulltext_or: str  # how the dialect's full-text query joins terms, any of which may match
    _counts: dict[tuple[str, ...], tuple[int, float]]  # caller -> (readable passages, when)
    upkeep: Upkeep

    @abstractmethod
    def caller_now(self) -> Caller: ...

    @abstractmethod
    def reading_as(self, caller: Caller) -> AbstractContextManager[None]: ...

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
        skip_docs: Collection[str] = (),
        depth_cap: int | None = None,
        start: int | None = None,
        above: Sequence[float] = (),
    ) -> list[list[tuple[str, float]]]:
        """For each vector, its nearest passages as ``(id, cosine)``, best first (ties by id):
        at least ``want`` of them with every passage tied with the ``want``-th (within
        ``TIE``, so the order by id is the same whatever order the index was built in), and
        with ``floor``, every passage more similar than it.
        Per vector the passages of document ``exclude_docs[i]`` and the ids ``exclude_ids[i]``
        are left out, and for every vector the passages of ``skip_docs`` (documents a write is
        about to replace: left out here, not after, or they could take a place of the ``want``
        and their ties; the query leaves out one document per vector, a list would be compared
        with every entry).

        The vector index is asked to a depth, then deeper for the vectors that came back short:
        excluded passages and those of documents the caller may not read take places in the
        index's answer without being returned. A depth of the index's size has seen
        everything; ``depth_cap`` stops earlier. ``start``: the first
        depth, where a caller knows the vectors need more than :func:`first_depth`; ``above``:
        per vector, a similarity its ``want`` hits and their ties are thought to lie above (only
        what lies above it is returned; a vector with fewer above it is asked again without it,
        from the first depth)."""
        if not vectors or want < 1:
            return [[] for _ in vectors]
        results: list[list[tuple[str, float]]] = [[] for _ in vectors]
        # once a vector has its ``want`` hits, a deeper search needs only what lies above its
        # ``want``-th (less TIE) or the floor: the query returns no more (most of a deep search,
        # which asks again from the top), and the least similarity it saw says whether the
        # search went below that bar
        bars: dict[int, float] = dict(enumerate(above))
        hinted = set(bars)  # bars the caller gave, which may lie above a vector's ``want``-th
        cap = None if depth_cap is None else max(depth_cap, first_depth(want))
        bound: int | None = None
        depth = max(start or 0, first_depth(want))
        depths = dict.fromkeys(range(len(vectors)), depth if cap is None else min(depth, cap))
        pending = list(range(len(vectors)))
        while pending:
            rows = [
                {
                    "i": i,
                    "vector": list(map(float, vectors[i])),
                    "limit": depths[i],
                    "exclude": list(exclude_ids[i]) if i < len(exclude_ids) else [],
                    "exclude_doc": exclude_docs[i] if i < len(exclude_docs) else "",
                    "bar": bars.get(i),
                }
                for i in pending
            ]
            seen = {int(r["i"]): r for r in self._knn_candidates(rows)}
            bound = next((int(r["bound"]) for r in seen.values()), None)
            again: list[int] = []
            deeper: dict[int, int] = {}  # vector -> the depth it would be asked to next
            for i in pending:
                row = seen.get(i)
                # each passage once (Neo4j's index may return a node twice while it changes)
                best = {
                    str(pid): float(sim)
                    for pid, sim in (row["hits"] if row else [])
                    if not skip_docs or passage_document(str(pid)) not in skip_docs
                }
                hits = sorted(best.items(), key=lambda hit: (-hit[1], hit[0]))
                results[i] = hits
                lowest = row["lowest"] if row else None
                if len(hits) < want and i in hinted and lowest is not None and lowest < bars[i]:
                    # the search went below the caller's bar and found fewer than ``want``
                    # above it: asked again without it, from the first depth
                    hinted.discard(i)
                    del bars[i]
                    depths[i] = first_depth(want)
                    again.append(i)
                    continue
                if len(hits) < want:
                    short = True
                else:
                    hinted.discard(i)
                    bar = hits[want - 1][1] - TIE
                    if floor is not None:
                        bar = min(bar, floor)
                    short = lowest is None or lowest >= bar
                    bars[i] = min(bar, bars.get(i, bar))
                if short:
                    # a caller who may read a small share of the passages gets few hits per
                    # entry of the index: go as deep as that share says, at least four times
                    deeper[i] = max(4 * depths[i], depths[i] * want * 2 // max(len(hits), 1))
            if deeper:
                if bound is None:  # the index's size, which only decides how deep to ask
                    with self.reading_as(ADMIN_CALLER):
                        bound = self.upkeep.vector_index_entries()
                most = bound if cap is None else min(bound, cap)
                for i, wanted in deeper.items():
                    if depths[i] < most:  # else it has seen everything, or as much as it may
                        depths[i] = min(wanted, max(most, want))
                        again.append(i)
            pending = sorted(again)
        return results

    def _knn_candidates(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each row's nearest passages to its depth (``knn_candidates``; for a caller who
        reads every passage, a query that reads no document: 14% faster 2,048 deep)."""
        query = "knn_candidates_all" if reads_all(self, self.caller_now()) else "knn_candidates"
        return self.run(query, {"rows": rows})

    def fulltext_search(self, text: str, limit: int = 10) -> list[SearchHit]:
        """Passages matching words of ``text``, ranked by BM25 with binary term frequency:
        the sum of the matched terms' inverse document frequencies, counted over the passages
        the caller may read (so the ranking reveals nothing of the others). The index finds the
        matches (every form of a word: Lucene stems; the embedded store's index holds terms kgp
        stemmed, ``terms_indexed``, and the words are stemmed alike); kgp does the ranking:
        FalkorDB's score ignores rarity, and Lucene's (Neo4j) counts every passage. Terms
        matching more than ``FULLTEXT_CAP`` readable passages count for none (reading only that
        many of their matches); when every term is that common, the index's own order."""
        terms = stems(query_terms(text)) if self.terms_indexed else query_terms(text)
        if not terms or limit < 1:
            return []
        cap = max(FULLTEXT_CAP, limit)
        postings: list[tuple[int, list[str]]] = []
        # a caller reading every passage (the admin; any in a covered read): a query that checks
        # no document (5x faster at 1M)
        query = "fulltext_term_all" if reads_all(self, self.caller_now()) else "fulltext_term"
        for term in terms:  # a query each: it stops past the cap (see fulltext_term.cypher)
            for row in self.run(query, {"term": term, "limit": cap + 1}):  # one row
                if 0 < int(row["n"]) <= cap:  # a more common term counts for no passage
                    postings.append((int(row["n"]), [str(pid) for pid in row["ids"]]))
        scores = ranking.binary(postings, total=self.readable_passages()) if postings else {}
        if scores:
            return [SearchHit(pid, round(score, 6)) for pid, score in ranking.top(scores, limit)]
        rows = self.run("fulltext_search", {"query": self.fulltext_or.join(terms), "limit": limit})
        return [SearchHit(str(r["id"]), float(r["score"])) for r in rows]

    def forget_counts(self) -> None:
        """Forget every caller's count of readable passages."""
        self._counts.clear()

    def readable_passages(self) -> int:
        """How many passages the caller may read (BM25's n), kept ``COUNT_SECONDS`` per caller:
        counting them walks every readable document. It depends on nothing the caller cannot
        read; a write through this store forgets it at once."""
        key = self.caller_now().key
        held = self._counts.get(key)
        if held is not None and time.monotonic() - held[1] < COUNT_SECONDS:
            return held[0]
        rows = self.run("count_readable_passages")
        n = int(rows[0]["n"]) if rows else 0
        self._counts[key] = (n, time.monotonic())
        return n

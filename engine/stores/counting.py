"""``kgp stats``: nodes by label, relationships by type and documents by group, as the caller may
read them, at a cost that does not grow faster than the graph."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable

from kgp.access import Caller
from kgp.stores.maintenance import Row, RunsQueries
from kgp.stores.model import GraphCounts

# what documents hold and link (a caller reading every document reads all of these), and what a
# trace does (read by the trace's own groups)
DOCUMENT_LABELS = frozenset({"Document", "Page", "Table", "Passage", "Keyword"})
DOCUMENT_RELATIONSHIPS = frozenset(
    {"HAS_PAGE", "CONTAINS", "HAS_PASSAGE", "NEXT", "HAS_KEYWORD", "SIMILAR"}
)
TRACE_LABELS = frozenset({"Trace"})
TRACE_RELATIONSHIPS = frozenset({"RETRIEVED", "STEP"})


class StoreCounts(RunsQueries):
    @abstractmethod
    def caller_now(self) -> Caller: ...

    def counts(self) -> GraphCounts:
        """Nodes by label, relationships by type and documents by group: every one for the
        admin, what the caller may read for anyone else. A caller who may read every document
        (the common case) gets the graph's counts of them, which need no filter per node; else
        the filtered counts walk every readable document's links, never looking each edge's
        target document up (why: docs/decisions/0012-the-access-filter-and-covered-reads.md)."""
        labels, rels = _named(self.run("count_labels")), _named(self.run("count_relationships"))
        if not self.caller_now().admin:
            labels = _only(labels, DOCUMENT_LABELS)
            rels = _only(rels, DOCUMENT_RELATIONSHIPS)
            if not labels:  # some document is hidden from the caller (or there are none)
                labels = _named(self.run("readable_labels"))
                rels = _named(self.run("readable_relationships"))
            traces = _named(self.run("readable_trace_counts"))
            labels |= _only(traces, TRACE_LABELS)
            rels |= _only(traces, TRACE_RELATIONSHIPS)
        groups = {str(r["name"]): int(r["count"]) for r in self.run("count_groups")}
        return GraphCounts(
            dict(sorted(labels.items())), dict(sorted(rels.items())), dict(sorted(groups.items()))
        )


def _named(rows: Iterable[Row]) -> dict[str, int]:
    """``{name: count}`` of a count query's rows, the empty ones left out."""
    return {str(r["name"]): int(r["count"]) for r in rows if r["count"] and int(r["count"])}


def _only(counts: dict[str, int], names: frozenset[str]) -> dict[str, int]:
    return {name: n for name, n in counts.items() if name in names}

"""``kgp maintain``: keep a long-lived graph healthy between syncs. It finishes what stopped
syncs left (documents not yet linked, passages flagged for new neighbours), rebuilds a vector
index that has lost recall, or always when asked, counts the group sets in use again
(kgp.stores.coverage), and compacts the store's log.
Run it from a timer (cron, systemd) on graphs that change often; ``kgp stats`` shows the
index's health without changing anything."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kgp.access import ADMIN_CALLER
from kgp.ingest.sync import Syncer
from kgp.stores.health import RECALL_FLOOR, IndexHealth

SAMPLE = 20  # passages whose 10 nearest are compared with exact search, before and after


@dataclass
class MaintenanceReport:
    before: IndexHealth
    after: IndexHealth | None = None
    recovered: int = 0  # documents a stopped sync had written but not linked
    refilled: int = 0  # passages whose neighbours were recomputed
    rebuilt: bool = False  # the vector index was built again
    compacted: bool = False  # the store's log was rewritten as a snapshot
    seconds: float = 0.0
    reasons: list[str] = field(default_factory=list)  # why the index was rebuilt

    def as_dict(self) -> dict[str, Any]:
        return {
            "before": self.before.as_dict(),
            "after": self.after.as_dict() if self.after else None,
            "recovered": self.recovered,
            "refilled": self.refilled,
            "rebuilt": self.rebuilt,
            "reasons": self.reasons,
            "compacted": self.compacted,
            "seconds": self.seconds,
        }


def maintain(syncer: Syncer, *, rebuild: bool = False, sample: int = SAMPLE) -> MaintenanceReport:
    """Recover, refill, rebuild the vector index when its health asks for it (or ``rebuild``),
    compact; each write under the syncer's guard, as a sync's are."""
    started = time.perf_counter()
    store = syncer.store
    with store.reading_as(ADMIN_CALLER):
        store.upkeep.prepare_writes()
        report = MaintenanceReport(before=store.upkeep.index_health(sample))
        with syncer.guard():
            if store.links.pending_documents():
                report.recovered = syncer.linker.recover()
            if store.links.knn_flags():
                report.refilled = syncer.linker.refill()
        report.reasons = rebuild_reasons(report.before, asked=rebuild)
        if report.reasons:
            with syncer.guard():
                store.upkeep.rebuild_vector_index()
            report.rebuilt = True
        with syncer.guard():  # the group sets of removed documents go (kgp.stores.coverage)
            store.upkeep.record_access_sets()
        report.compacted = store.upkeep.checkpoint(force=True)
        report.after = store.upkeep.index_health(sample)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def rebuild_reasons(health: IndexHealth, *, asked: bool) -> list[str]:
    """Why the vector index should be built again (none: it stays)."""
    if health.state == "none":
        return []
    reasons = ["asked (--rebuild)"] if asked else []
    if health.low_recall:
        reasons.append(f"sampled recall@10 {health.recall_at_10} is below {RECALL_FLOOR}")
    return reasons

"""``kgp maintain``: keep a long-lived graph healthy between syncs. It finishes what stopped
syncs left (documents not yet linked, passages flagged for new neighbours), rebuilds a vector
index that has lost recall, piled up orphaned entries or was built for a smaller graph (its
efRuntime, kgp.stores.health.ef_for), or always when asked, counts the group sets in use again
(kgp.stores.coverage), and compacts the store's log. Other processes keep answering questions
meanwhile: while the index is built again their vector searches are exact (kgp.stores.falkor).
Run it from a timer (cron, systemd) on graphs that change often; ``kgp stats`` shows the
index's health without changing anything."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kgp.access import ADMIN_CALLER
from kgp.ingest.sync import Syncer
from kgp.stores.health import RECALL_FLOOR, VECTOR_M, IndexHealth

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

    @property
    def advice(self) -> str | None:
        """What to do when the rebuild left the sampled recall below the floor: the graph needs
        more search candidates than the index keeps (a rebuild at the same efRuntime gives the
        same recall: 0.898 at 795k passages with 1,024 and M 16), or more links per entry (M 32
        gave 0.954 there with the same efRuntime)."""
        after = self.after
        if not self.rebuilt or after is None or not after.low_recall or after.ef_runtime is None:
            return None
        fewer_links = after.m is not None and after.m < VECTOR_M
        links = f"KGP_VECTOR_M={VECTOR_M} (cheaper) or " if fewer_links else ""
        return (
            f"sampled recall@10 is still below {RECALL_FLOOR} after the rebuild: this graph "
            f"needs more search candidates than efRuntime {after.ef_runtime}; set "
            f"{links}KGP_VECTOR_EF={2 * after.ef_runtime} and run kgp maintain again"
        )

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
            "advice": self.advice,
        }


def maintain(syncer: Syncer, *, rebuild: bool = False, sample: int = SAMPLE) -> MaintenanceReport:
    """Recover, refill, rebuild the vector index when its health asks for it (or ``rebuild``),
    compact; each write under the syncer's guard, as a sync's are."""
    started = time.perf_counter()
    store = syncer.store
    with store.reading_as(ADMIN_CALLER):
        store.prepare_writes()
        report = MaintenanceReport(before=store.index_health(sample))
        with syncer.guard():
            if store.pending_documents():
                report.recovered = syncer.linker.recover()
            if store.knn_flags():
                report.refilled = syncer.linker.refill()
        report.reasons = rebuild_reasons(report.before, asked=rebuild)
        if report.reasons:
            with syncer.guard():
                store.rebuild_vector_index()
            report.rebuilt = True
        with syncer.guard():  # the group sets of removed documents go (kgp.stores.coverage)
            store.record_access_sets()
        report.compacted = store.checkpoint(force=True)
        report.after = store.index_health(sample)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def rebuild_reasons(health: IndexHealth, *, asked: bool) -> list[str]:
    """Why the vector index should be built again (none: it stays)."""
    if health.state == "none":
        return []
    reasons = ["asked (--rebuild)"] if asked else []
    if health.low_recall:
        reasons.append(f"sampled recall@10 {health.recall_at_10} is below {RECALL_FLOOR}")
    if health.ef_behind:
        reasons.append(
            f"built with efRuntime {health.ef_runtime}, the graph asks for {health.ef_wanted}"
        )
    if health.m_differs:
        reasons.append(f"built with M {health.m}, KGP_VECTOR_M asks for {health.m_wanted}")
    if health.orphaned:
        reasons.append(f"{health.orphans} orphaned entries for {health.passages} passages")
    return reasons

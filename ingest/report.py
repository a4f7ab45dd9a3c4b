"""What a sync reports: the documents it added, changed, regrouped or removed, those it skipped
and why, and its progress after each document."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str


@dataclass
class SyncReport:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    regrouped: list[str] = field(default_factory=list)  # only their access groups changed
    skipped: list[Skipped] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # "path: what of it was not read"
    passages: int = 0
    linked: int = 0  # older passages that took a new document's passage as a neighbour
    refilled: int = 0  # passages whose neighbours were recomputed after a removal
    recovered: int = 0  # documents an interrupted sync had written but not linked
    restarts: list[str] = field(default_factory=list)  # the store's server started again
    seconds: float = 0.0

    @property
    def wrote(self) -> bool:
        """The sync changed the graph."""
        return bool(
            self.added
            or self.changed
            or self.removed
            or self.regrouped
            or self.linked
            or self.refilled
            or self.recovered
        )

    @property
    def partial(self) -> bool:
        """Some documents could not be synced (they are listed in ``skipped``)."""
        return bool(self.skipped)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["partial"] = self.partial
        return data


@dataclass(frozen=True, slots=True)
class Progress:
    """Reported after each document: how far the sync is."""

    done: int
    total: int
    passages: int
    path: str

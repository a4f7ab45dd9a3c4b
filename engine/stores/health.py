"""How healthy a graph's vector index is: whether it holds every passage, and the recall@10 of
its searches against exact search on a sample of passages. ``kgp stats`` shows it; ``kgp
maintain`` rebuilds an index that has lost recall."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

RECALL_FLOOR = 0.95  # a sampled recall@10 below this asks for a rebuild


@dataclass(frozen=True, slots=True)
class IndexHealth:
    state: str  # "complete" or "none"
    passages: int  # entries
    sampled: int = 0  # passages whose 10 nearest were compared with exact search
    recall_at_10: float | None = None

    @property
    def low_recall(self) -> bool:
        return self.recall_at_10 is not None and self.recall_at_10 < RECALL_FLOOR

    @property
    def needs_rebuild(self) -> bool:
        return self.state == "complete" and self.low_recall

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "needs_rebuild": self.needs_rebuild}

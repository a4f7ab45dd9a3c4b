"""What kgp's resources share: used as context managers, they close on the way out (a graph
opened by ``kgp.open``, one reached by ``kgp.connect``, a store)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self


class Closing(ABC):
    """``with thing as t: ...`` closes ``thing`` at the end, whatever happened."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

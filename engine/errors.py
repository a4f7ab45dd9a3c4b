"""The exceptions kgp raises.

Every error kgp raises derives from :class:`KgpError`; errors of drivers, servers, parsers and
HTTP clients are translated where they enter kgp. The message of each is one line that says what
failed, where, and what to do::

    KgpError
    ├── ConfigurationError      a setting or argument is invalid
    ├── StoreUnavailableError   the graph store cannot be started, reached or logged into
    ├── StoreError              the store rejected or failed a query
    │   └── AccessDeniedError   the caller's groups do not allow the operation
    ├── DocumentError           a document cannot be read or ingested
    ├── ModelMissingError       a model path or package is missing
    ├── LlmError                the language-model endpoint failed or cannot be reached
    ├── RemovalRefusedError     a sync would remove every document, or too many of them
    ├── TrainingError           training cannot go on (out of memory, no usable data)
    └── QueryNotFoundError      no Cypher query of that name (also a LookupError)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class KgpError(Exception):
    """Root of every error kgp raises."""


class ConfigurationError(KgpError):
    """A setting, an option or an argument is invalid."""


class StoreUnavailableError(KgpError):
    """The graph store cannot be started, reached or authenticated against."""


class StoreRestartedError(StoreUnavailableError):
    """The embedded server held a write without working (stuck), and was stopped and started
    again from its log: that write may or may not have been made, so only a write that is the
    same made twice (the schema's, which checks first; a clear) is made again by kgp itself
    (:func:`again_after_restart`)."""


def again_after_restart(write: Callable[[], T]) -> T:
    """``write()``, made once more if the server was stuck in it and started again: only for a
    write that is the same made twice (the embedded server deadlocks at times:
    docs/decisions/0002-falkordb-workarounds.md, 2)."""
    try:
        return write()
    except StoreRestartedError:
        return write()


class StoreError(KgpError):
    """The graph store rejected or failed a query."""


class AccessDeniedError(StoreError):
    """The caller's groups do not allow the operation (a write, or a maintenance read that
    sees every document): only the admin view (groups ``*``) may."""


class DocumentError(KgpError):
    """A document cannot be read or ingested."""


class ModelMissingError(KgpError):
    """A model directory or package that kgp needs is not there."""


class LlmError(KgpError):
    """The OpenAI-compatible endpoint failed, timed out or cannot be reached."""


class RemovalRefusedError(KgpError):
    """A sync would remove every document of the graph, or more than the allowed share of them
    (an empty folder, a typo, an unmounted share): nothing was written."""

    def __init__(self, message: str, *, would_remove: list[str], stored: int) -> None:
        super().__init__(message)
        self.would_remove = would_remove
        self.stored = stored

    def as_dict(self) -> dict[str, Any]:
        """The refusal as plain data: what would have been removed, of how many stored."""
        return {
            "refused": True,
            "error": str(self),
            "would_remove": self.would_remove,
            "stored": self.stored,
        }


class TrainingError(KgpError):
    """Training cannot go on (out of memory, no usable data)."""


class BackupError(KgpError):
    """A backup cannot be taken or restored: the folder is in use, incomplete or damaged."""


class QueryNotFoundError(KgpError, LookupError):
    """No Cypher query file of that name exists for the dialect (a broken install or a typo in
    kgp's code, never the user's input)."""


class KgpWarning(UserWarning):
    """Warnings kgp emits (the test suite turns them into errors)."""

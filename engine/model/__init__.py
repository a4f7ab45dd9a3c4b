"""The traversal model kgp ships: ``kgp-traversal``, all-MiniLM-L6-v2 fine-tuned by ``kgp train
encoder`` on the train sets of MuSiQue, HotpotQA and 2WikiMultihopQA, in float16, installed with
the package (no download). It is the default encoder of a new graph: its vectors are the graph's
vectors, seeds, SIMILAR edges and final order. Its card is ``kgp-traversal/README.md``; its
``training.json`` records the sha256 of every weight and tokenizer file, checked when the model
is loaded and by ``kgp doctor``.

This module imports nothing heavy: it only finds, describes and checks the files."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from kgp.errors import ModelMissingError

SHIPPED_MODEL = "kgp-traversal"
FOLDER = Path(__file__).resolve().parent / SHIPPED_MODEL
FALLBACK = (
    "reinstall kgp (pip install --force-reinstall kgp); meanwhile --scorer tfidf (KGP_SCORER) "
    "retrieves without it from a graph built with another encoder, and "
    "KGP_ENCODER=all-MiniLM-L6-v2 builds new graphs without it"
)


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
        return f"{SHIPPED_MODEL} at {self.path} ({self.megabytes:.1f} MiB, from {self.base})"


def _damaged(path: Path, what: str) -> ModelMissingError:
    return ModelMissingError(f"kgp's shipped model {SHIPPED_MODEL} at {path} {what}; {FALLBACK}")


def shipped_model(*, verify: bool = False, folder: Path | None = None) -> ShippedModel:
    """The shipped model (in ``folder``, default the installed one), read from its card; with
    ``verify``, every file's sha256 checked against it (about 0.1 s). A missing, incomplete or
    damaged model is a :class:`~kgp.errors.ModelMissingError` naming the path and what to
    do."""
    folder = folder or FOLDER
    try:
        card = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in card["files"].items()}
    except (OSError, ValueError, KeyError, AttributeError):
        raise _damaged(folder, "is missing or has no readable training.json") from None
    for name, digest in files.items():
        file = folder / name
        if not file.is_file():
            raise _damaged(folder, f"lacks {name}")
        if verify and hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            raise _damaged(folder, f"has a damaged {name} (its sha256 differs from the card's)")
    return ShippedModel(folder, files, str(card.get("base", "")), str(card.get("command", "")))

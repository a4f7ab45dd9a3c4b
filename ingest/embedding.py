"""The sentence encoder: batched, on the GPU when there is one, loaded once from a local path."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from kgp.errors import ModelMissingError
from kgp.ingest.encoder import resolve_device, resolve_encoder
from kgp.settings import Device


class Encoder:
    """Embeds texts as L2-normalised float32 vectors. ``load()`` (or the first call) loads it."""

    def __init__(
        self, *, model: str, device: Device | str = Device.AUTO, batch_size: int = 64
    ) -> None:
        self.model_name = model
        self.device_setting = device
        self.batch_size = batch_size
        self._model: Any = None

    def load(self) -> Encoder:
        if self._model is None:
            path = resolve_encoder(self.model_name)
            device = resolve_device(self.device_setting)
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()

            try:
                self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
            except (OSError, ValueError) as exc:
                raise ModelMissingError(f"encoder at {path} cannot be loaded: {exc}") from None
        return self

    @property
    def dimension(self) -> int:
        """The embedding size, from the model's pooling config when it has one (no loading)."""
        if self._model is None:
            pooling = resolve_encoder(self.model_name) / "1_Pooling" / "config.json"
            try:
                return int(json.loads(pooling.read_text())["word_embedding_dimension"])
            except (OSError, ValueError, KeyError):
                pass
        self.load()
        dim = (
            self._model.get_embedding_dimension()
            if hasattr(self._model, "get_embedding_dimension")
            else self._model.get_sentence_embedding_dimension()
        )
        return int(dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One vector per text, bit for bit the same whatever else is encoded with it.

        A padded batch gives a text a vector that differs in the last bits from the one it
        gets alone (the matrix shapes differ), so a text embedded during an incremental sync
        and in a clean one would get different vectors and near-ties between neighbours could
        break differently. Texts are therefore batched only with texts of the same token
        length: no padding, identical vectors (and no time spent on padding)."""
        self.load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        items = list(texts)
        out = np.empty((len(items), self.dimension), dtype=np.float32)
        for batch in self._same_length_batches(items):
            vectors = self._model.encode(
                [items[i] for i in batch],
                batch_size=len(batch),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out[batch] = np.asarray(vectors, dtype=np.float32)
        return out

    def _same_length_batches(self, texts: list[str]) -> list[list[int]]:
        """Indices of the texts grouped by token length, at most ``batch_size`` a group."""
        tokenizer = self._model.tokenizer
        lengths = tokenizer(texts, truncation=True, max_length=self._model.max_seq_length)
        by_length: dict[int, list[int]] = {}
        for index, ids in enumerate(lengths["input_ids"]):
            by_length.setdefault(len(ids), []).append(index)
        return [
            group[start : start + self.batch_size]
            for _, group in sorted(by_length.items())
            for start in range(0, len(group), self.batch_size)
        ]

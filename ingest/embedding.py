"""The sentence encoder: batched, on the GPU when there is one, loaded once from a local path.

A sentence-transformers model made of a Transformer, a mean or CLS Pooling and optionally a
Normalize module (the bundled all-MiniLM-L6-v2, and what ``kgp train mdr`` writes) is run with
``transformers`` alone, doing what those modules do, vector for vector: importing
sentence-transformers costs seconds a question does not need. Any other model loads through
sentence-transformers."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from kgp.determinism import strict_blas
from kgp.errors import ModelMissingError
from kgp.ingest.encoder import encoder_identity, resolve_device, resolve_encoder
from kgp.model import SHIPPED_MODEL, shipped_model
from kgp.settings import Device

SHORT_TOKENS = 12  # below this many tokens, a vector's last bits depend on the batch's rows
SHORT_ROWS = 16  # ...so short texts always go in batches of exactly this many rows


class Encoder:
    """Embeds texts as L2-normalised float32 vectors. ``load()`` (or the first call) loads it.
    Safe to share between threads: loading and encoding take a lock (a Hugging Face fast
    tokenizer changes its padding and truncation state on every call, so concurrent calls could
    encode a text with another call's settings)."""

    def __init__(
        self, *, model: str, device: Device | str = Device.AUTO, batch_size: int = 64
    ) -> None:
        self.model_name = model
        self.device_setting = device
        self.batch_size = batch_size
        self._model: Any = None
        self._checked = False
        self._lock = threading.RLock()

    @property
    def identity(self) -> str:
        """How a graph records this encoder (:func:`kgp.ingest.encoder.encoder_identity`)."""
        return encoder_identity(self.model_name)

    def load(self) -> Encoder:
        with self._lock:
            return self._load()

    def _load(self) -> Encoder:
        if self._model is None:
            self._check_files()
            path = resolve_encoder(self.model_name)
            device = resolve_device(self.device_setting)
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            try:
                if TransformerPipeline.fits(path):
                    self._model = TransformerPipeline(path, device)
                else:
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(
                        str(path), device=device, local_files_only=True
                    ).float()  # as the pipeline: float32 whatever the weights were saved in
            except (OSError, ValueError) as exc:
                raise ModelMissingError(f"encoder at {path} cannot be loaded: {exc}") from None
            strict_blas()  # a warning when a text's vector could depend on its batch
        return self

    def _check_files(self) -> None:
        """The shipped model's files against its card, once (about 0.1 s): a damaged file is
        refused before the model is loaded or its dimension shapes a graph."""
        if self.model_name == SHIPPED_MODEL and not self._checked:
            shipped_model(verify=True)
            self._checked = True

    @property
    def dimension(self) -> int:
        """The embedding size, from the model's pooling config when it has one (no loading)."""
        if self._model is None:
            self._check_files()
            layout = Layout.read(resolve_encoder(self.model_name))
            if layout is not None:
                return layout.dimension
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
        break differently. Texts are therefore batched only with texts of the same token length
        (no padding, and no time spent on it); texts shorter than SHORT_TOKENS tokens, whose
        last bits also depend on how many rows a batch has, always go in batches of exactly
        SHORT_ROWS rows (filled up with copies). On a GPU a text's last bits depend on how many
        rows its batch has, whatever its length (the kernels are chosen by the matrices'
        shapes: on an H200, 362 of 400 texts got another vector alone than in one call, by up
        to 1.6e-7), so there every batch is filled up to its full size with copies of its
        texts (what the other rows hold does not matter, their number does). A model that
        sentence-transformers runs (a Dense layer after the pooling, say) has the same flaw on
        a CPU for a batch of one (a matrix-vector product), so its batches get at least
        SHORT_ROWS rows."""
        with self._lock:
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        items = list(texts)
        out = np.empty((len(items), self.dimension), dtype=np.float32)
        on_gpu = str(getattr(self._model, "device", "cpu")) != "cpu"
        least = self.batch_size if on_gpu else 0
        if not isinstance(self._model, TransformerPipeline):
            least = max(least, SHORT_ROWS)
        for batch, rows in batch_rows(self._token_lengths(items), self.batch_size, least=least):
            vectors = self._model.encode(
                [items[i] for i in rows],
                batch_size=len(rows),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out[batch] = np.asarray(vectors, dtype=np.float32)[: len(batch)]
        return out

    def _token_lengths(self, texts: list[str]) -> list[int]:
        tokenizer = self._model.tokenizer
        encoded = tokenizer(texts, truncation=True, max_length=self._model.max_seq_length)
        return [len(ids) for ids in encoded["input_ids"]]


def batch_rows(
    lengths: Sequence[int], batch_size: int, *, least: int = 0
) -> list[tuple[list[int], list[int]]]:
    """Batches of at most ``batch_size`` texts of one token length (``lengths``: each
    text's): (the texts' indices, the rows to encode, which repeat them to at least ``least``
    rows; texts under SHORT_TOKENS tokens go in batches of exactly SHORT_ROWS rows); pure."""
    by_length: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        by_length.setdefault(length, []).append(index)
    out = []
    for length, group in sorted(by_length.items()):
        size = SHORT_ROWS if length < SHORT_TOKENS else batch_size
        for start in range(0, len(group), size):
            batch = group[start : start + size]
            target = SHORT_ROWS if length < SHORT_TOKENS else max(len(batch), least)
            rows = batch if target == len(batch) else (batch * target)[:target]
            out.append((batch, rows))
    return out


# module types by save format: sentence-transformers 2-5, then 6
_MODULES = {
    "sentence_transformers.models.Transformer": "transformer",
    "sentence_transformers.base.modules.transformer.Transformer": "transformer",
    "sentence_transformers.models.Pooling": "pooling",
    "sentence_transformers.sentence_transformer.modules.pooling.Pooling": "pooling",
    "sentence_transformers.models.Normalize": "normalize",
    "sentence_transformers.base.modules.normalize.Normalize": "normalize",
}
_POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}


@dataclass(frozen=True, slots=True)
class Layout:
    """What a sentence-transformers model directory computes, when it is Transformer -> mean
    or CLS Pooling (-> Normalize)."""

    mode: str  # "mean" or "cls"
    dimension: int
    max_length: int
    normalize: bool

    @classmethod
    def read(cls, path: Path) -> Layout | None:
        """The layout of ``path`` in either save format (sentence-transformers 2-5: pooling
        flags, ``word_embedding_dimension``, ``max_seq_length``; 6: ``pooling_mode``,
        ``embedding_dimension``, the tokenizer's ``model_max_length``), or None when it does
        more than that."""
        try:
            modules = json.loads((path / "modules.json").read_text())
            kinds = [_MODULES.get(str(m.get("type")), "other") for m in modules]
            if kinds not in (["transformer", "pooling"], ["transformer", "pooling", "normalize"]):
                return None
            folder = next(
                str(m["path"]) for m, kind in zip(modules, kinds, strict=True) if kind == "pooling"
            )
            pooling = json.loads((path / folder / "config.json").read_text())
            config = json.loads((path / "sentence_bert_config.json").read_text())
            tokenizer = path / "tokenizer_config.json"
            limits = json.loads(tokenizer.read_text()) if tokenizer.is_file() else {}
        except (OSError, ValueError, KeyError, StopIteration, AttributeError):
            return None
        mode = pooling.get("pooling_mode")
        if not isinstance(mode, str):
            chosen = [
                _POOLING_FLAGS.get(key, "other")
                for key, on in pooling.items()
                if key.startswith("pooling_mode") and on is True
            ]
            mode = chosen[0] if len(chosen) == 1 else None
        dimension = pooling.get("word_embedding_dimension") or pooling.get("embedding_dimension")
        if mode not in ("mean", "cls") or not dimension:
            return None
        length = config.get("max_seq_length") or limits.get("model_max_length") or 512
        return cls(str(mode), int(dimension), int(length), kinds[-1] == "normalize")


class TransformerPipeline:
    """Transformer -> Pooling (mean or CLS) -> Normalize, as sentence-transformers runs them,
    with ``transformers`` alone (the same tokenizer call, the same pooling arithmetic)."""

    def __init__(self, path: Path, device: str) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        layout = Layout.read(path)
        if layout is None:
            raise ValueError(f"{path} is not a Transformer -> Pooling (-> Normalize) model")
        self.max_seq_length = layout.max_length
        self.mode = layout.mode
        self.normalize = layout.normalize
        self.dimension = layout.dimension
        self.device = device
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        # weights shipped in float16 run in float32: the same vectors on every device
        model = AutoModel.from_pretrained(str(path), local_files_only=True)
        self.model = model.float().to(device).eval()
        self._torch = torch

    @classmethod
    def fits(cls, path: Path) -> bool:
        """A Transformer, a mean or CLS Pooling and perhaps a Normalize, nothing else."""
        return Layout.read(path) is not None

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        """L2-normalised vectors (sentence-transformers' ``normalize_embeddings=True``)."""
        torch = self._torch
        functional = torch.nn.functional
        with torch.inference_mode():
            batch = self.tokenizer(
                [str(text).strip() for text in texts],
                padding=True,
                truncation="longest_first",
                max_length=self.max_seq_length,
                return_tensors="pt",
            ).to(self.device)
            tokens = self.model(**batch, return_dict=True).last_hidden_state
            mask = batch["attention_mask"]
            if self.mode == "cls":
                pooled = tokens[:, 0]
            else:
                weights = mask.unsqueeze(-1).to(tokens.dtype)
                summed = (tokens * weights).sum(dim=1, dtype=torch.float32)
                count = torch.clamp(weights.sum(dim=1, dtype=torch.float32), min=1e-9)
                pooled = (summed / count).to(tokens.dtype)
            if self.normalize:
                pooled = functional.normalize(pooled, p=2, dim=-1)
            pooled = functional.normalize(pooled, p=2, dim=1)
            return np.asarray(pooled.float().cpu().numpy(), dtype=np.float32)

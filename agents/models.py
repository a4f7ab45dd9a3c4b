"""Scorers that load a model from a path or talk to an endpoint: ``mdr``, ``t5`` and ``llm``,
registered in ``kgp.names.SCORERS``. Building one checks its configuration (a missing path is a
ConfigurationError at once); the model itself loads on the first question, once per process."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from kgp.agents.context import OnFirstUse
from kgp.agents.scorers import GeneratedEvidenceScorer, MdrScorer
from kgp.agents.traversal import Score
from kgp.errors import ConfigurationError, ModelMissingError
from kgp.settings import Device, Settings

if TYPE_CHECKING:
    from kgp.agents.context import Services
    from kgp.agents.generators import T5Generator
    from kgp.ingest.embedding import Encoder


def _models(services: Services, scorer: str) -> Settings:
    settings = services.config.models
    if settings is None:
        raise ConfigurationError(f"scorer {scorer!r} needs settings (its model or endpoint)")
    return settings


def mdr(services: Services) -> Score:
    """A fine-tuned bi-encoder for f and g: ``KGP_MDR_MODEL``, else kgp's shipped model. When
    it is the graph's own encoder, g is the candidates' stored vectors (no encoding)."""
    from kgp.ingest.encoder import encoder_identity, resolve_encoder
    from kgp.model import SHIPPED_MODEL

    settings = _models(services, "mdr")
    model = settings.mdr_model or SHIPPED_MODEL
    resolve_encoder(model)  # a wrong path fails now, not at the first question
    encoder = OnFirstUse(lambda: _encoder(model, settings.device, settings.embed_batch))

    def encode(texts: list[str]) -> np.ndarray:
        loaded: Encoder = encoder.get()
        return loaded.encode(texts)

    own = encoder_identity(model) == services.encoder
    stored = services.passages.vectors if own else None
    return MdrScorer(encode, services.passages.texts, vectors=stored, scope=services.passages.scope)


class _LazyT5:
    def __init__(self, path: str, device: Device) -> None:
        if not (Path(path).expanduser() / "config.json").is_file():
            raise ModelMissingError(
                f"t5 model: no model at {Path(path).expanduser()} (no config.json); set "
                "KGP_T5_MODEL to a seq2seq model directory, e.g. one written by kgp train"
            )
        self._model = OnFirstUse(lambda: _t5(path, device))

    def next_evidence(self, question: str, evidence: Sequence[Sequence[str]]) -> list[str]:
        generator: T5Generator = self._model.get()
        return generator.next_evidence(question, evidence)


def t5(services: Services) -> Score:
    """A fine-tuned seq2seq model writes each path's next evidence (``KGP_T5_MODEL``)."""
    settings = _models(services, "t5")
    if not settings.t5_model:
        raise ConfigurationError(
            "the t5 scorer needs a seq2seq model: set KGP_T5_MODEL to its directory"
        )
    passages = services.passages
    generator = _LazyT5(settings.t5_model, settings.device)
    return GeneratedEvidenceScorer(
        "t5", generator, services.embed, passages.texts, passages.vectors
    )


def llm(services: Services) -> Score:
    """The chat model writes each path's next evidence (``KGP_LLM_*``)."""
    from kgp.agents.generators import LlmGenerator
    from kgp.agents.llm import ChatClient

    settings = _models(services, "llm")
    passages = services.passages
    generator = LlmGenerator(ChatClient(settings))
    return GeneratedEvidenceScorer(
        "llm", generator, services.embed, passages.texts, passages.vectors
    )


# Loaded once per process: an evaluation opens one graph per question in the paper's setting.
@lru_cache(maxsize=4)
def _encoder(model: str, device: Device, batch_size: int) -> Encoder:
    from kgp.ingest.embedding import Encoder

    return Encoder(model=model, device=device, batch_size=batch_size).load()


@lru_cache(maxsize=4)
def _t5(model: str, device: Device) -> T5Generator:
    from kgp.agents.generators import T5Generator

    return T5Generator(model, device=device)

"""Scorers that load a model from a path or talk to an endpoint: ``mdr``, ``t5`` and ``llm``.
Built once per client and reused for every question."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np
from kgp.agents.generators import LlmGenerator, T5Generator
from kgp.agents.llm import ChatClient
from kgp.agents.scorers import GeneratedEvidenceScorer, MdrScorer
from kgp.agents.traversal import Score
from kgp.errors import ConfigurationError
from kgp.ingest.embedding import Encoder
from kgp.settings import Device, Settings

MODEL_SCORERS = ("mdr", "t5", "llm")


def model_scorer(
    name: str,
    settings: Settings,
    *,
    embed: Callable[[list[str]], np.ndarray],
    texts: Callable[[Sequence[str]], Mapping[str, str]],
    vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]],
) -> Score:
    """The ``mdr``, ``t5`` or ``llm`` scorer from the settings' model paths and endpoint;
    ``embed`` is the graph's encoder (the space of the stored passage vectors)."""
    if name == "mdr":
        if not settings.mdr_model:
            raise ConfigurationError(
                "the mdr scorer needs a bi-encoder: set KGP_MDR_MODEL to its directory"
            )
        encoder = _encoder(settings.mdr_model, settings.device, settings.embed_batch)
        return MdrScorer(encoder.encode, texts)
    if name == "t5":
        if not settings.t5_model:
            raise ConfigurationError(
                "the t5 scorer needs a seq2seq model: set KGP_T5_MODEL to its directory"
            )
        generator = _t5(settings.t5_model, settings.device)
        return GeneratedEvidenceScorer("t5", generator, embed, texts, vectors)
    if name == "llm":
        return GeneratedEvidenceScorer(
            "llm", LlmGenerator(ChatClient(settings)), embed, texts, vectors
        )
    raise ConfigurationError(f"unknown model scorer {name!r}; choose one of {MODEL_SCORERS}")


# Loaded once per process: an evaluation opens one graph per question in the paper's setting.
@lru_cache(maxsize=4)
def _encoder(model: str, device: Device, batch_size: int) -> Encoder:
    return Encoder(model=model, device=device, batch_size=batch_size).load()


@lru_cache(maxsize=4)
def _t5(model: str, device: Device) -> T5Generator:
    return T5Generator(model, device=device)

"""``kgp train mdr``: a sentence-transformers bi-encoder (default MiniLM) fine-tuned with a
contrastive loss (each query against its positive, its hard negative and every other passage of
the batch) on the MDR query ``question + passages so far`` (what the ``mdr`` scorer encodes)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kgp.training.loop import Progress, TrainConfig, optimise, print_to_stderr
from kgp.training.pairs import Pair, PairSet
from kgp.training.report import TrainReport
from kgp.training.session import TrainingSession


def ranking_metrics(encode: Callable[[list[str]], Any], pairs: Sequence[Pair]) -> dict[str, float]:
    """Each held-out query against its positive and its hard negatives: how often the positive
    ranks first (hit@1) and its mean reciprocal rank."""
    import numpy as np

    if not pairs:
        return {}
    queries = encode([p.mdr_query() for p in pairs])
    hits, rr = 0.0, 0.0
    for query, pair in zip(queries, pairs, strict=True):
        candidates = encode([pair.positive, *pair.negatives])
        scores = candidates @ np.asarray(query)
        rank = 1 + int((scores[1:] > scores[0]).sum())
        hits += rank == 1
        rr += 1 / rank
    return {"hit@1": round(100 * hits / len(pairs), 1), "mrr": round(100 * rr / len(pairs), 1)}


def train_mdr(
    pairs: PairSet,
    base: str,
    output: Path,
    *,
    config: TrainConfig | None = None,
    device: str = "auto",
    overwrite: bool = False,
    held_out: float = 0.1,
    data: Sequence[str] = (),
    progress: Progress = print_to_stderr,
    kind: str = "mdr",
    half: bool = False,
    command: str = "",
) -> TrainReport:
    """Fine-tune the bi-encoder at ``base`` (a sentence-transformers directory or the default
    encoder's name) and save it at ``output``. ``kind`` names the recipe on the model card
    (``mdr``: hop pairs; ``encoder``: question pairs); ``half`` saves the weights in float16,
    and the held-out figures are measured on those rounded weights."""
    import torch
    from kgp.ingest.encoder import resolve_encoder
    from sentence_transformers import SentenceTransformer

    config = config or TrainConfig()
    session = TrainingSession.start(
        pairs, output, config=config, device=device, overwrite=overwrite, held_out=held_out
    )
    # trained in float32 whatever the base was saved in (the shipped model is float16: loaded as
    # saved, its weights would be trained in half precision)
    model = SentenceTransformer(
        str(resolve_encoder(base)),
        device=session.device,
        local_files_only=True,
        model_kwargs={"dtype": torch.float32},
    )
    model.max_seq_length = config.max_length
    train, held = session.train, session.held

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)

    report = session.report(kind, base, pairs, data, asdict(config))
    report.command = command
    before = ranking_metrics(encode, held)
    rng = random.Random(config.seed)
    report.losses = optimise(
        model,
        lambda batch: _contrastive_step(model, batch, config, rng),
        train,
        config,
        rng,
        session.temp,
        lambda m: progress(f"{kind} {m}"),
    )
    model.eval()
    if half:
        model.half().float()  # the weights as they ship: rounded to float16
    after = ranking_metrics(encode, held)
    report.held_out = {
        "questions": len({p.group for p in held}),
        "pairs": len(held),
        **{f"base_{k}": v for k, v in before.items()},
        **after,
    }
    if half:
        model.half()
    model.save(str(session.temp))
    return session.finish(report)


def _contrastive_step(
    model: Any, batch: list[Pair], config: TrainConfig, rng: random.Random
) -> Any:
    """In-batch negatives plus hard negatives: each query must pick its own positive among
    every passage of the batch (a passage equal to its positive is masked, not a negative)."""
    import torch
    import torch.nn.functional as F
    from sentence_transformers.util import batch_to_device

    queries = [p.mdr_query() for p in batch]
    passages = [p.positive for p in batch]
    for pair in batch:
        passages += rng.sample(list(pair.negatives), min(config.negatives, len(pair.negatives)))

    def embed(texts: list[str]) -> Any:
        prepare = getattr(model, "preprocess", None) or model.tokenize  # renamed in ST 6
        features = batch_to_device(prepare(texts), model.device)
        return F.normalize(model(features)["sentence_embedding"], dim=-1)

    scores = embed(queries) @ embed(passages).T * config.scale
    same = torch.tensor([[text == p.positive for text in passages] for p in batch])
    labels = torch.arange(len(batch))
    same[labels, labels] = False
    scores = scores.masked_fill(same.to(scores.device), float("-inf"))
    return F.cross_entropy(scores, labels.to(scores.device))

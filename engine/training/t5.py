"""``kgp train t5``: a seq2seq checkpoint fine-tuned to write the next supporting passage from
Listing 1's instruction (what the ``t5`` scorer generates)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kgp.errors import ConfigurationError
from kgp.training.loop import Progress, TrainConfig, optimise, print_to_stderr
from kgp.training.pairs import Pair, PairSet
from kgp.training.report import TrainReport
from kgp.training.session import TrainingSession


def train_t5(
    pairs: PairSet,
    base: str,
    output: Path,
    *,
    config: TrainConfig | None = None,
    device: str = "auto",
    overwrite: bool = False,
    held_out: float = 0.1,
    max_target_length: int = 128,
    data: Sequence[str] = (),
    progress: Progress = print_to_stderr,
) -> TrainReport:
    """Instruction fine-tuning of the seq2seq checkpoint at ``base`` (Listing 1's input ->
    the next supporting passage); saved with its tokenizer at ``output``."""
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    config = config or TrainConfig(learning_rate=3e-4)
    source = Path(base).expanduser()
    if not (source / "config.json").is_file():
        raise ConfigurationError(
            f"t5 base: no model at {source} (no config.json); give a seq2seq checkpoint directory"
        )
    session = TrainingSession.start(
        pairs, output, config=config, device=device, overwrite=overwrite, held_out=held_out
    )
    where = session.device
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(source, local_files_only=True)
    model = model.float().to(where)  # trained in float32 whatever the base was saved in
    train, held = session.train, session.held
    report = session.report(
        "t5", base, pairs, data, {**asdict(config), "max_target_length": max_target_length}
    )

    def loss_of(batch: list[Pair]) -> Any:
        inputs = tokenizer(
            [p.t5_input() for p in batch],
            padding=True,
            truncation=True,
            max_length=config.max_length,
            return_tensors="pt",
        ).to(where)
        labels = tokenizer(
            [p.positive for p in batch],
            padding=True,
            truncation=True,
            max_length=max_target_length,
            return_tensors="pt",
        ).input_ids.to(where)
        labels[labels == tokenizer.pad_token_id] = -100
        return model(**inputs, labels=labels).loss

    def held_loss() -> float:
        if not held:
            return float("nan")
        model.eval()
        with torch.no_grad():
            values = [
                float(loss_of(held[i : i + config.batch_size]))
                for i in range(0, len(held), config.batch_size)
            ]
        return round(sum(values) / len(values), 4)

    before = held_loss()
    report.losses = optimise(
        model,
        loss_of,
        train,
        config,
        random.Random(config.seed),
        session.temp,
        lambda m: progress("t5 " + m),
    )
    report.held_out = {
        "questions": len({p.group for p in held}),
        "pairs": len(held),
        "base_loss": before,
        "loss": held_loss(),
    }
    model.save_pretrained(session.temp)
    tokenizer.save_pretrained(session.temp)
    return session.finish(report)

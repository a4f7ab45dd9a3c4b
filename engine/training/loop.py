"""The training loop the mdr and t5 models share: shuffled batches, AdamW with linear warm-up and
decay, progress every ten steps, and running out of memory turned into a one-line error."""

from __future__ import annotations

import math
import random
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgp.determinism import repeatable_kernels
from kgp.errors import TrainingError
from kgp.training.pairs import Pair

Progress = Callable[[str], None]


@dataclass
class TrainConfig:
    """Hyper-parameters of a fine-tuning run (``negatives`` and ``scale`` are mdr's only)."""

    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 3e-5
    warmup: float = 0.1
    seed: int = 13
    max_length: int = 128  # MiniLM's training length; 256 doubled the time per step
    negatives: int = 1  # hard negatives per pair in each batch (mdr)
    scale: float = 20.0  # similarity scale of the contrastive loss (mdr)
    threads: int = 0  # torch's CPU threads (0: its default); the weights depend on it


def print_to_stderr(message: str) -> None:
    """The default progress: one line on standard error."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _out_of_memory(exc: BaseException, batch_size: int) -> TrainingError | None:
    text = str(exc).lower()
    if isinstance(exc, MemoryError) or "out of memory" in text or "can't allocate" in text:
        return TrainingError(
            f"ran out of memory at batch size {batch_size}; try --batch-size "
            f"{max(1, batch_size // 2)} (or a shorter --max-length)"
        )
    return None


def _batches(count: int, size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(count))
    rng.shuffle(order)
    return [order[i : i + size] for i in range(0, count, size)]


def _schedule(optimizer: Any, steps: int, warmup: float) -> Any:
    import torch

    warm = max(1, int(steps * warmup))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (steps - step) / max(1, steps - warm))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def optimise(
    model: Any,
    loss_of: Callable[[list[Pair]], Any],
    train: list[Pair],
    config: TrainConfig,
    rng: random.Random,
    temp: Path,
    progress: Progress,
) -> list[float]:
    """The training loop both models share: shuffled batches, AdamW with linear warm-up and
    decay, progress every ten steps, repeatable kernels on a GPU; the mean loss of each epoch.
    Running out of memory removes the partial output and becomes one line suggesting a smaller
    batch."""
    import torch

    steps = config.epochs * math.ceil(len(train) / config.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    scheduler = _schedule(optimizer, steps, config.warmup)
    step, means = 0, []
    try:
        with repeatable_kernels(model):
            for epoch in range(config.epochs):
                model.train()
                losses = []
                for batch in _batches(len(train), config.batch_size, rng):
                    loss = loss_of([train[i] for i in batch])
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    scheduler.step()
                    step += 1
                    losses.append(float(loss.detach()))
                    if step % 10 == 0 or step == steps:
                        recent = losses[-10:]
                        progress(
                            f"epoch {epoch + 1}/{config.epochs} step {step}/{steps} "
                            f"loss {sum(recent) / len(recent):.4f}"
                        )
                means.append(round(sum(losses) / max(len(losses), 1), 4))
    except (RuntimeError, MemoryError) as exc:
        shutil.rmtree(temp, ignore_errors=True)
        error = _out_of_memory(exc, config.batch_size)
        if error is not None:
            raise error from None
        raise
    return means

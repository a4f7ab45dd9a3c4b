"""The setup and the end the mdr and t5 fine-tuning runs share: the output written into a
temporary sibling and moved into place when done, the seeded RNGs, the device, the held-out
questions, and the report with its time, peak memory and model card."""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgp.determinism import seed_everything
from kgp.errors import ConfigurationError
from kgp.training.loop import TrainConfig
from kgp.training.pairs import Pair, PairSet
from kgp.training.report import TrainReport, write_card


def prepare_output(path: Path, overwrite: bool) -> Path:
    """A temporary sibling to write into; ``finish_output`` moves it into place."""
    if path.exists() and not overwrite:
        raise ConfigurationError(f"{path} exists; choose another --output or pass --overwrite")
    temp = path.with_name(path.name + ".partial")
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    return temp


def finish_output(temp: Path, path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    temp.rename(path)


def peak_memory_mb(device: str) -> float:
    import resource

    import torch

    if device.startswith("cuda"):
        return round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def split_held_out(pairs: list[Pair], share: float, seed: int) -> tuple[list[Pair], list[Pair]]:
    """Hold out whole questions (never a question's other hops) to measure on."""
    questions = sorted({p.group for p in pairs})
    random.Random(seed).shuffle(questions)
    held = set(questions[: int(len(questions) * share)])
    return [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]


@dataclass
class TrainingSession:
    """One fine-tuning run: where it writes (``temp``, moved to ``output`` by :meth:`finish`),
    its device, its training and held-out pairs, and when it started."""

    output: Path
    temp: Path
    device: str
    train: list[Pair]
    held: list[Pair]
    started: float

    @classmethod
    def start(
        cls,
        pairs: PairSet,
        output: Path,
        *,
        config: TrainConfig,
        device: str,
        overwrite: bool,
        held_out: float,
    ) -> TrainingSession:
        """Prepare the output, seed every RNG and pick the device (load the model after this)."""
        import torch
        from kgp.ingest.encoder import resolve_device

        temp = prepare_output(output, overwrite)
        started = time.perf_counter()
        if config.threads:
            torch.set_num_threads(config.threads)
        seed_everything(config.seed)
        where = resolve_device(device)
        train, held = split_held_out(pairs.pairs, held_out, config.seed)
        return cls(output, temp, where, train, held, started)

    def report(
        self, kind: str, base: str, pairs: PairSet, data: Sequence[str], config: dict[str, Any]
    ) -> TrainReport:
        import torch

        config = {**config, "threads": torch.get_num_threads()}  # the weights depend on it
        return TrainReport(
            kind,
            base,
            str(self.output),
            self.device,
            len(self.train),
            pairs.questions,
            pairs.skipped,
            list(data),
            config,
        )

    def finish(self, report: TrainReport) -> TrainReport:
        """Once the model is saved in ``temp``: time and peak memory, the model card, and the
        output moved into place."""
        report.seconds = round(time.perf_counter() - self.started, 1)
        report.peak_memory_mb = peak_memory_mb(self.device)
        write_card(self.temp, report)
        finish_output(self.temp, self.output)
        return report

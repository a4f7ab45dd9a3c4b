"""Models that write the next evidence a question needs given the evidence so far (the KGP
paper's instruction, Listing 1): a seq2seq model (T5) loaded from a path, or an
OpenAI-compatible chat model. The ``t5`` and ``llm`` scorers compare what they write with each
candidate passage."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kgp.agents.llm import ChatClient
from kgp.errors import ModelMissingError
from kgp.ingest.encoder import resolve_device
from kgp.settings import Device

INSTRUCTION = "What evidence do we need to answer the question given the current evidence?"


def evidence_input(question: str, evidence: Sequence[str]) -> str:
    """The model input of Listing 1: the question followed by the evidence so far."""
    return " ".join([question, *evidence])


def t5_prompt(question: str, evidence: Sequence[str]) -> str:
    """T5's input: Listing 1's input with the instruction as prefix (the paper's T5 setup)."""
    return f"{INSTRUCTION} Input: {evidence_input(question, evidence)}"


class T5Generator:
    """A seq2seq model from a local directory (``transformers`` format); batched greedy
    decoding on the configured device."""

    def __init__(
        self, path: str | Path, *, device: Device | str = Device.AUTO, max_new_tokens: int = 64
    ) -> None:
        self.path = Path(path).expanduser()
        if not (self.path / "config.json").is_file():
            raise ModelMissingError(
                f"t5 model: no model at {self.path} (no config.json); set KGP_T5_MODEL to a "
                "seq2seq model directory, e.g. one written by kgp train"
            )
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        self.device = resolve_device(device)
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            self.model: Any = AutoModelForSeq2SeqLM.from_pretrained(
                self.path, local_files_only=True
            )
        except (OSError, ValueError) as exc:
            message = " ".join(str(exc).split())[:200]
            raise ModelMissingError(
                f"t5 model at {self.path} cannot be loaded: {message}"
            ) from None
        self.model.float().to(self.device).eval()  # float32 whatever it was saved in
        self.max_new_tokens = max_new_tokens
        self._lock = threading.Lock()

    def next_evidence(self, question: str, evidence: Sequence[Sequence[str]]) -> list[str]:
        return self([t5_prompt(question, e) for e in evidence])

    def __call__(self, prompts: Sequence[str]) -> list[str]:
        """Generations for prompts; one call at a time (the model is shared by every
        retriever, and a fast tokenizer is not safe to call from two threads at once)."""
        import torch

        if not prompts:
            return []
        with self._lock:
            return self._generate(torch, prompts)

    def _generate(self, torch: Any, prompts: Sequence[str]) -> list[str]:
        batch = self.tokenizer(
            list(prompts), return_tensors="pt", padding=True, truncation=True, max_length=512
        ).to(self.device)
        with torch.inference_mode():
            out = self.model.generate(
                **batch, max_new_tokens=self.max_new_tokens, do_sample=False, num_beams=1
            )
        return [str(t).strip() for t in self.tokenizer.batch_decode(out, skip_special_tokens=True)]


class LlmGenerator:
    """The next evidence from a chat model: one request per path, sent concurrently, so a hop
    waits for its slowest request, not for their sum."""

    def __init__(self, client: ChatClient, *, workers: int = 8, max_tokens: int = 128) -> None:
        self.client = client
        self.workers = workers
        self.max_tokens = max_tokens

    def prompt(self, question: str, evidence: Sequence[str]) -> list[dict[str, str]]:
        return [
            {
                "role": "user",
                "content": (
                    f"Instruction: {INSTRUCTION}\n"
                    f"Input: {evidence_input(question, evidence)}\n"
                    "Output:"
                ),
            }
        ]

    def next_evidence(self, question: str, evidence: Sequence[Sequence[str]]) -> list[str]:
        if not evidence:
            return []
        with ThreadPoolExecutor(max_workers=min(self.workers, len(evidence))) as pool:
            return list(
                pool.map(
                    lambda e: self.client.complete(
                        self.prompt(question, e), max_tokens=self.max_tokens
                    ),
                    evidence,
                )
            )

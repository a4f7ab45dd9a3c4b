"""The sentence encoder: the bundled model runs without sentence-transformers, vector for
vector what sentence-transformers gives each text alone (texts under 12 tokens, which always go
in a batch of a fixed size, within a rounding error), and a text gets the same vector bit for
bit whatever it is batched with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from kgp.ingest.embedding import SHORT_ROWS, Encoder, TransformerPipeline, batch_rows
from kgp.ingest.encoder import resolve_encoder
from kgp.model import SHIPPED_MODEL

TEXTS = [
    "Cedar Hollow recorded the most rain of any station.",
    "  leading and trailing spaces  ",
    "ünïcödé é and ñ",
    "a",
    "Which station recorded the most rain?",
    "word " * 600,  # past the 256-token limit: truncated as sentence-transformers does
    "The Nile flows north through Egypt into the Mediterranean Sea.",
]


def test_the_bundled_model_runs_on_transformers_alone(encoder: Encoder) -> None:
    from sentence_transformers import SentenceTransformer

    assert isinstance(encoder._model, TransformerPipeline)
    reference = SentenceTransformer(
        str(resolve_encoder("all-MiniLM-L6-v2")), device="cpu", local_files_only=True
    )
    ours = encoder.encode(TEXTS)
    alone = [reference.encode([text], normalize_embeddings=True) for text in TEXTS]
    theirs = np.concatenate(alone)
    lengths = [len(ids) for ids in reference.tokenizer(TEXTS, truncation=True)["input_ids"]]
    long = [n for n, length in enumerate(lengths) if length >= 12]
    assert len(long) >= 3 and (ours[long] == theirs[long]).all()
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert encoder.dimension == 384


def test_a_vector_does_not_depend_on_its_batch(encoder: Encoder) -> None:
    together = encoder.encode(TEXTS * 3)
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    assert (together[: len(TEXTS)] == alone).all()
    assert (together[len(TEXTS) : 2 * len(TEXTS)] == alone).all()


def test_batches_hold_one_token_length_and_a_gpu_fills_every_batch() -> None:
    lengths = [5, 20, 30, 20, 20]  # a short text, then three of 20 tokens and one of 30
    assert batch_rows(lengths, 2) == [
        ([0], [0] * SHORT_ROWS),
        ([1, 3], [1, 3]),
        ([4], [4]),
        ([2], [2]),
    ]
    assert batch_rows(lengths, 2, least=2) == [  # a GPU: every batch its full size
        ([0], [0] * SHORT_ROWS),
        ([1, 3], [1, 3]),
        ([4], [4, 4]),
        ([2], [2, 2]),
    ]


def test_a_model_sentence_transformers_runs_gives_a_text_one_vector_in_any_batch(
    tmp_path: Path,
) -> None:
    import torch
    from sentence_transformers import SentenceTransformer, models

    bundled = SentenceTransformer(
        str(resolve_encoder("all-MiniLM-L6-v2")), device="cpu", local_files_only=True
    )
    torch.manual_seed(0)
    dense = SentenceTransformer(modules=[bundled[0], bundled[1], models.Dense(384, 64)])
    dense.half().save(str(tmp_path / "dense"))  # saved in float16, run in float32
    encoder = Encoder(model=str(tmp_path / "dense"), device="cpu").load()
    assert not isinstance(encoder._model, TransformerPipeline), "a Dense layer: the fallback"
    assert next(encoder._model.parameters()).dtype == torch.float32
    weeks = [f"Station {n} recorded {n * 7 % 31} mm of rain in week {n}." for n in range(90)]
    texts = TEXTS + weeks  # batches of one to dozens of texts of one length
    together = encoder.encode(texts)
    alone = np.stack([encoder.encode([text])[0] for text in texts])
    assert together.shape == (len(texts), 64) and together.dtype == np.float32
    assert (together == alone).all()


def test_on_a_gpu_a_vector_does_not_depend_on_its_batch() -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the batches a GPU fills are tested above")
    encoder = Encoder(model=SHIPPED_MODEL, device="cuda", batch_size=64).load()
    weeks = [f"Station {n} recorded {n * 7 % 31} mm of rain in week {n}." for n in range(90)]
    texts = TEXTS + weeks
    together = encoder.encode(texts)
    alone = np.stack([encoder.encode([text])[0] for text in texts])
    mixed = encoder.encode(texts[::-1] + TEXTS)[: len(texts)][::-1]
    assert (together == alone).all() and (together == mixed).all()


def test_kgp_sets_mkls_strict_mode_before_torch_computes_and_says_when_too_late() -> None:
    from kgp.determinism import strict_blas

    if strict_blas() is None:
        pytest.skip("this torch has no MKL to ask")
    assert strict_blas(), "the tests import kgp before torch computes"
    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
    check = "from kgp.determinism import strict_blas; print(strict_blas())"
    multiply = "import torch; torch.ones(2, 2) @ torch.ones(2, 2)"
    first = f"import kgp; {multiply}; {check}"
    late = f"{multiply}; import kgp; {check}"
    ran = [
        subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, env=env)
        for c in (first, late)
    ]
    assert [r.stdout.strip() for r in ran] == ["True", "False"]
    assert "import kgp before torch" in ran[1].stderr and not ran[0].stderr.strip()

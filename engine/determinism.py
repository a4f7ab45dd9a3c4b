"""One seed for every random number generator kgp's evaluation and training use, and a check
that torch's matrix products are reproducible row by row."""

from __future__ import annotations

import ctypes
import logging
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)
_STRICT = 0x10000  # MKL_CBWR_STRICT
_warned: list[bool] = []


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators (and silence transformers' progress bars,
    which would interleave with kgp's)."""
    import numpy as np
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@contextmanager
def repeatable_kernels(model: Any) -> Iterator[None]:
    """While a model on a GPU is trained: torch's repeatable kernels (ops that have none only
    warn), then what was set before, both switches. Without them, training the same model
    twice on an H200 gave other weights. cuBLAS's part needs ``CUBLAS_WORKSPACE_CONFIG``
    before its first use in the process: ``import kgp`` sets it. Nothing on a CPU."""
    import torch

    on_gpu = any(p.device.type == "cuda" for p in model.parameters())
    before = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    if on_gpu and not before:
        torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        if on_gpu and not before:
            torch.use_deterministic_algorithms(before, warn_only=warn_only)


def strict_blas() -> bool | None:
    """Whether torch's MKL runs in strict reproducibility mode (``MKL_CBWR=AUTO,STRICT``, set
    when kgp is imported): without it, a text's vector may differ in its last bits with the
    number of texts embedded beside it. None where torch has no MKL to ask. Warns once when
    not: MKL was used before kgp was imported, or ``MKL_CBWR`` says otherwise."""
    import torch

    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    try:
        mode = int(ctypes.CDLL(str(library)).mkl_serv_cbwr_get(ctypes.c_int(-1)))
    except (OSError, AttributeError):
        return None
    strict = bool(mode & _STRICT)
    if not strict and not _warned:
        _warned.append(True)
        logger.warning(
            "torch's MKL is not in strict mode (MKL_CBWR=%s): a text's vector may depend on "
            "its batch in the last bits; import kgp before torch, or set MKL_CBWR=AUTO,STRICT",
            os.environ.get("MKL_CBWR", ""),
        )
    return strict

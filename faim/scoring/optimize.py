"""Inference-only speed-ups for scoring, each optional and each within a stated tolerance of fp32.

- ``channels_last``: image encoders run in NHWC memory layout (faster convolutions on CPUs); exact.
- ``bf16``: image encoders run under bf16 autocast (CPUs with AVX512-BF16/AMX, or GPUs).
- ``int8_text``: text encoders' Linear layers are dynamically quantised to int8.
- ``draft_jpeg``: JPEGs decode at a reduced scale no smaller than the encoder's resize target.
- ``compile``: ``torch.compile`` the encoder backbones (pays a compile on first batches).

Scores of the optimised path stay within ``SCORE_TOLERANCE`` (absolute, on probabilities) of the exact
fp32 path; the tests check it.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from faim.encoders.base import Encoder, Preprocessor
from faim.model import WholePostModel

SCORE_TOLERANCE = 0.05


@dataclass(frozen=True)
class ScoringOptions:
    """Which speed-ups to apply (all but ``compile`` on by default); ``ScoringOptions.exact()`` is plain fp32."""

    channels_last: bool = True
    bf16: bool = True
    int8_text: bool = True
    draft_jpeg: bool = True
    compile: bool = False

    @classmethod
    def exact(cls) -> ScoringOptions:
        """No approximation: the same computation as ``Detector.score``."""
        return cls(channels_last=False, bf16=False, int8_text=False, draft_jpeg=False, compile=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AutocastEncoder(Encoder):
    """Runs a wrapped encoder under bf16 autocast (and channels-last input); outputs float32."""

    def __init__(self, inner: Encoder, bf16: bool, channels_last: bool) -> None:
        super().__init__()
        self.inner = inner
        self.modality = inner.modality  # type: ignore[misc]
        self.output_dim = inner.output_dim
        self.frozen = inner.frozen
        self.bf16 = bf16
        self.channels_last = channels_last
        if channels_last:
            inner.to(memory_format=torch.channels_last)

    def preprocessor(self) -> Preprocessor:
        return self.inner.preprocessor()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if self.channels_last and images.ndim == 4:
            images = images.contiguous(memory_format=torch.channels_last)
        device = images.device.type
        with torch.autocast(device, dtype=torch.bfloat16, enabled=self.bf16):
            return self.inner(images).float()


def quantize_linear_int8(module: nn.Module) -> nn.Module:
    """Dynamic int8 quantisation of every ``nn.Linear`` (weights int8, activations quantised per batch).

    ``torch.ao.quantization.quantize_dynamic`` still works in torch 2.14 but warns that it is deprecated
    in favour of torchao; those warnings are silenced here, once, rather than printed by every worker.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*(torch\.ao\.quantization|quantize_per_tensor).*deprecated")
        return torch.ao.quantization.quantize_dynamic(module, {nn.Linear}, dtype=torch.qint8)


def optimise_for_inference(model: WholePostModel, options: ScoringOptions) -> WholePostModel:
    """Apply ``options`` to ``model`` in place (for scoring only: the result is not meant to be saved)."""
    model.eval()
    for name, encoder in list(model.encoders.items()):
        if encoder.modality == "image" and (options.bf16 or options.channels_last):
            model.encoders[name] = AutocastEncoder(encoder, options.bf16, options.channels_last)
        if encoder.modality == "text" and options.int8_text and hasattr(encoder, "backbone"):
            encoder.backbone = quantize_linear_int8(encoder.backbone)
        if options.compile and hasattr(encoder, "backbone"):
            encoder.backbone = torch.compile(encoder.backbone, dynamic=True)
    return model

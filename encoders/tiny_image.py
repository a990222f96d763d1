"""A tiny random two-convolution image encoder on 32x32 inputs, built offline in milliseconds, for tests."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from faim.encoder import Encoder, Preprocessor
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.registry import register_encoder

IMAGE_SIZE = 32


@register_encoder("tiny_image")
class TinyImageEncoder(Encoder):
    """Two strided 3x3 convolutions and global average pooling; deterministic given the global torch seed.

    Args:
        dim: Embedding size.
        freeze: Keep the weights fixed.
    """

    modality = "image"

    def __init__(self, dim: int = 16, freeze: bool = False) -> None:
        super().__init__()
        self.dim = dim
        self.output_dim = dim
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(8, dim, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.image_preprocessor = ImagePreprocessor((IMAGE_SIZE, IMAGE_SIZE), mean=(0.5,) * 3, std=(0.5,) * 3)
        self.apply_freeze(freeze)

    def preprocessor(self) -> Preprocessor:
        return self.image_preprocessor

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Embed a batch ``[N, 3, 32, 32]`` to ``[N, dim]``; N may be 0."""
        return self.backbone(images) if images.shape[0] else images.new_zeros(0, self.dim)

    def identity(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "dim": self.dim, "preprocess": self.image_preprocessor.to_dict()}

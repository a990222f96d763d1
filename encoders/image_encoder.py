"""What the image encoders over a backbone share: their preprocessing, an empty batch, and their identity."""

from __future__ import annotations

from typing import Any

import torch

from faim.encoder import Encoder, Preprocessor
from faim.encoders.image_preprocess import ImagePreprocessor


class BackboneImageEncoder(Encoder):
    """An image encoder whose ``backbone`` embeds pictures its ``image_preprocessor`` made (one tensor in, one out:
    scoring traces it into a frozen graph); subclasses set both, and ``output_dim``, and may say more of themselves
    (``identity``)."""

    modality = "image"
    backbone: torch.nn.Module
    image_preprocessor: ImagePreprocessor

    def preprocessor(self) -> Preprocessor:
        return self.image_preprocessor

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Embed a batch ``[N, 3, H, W]`` (from ``preprocessor()``) to ``[N, output_dim]``; N may be 0."""
        if images.shape[0] == 0:
            return images.new_zeros(0, self.output_dim)
        return self.backbone(images)

    def identity(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "preprocess": self.image_preprocessor.to_dict()}

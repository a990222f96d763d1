"""Binary classification head (e.g. hateful / not hateful)."""

from __future__ import annotations

import torch
from torch import Tensor

from faim.registry import register_head

from .base import Head, masked_bce, optional_buffer


@register_head("binary")
class BinaryHead(Head):
    """One logit per post, trained with binary cross-entropy; the target is float 0/1, NaN when unlabelled.

    Args:
        input_dim: Size of the post embedding.
        hidden_dim: 0 for a single Linear layer, else the width of a one-hidden-layer MLP.
        dropout: Dropout probability.
        pos_weight: Weight of positive examples in the loss (e.g. ``negatives / positives``); None for 1.
    """

    task_type = "binary"

    def __init__(
        self, input_dim: int, hidden_dim: int = 0, dropout: float = 0.0, pos_weight: float | None = None
    ) -> None:
        super().__init__(input_dim, 1, hidden_dim, dropout)
        if pos_weight is not None and pos_weight <= 0:
            raise ValueError(f"pos_weight must be positive, got {pos_weight}")
        self.register_buffer("pos_weight", optional_buffer(pos_weight), persistent=False)

    def forward(self, embedding: Tensor) -> Tensor:
        """Return ``[B]`` logits of the positive class."""
        return super().forward(embedding).squeeze(-1)

    def loss(self, logits: Tensor, target: Tensor) -> Tensor:
        """Mean binary cross-entropy over the posts whose ``[B]`` target is not NaN."""
        return masked_bce(logits, target, self.pos_weight)

    def probabilities(self, logits: Tensor) -> Tensor:
        """Return ``[B]`` probabilities of the positive class."""
        return torch.sigmoid(logits)

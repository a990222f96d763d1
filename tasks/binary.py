"""Binary classification head (e.g. hateful / not hateful)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from faim.registry import register_head

from .base import Head, check_loss_weights, masked_bce, optional_buffer


@register_head("binary")
class BinaryHead(Head):
    """One logit per post, trained with binary cross-entropy; the target is float 0/1, NaN when unlabelled.

    Args:
        input_dim: Size of the post embedding.
        hidden_dim: 0 for a single Linear layer, else the width of a one-hidden-layer MLP.
        dropout: Dropout probability.
        pos_weight: Weight of positive examples in the loss (e.g. ``negatives / positives``), positive and finite; None
            for 1.
        correction: Whether the head holds a correction fitted on a platform's own labels
            (``faim.calibration.head_correction``): the logit becomes ``scale * logit + Linear(embedding)``. Built
            as the identity (scale 1, weights 0); ``add_correction`` sets it, and a saved corrected model's recipe
            says ``correction: true`` so loading builds it again.
    """

    task_type = "binary"

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int = 0,
        dropout: float = 0.0,
        pos_weight: float | None = None,
        correction: bool = False,
    ) -> None:
        super().__init__(input_dim, 1, hidden_dim, dropout)
        if pos_weight is not None:
            check_loss_weights("pos_weight", pos_weight)
        self.register_buffer("pos_weight", optional_buffer(pos_weight), persistent=False)
        self.correction: nn.Linear | None = None
        if correction:
            self.build_correction()

    def forward(self, embedding: Tensor) -> Tensor:
        """Return ``[B]`` logits of the positive class."""
        logits = super().forward(embedding).squeeze(-1)
        if self.correction is None:
            return logits
        return self.correction_scale * logits + self.correction(embedding).squeeze(-1)

    def build_correction(self) -> None:
        """Add the identity correction (scale 1, weights 0), on the device and in the dtype of the head's weights."""
        like = self.net[-1].weight
        self.correction = nn.Linear(self.input_dim, 1, device=like.device, dtype=like.dtype)
        self.correction_scale = nn.Parameter(torch.ones((), device=like.device, dtype=like.dtype))
        nn.init.zeros_(self.correction.weight)
        nn.init.zeros_(self.correction.bias)

    @torch.no_grad()
    def add_correction(self, scale: float, weight: Sequence[float], bias: float) -> None:
        """Make the head's logits ``scale * logits + weight · embedding + bias``, where ``logits`` are what it gives
        now (a correction already held is composed with the new one), and record ``correction=True`` among the
        arguments it is written out with (``faim.components.component_spec``).

        Raises:
            ValueError: When ``weight`` does not have the embedding's size.
        """
        weight = torch.as_tensor(np.asarray(weight, dtype=np.float32))
        if weight.shape != (self.input_dim,):
            raise ValueError(f"a correction of a head reading {self.input_dim} dimensions, got weights {weight.shape}")
        if self.correction is None:
            self.build_correction()
            self._faim_arguments = {**self._faim_arguments, "correction": True}
        self.correction.weight.mul_(scale).add_(weight.to(self.correction.weight)[None])
        self.correction.bias.mul_(scale).add_(bias)
        self.correction_scale.mul_(scale)

    def loss(self, logits: Tensor, target: Tensor) -> Tensor:
        """Mean binary cross-entropy over the posts whose ``[B]`` target is not NaN."""
        return masked_bce(logits, target, self.pos_weight)

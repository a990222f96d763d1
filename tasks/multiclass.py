"""Multiclass classification head (exactly one class per post, e.g. hate / offensive / neither)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from faim.registry import register_head

from .base import Head, check_loss_weights, labelled_mean, optional_buffer

IGNORE_INDEX = -100


@register_head("multiclass")
class MulticlassHead(Head):
    """``num_classes`` logits per post, trained with cross-entropy; the target is a class index, -100 when unlabelled.

    Args:
        input_dim: Size of the post embedding.
        num_classes: Number of classes (at least 2).
        hidden_dim: 0 for a single Linear layer, else the width of a one-hidden-layer MLP.
        dropout: Dropout probability.
        class_weights: Loss weight of each class, e.g. inverse frequencies: finite, none negative, one positive (0
            leaves a class out of the loss); the loss is the weighted mean, as in ``torch.nn.functional.cross_entropy``.
            None weighs all classes 1.
        label_smoothing: Share of probability mass spread uniformly over the classes in the targets.
    """

    task_type = "multiclass"

    def __init__(
        self,
        input_dim: int,
        num_classes: int,
        hidden_dim: int = 0,
        dropout: float = 0.0,
        class_weights: list[float] | None = None,
        label_smoothing: float = 0.0,
    ) -> None:
        if num_classes < 2:
            raise ValueError(f"num_classes must be at least 2, got {num_classes}")
        if class_weights is not None:
            if len(class_weights) != num_classes:
                raise ValueError(f"class_weights has {len(class_weights)} values but num_classes is {num_classes}")
            check_loss_weights("class_weights", class_weights, zero_allowed=True)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        super().__init__(input_dim, num_classes, hidden_dim, dropout)
        self.num_classes = num_classes
        self.label_smoothing = label_smoothing
        self.register_buffer("class_weights", optional_buffer(class_weights), persistent=False)

    def loss(self, logits: Tensor, target: Tensor) -> Tensor:
        """Weighted mean cross-entropy over the posts whose ``[B]`` long target is not -100."""
        losses = F.cross_entropy(
            logits,
            target,
            weight=self.class_weights,
            ignore_index=IGNORE_INDEX,
            reduction="none",
            label_smoothing=self.label_smoothing,
        )
        labelled = target != IGNORE_INDEX
        weights = None if self.class_weights is None else self.class_weights[target.clamp_min(0)]
        return labelled_mean(losses, labelled, weights)

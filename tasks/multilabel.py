"""Multilabel classification head (any subset of labels per post, e.g. policy categories)."""

from __future__ import annotations

from torch import Tensor

from faim.registry import register_head

from .base import Head, check_loss_weights, masked_bce, optional_buffer


@register_head("multilabel")
class MultilabelHead(Head):
    """One independent logit per label, trained with binary cross-entropy; the target is float
    ``[B, num_labels]`` 0/1 with NaN for each unlabelled entry.

    Args:
        input_dim: Size of the post embedding.
        num_labels: Number of labels.
        hidden_dim: 0 for a single Linear layer, else the width of a one-hidden-layer MLP.
        dropout: Dropout probability.
        pos_weight: Weight of positive examples for each label, each positive and finite; None weighs them 1.
    """

    task_type = "multilabel"

    def __init__(
        self,
        input_dim: int,
        num_labels: int,
        hidden_dim: int = 0,
        dropout: float = 0.0,
        pos_weight: list[float] | None = None,
    ) -> None:
        if num_labels < 1:
            raise ValueError(f"num_labels must be at least 1, got {num_labels}")
        if pos_weight is not None:
            if len(pos_weight) != num_labels:
                raise ValueError(f"pos_weight has {len(pos_weight)} values but num_labels is {num_labels}")
            check_loss_weights("pos_weight", pos_weight)
        super().__init__(input_dim, num_labels, hidden_dim, dropout)
        self.num_labels = num_labels
        self.register_buffer("pos_weight", optional_buffer(pos_weight), persistent=False)

    def loss(self, logits: Tensor, target: Tensor) -> Tensor:
        """Mean binary cross-entropy over the entries of the ``[B, num_labels]`` target that are not NaN."""
        return masked_bce(logits, target, self.pos_weight)

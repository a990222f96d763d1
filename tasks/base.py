"""What every task head provides: logits from the post embedding, and a loss that skips unlabelled targets. A task's
probabilities are not the head's to give: its type turns the logits into them (a binary or multilabel task's sigmoid, a
multiclass one's softmax: ``faim.calibration.fit.Calibration.probabilities``), in the validation scores logged as
training runs (uncalibrated) and, calibrated, in scoring, evaluation and exports alike.

A batch mixes posts labelled for different tasks, so every head's ``loss`` ignores missing labels
(NaN for float targets, -100 for class indices) and returns a zero still connected to the logits when
nothing in the batch is labelled, keeping the backward pass and DDP gradient sync uniform.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import torch
from torch import Tensor, nn
from torch.nn import functional as F


class Head(nn.Module, ABC):
    """Base class of faim task heads: a small MLP from the ``[B, input_dim]`` post embedding to logits.

    Args:
        input_dim: Size of the post embedding.
        num_outputs: Number of logits per post.
        hidden_dim: 0 for a single Linear layer (dropout then applies to the embedding); otherwise the
            width of a Linear -> GELU -> Dropout -> Linear MLP.
        dropout: Dropout probability.
    """

    task_type: ClassVar[str]

    def __init__(self, input_dim: int, num_outputs: int, hidden_dim: int = 0, dropout: float = 0.0) -> None:
        super().__init__()
        if input_dim <= 0 or hidden_dim < 0:
            raise ValueError(f"need input_dim > 0 and hidden_dim >= 0, got {input_dim} and {hidden_dim}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.input_dim = input_dim
        if hidden_dim:
            self.net = nn.Sequential(
                nn.Linear(input_dim, hidden_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden_dim, num_outputs)
            )
        else:
            self.net = nn.Sequential(nn.Dropout(dropout), nn.Linear(input_dim, num_outputs))

    def forward(self, embedding: Tensor) -> Tensor:
        """Return the logits for a ``[B, input_dim]`` batch of post embeddings."""
        return self.net(embedding)

    @abstractmethod
    def loss(self, logits: Tensor, target: Tensor) -> Tensor:
        """Return the scalar loss over the labelled targets of the batch."""


def labelled_mean(losses: Tensor, labelled: Tensor, weights: Tensor | None = None) -> Tensor:
    """Average the losses of the labelled entries; a zero connected to ``losses`` when none is labelled.

    Args:
        losses: Per-entry losses, already weighted where a weighting applies.
        labelled: Bool mask of the same shape, False for unlabelled entries.
        weights: Per-entry weights to divide by instead of the labelled count (the weighted-mean
            convention of ``torch.nn.functional.cross_entropy``); None for a plain mean.
    """
    total = torch.where(labelled, losses, losses.new_zeros(())).sum()
    normaliser = labelled.to(losses.dtype) if weights is None else torch.where(labelled, weights, 0.0)
    return total / normaliser.sum().clamp_min(torch.finfo(losses.dtype).tiny)


def masked_bce(logits: Tensor, target: Tensor, pos_weight: Tensor | None) -> Tensor:
    """Mean binary cross-entropy over the entries of ``target`` that are not NaN."""
    labelled = ~torch.isnan(target)
    losses = F.binary_cross_entropy_with_logits(
        logits, torch.where(labelled, target, 0.0), pos_weight=pos_weight, reduction="none"
    )
    return labelled_mean(losses, labelled)


def check_loss_weights(name: str, values: float | Sequence[float], zero_allowed: bool = False) -> None:
    """Refuse loss weights (a head's ``name`` argument: one value, or a sequence of them such as a list, a tuple or a
    numpy array, as scikit-learn's ``compute_class_weight`` gives) one of which is not finite or is negative or,
    unless ``zero_allowed``, zero; with ``zero_allowed``, ones that are all zero: a negative weight makes a loss that
    training drives to -inf, a NaN or infinite one a loss that is not a number.

    Raises:
        ValueError: Naming the argument and the values given.
    """
    listed = torch.as_tensor(values, dtype=torch.float64).flatten().tolist()
    if all(math.isfinite(value) and (value > 0 or zero_allowed and value == 0) for value in listed) and any(
        value > 0 for value in listed
    ):
        return
    need = "non-negative and finite, and one of them positive" if zero_allowed else "positive and finite"
    raise ValueError(f"{name} must be {need}, got {values}")


def optional_buffer(values: float | list[float] | None) -> Tensor | None:
    """Turn an optional weighting constructor argument into a tensor (kept as a non-persistent buffer)."""
    return None if values is None else torch.tensor(values, dtype=torch.float32)

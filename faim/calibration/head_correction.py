"""Correcting a binary head on a platform's own labelled posts (``faim calibrate --head``).

A calibration moves probabilities and the threshold, never the order of posts. Where a platform's labels call
positive what a model ranks low (another dataset's definition of hate, say), only a change in what the head reads
can help. The correction is a logistic regression on the whole-post embedding ``e`` and the head's own logit ``z``:

    z' = a * z + w · e + b

fitted on the labelled posts (L2-penalised at scikit-learn's default strength, every coefficient shrunk towards 0):
the shared post embedding already holds what a few hundred labels need, and the head's own logit brings what the
model learnt from its training data, weighed by how well it agrees with these labels (``a`` near 0, or below it,
where it does not). ``a``, ``w`` and ``b`` become the head's correction weights (``BinaryHead.add_correction``),
so the corrected model is scored, exported and explained as any other.

A regression scores the posts it was fitted on too well, so the calibration fitted after it (temperature, shift,
threshold) is fitted on cross-fitted logits: each post's ``z'`` from the regression fitted on the other folds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from faim.calibration.crowd import held_out_logits, logistic_regression

FOLDS = 5
"""Folds of the cross-fitted logits the calibration after a correction is fitted on."""


@dataclass(frozen=True)
class HeadCorrection:
    """``z' = scale * z + weight · e + bias`` for a binary head's logit ``z`` and whole-post embedding ``e``.

    Attributes:
        scale: ``a``, the weight of the head's own logit.
        weight: ``w``, ``[D]`` over the embedding's dimensions.
        bias: ``b``.
    """

    scale: float
    weight: np.ndarray
    bias: float

    def logits(self, embeddings: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """Corrected logits ``[N]`` of posts with whole-post ``embeddings [N, D]`` and head ``logits [N]``."""
        return self.scale * logits + embeddings @ self.weight + self.bias


def fit_head_correction(
    embeddings: np.ndarray, logits: np.ndarray, y: np.ndarray, seed: int = 0
) -> tuple[HeadCorrection, np.ndarray]:
    """The correction fitted on labelled posts, and each post's corrected logit from the regression fitted without
    its fold (``FOLDS`` random folds; a fold whose complement holds one class gets that class's smoothed share, as
    ``faim.calibration.crowd.held_out_logits`` gives it).

    Args:
        embeddings: Whole-post embeddings ``[N, D]``.
        logits: The head's logits ``[N]``.
        y: 0/1 labels ``[N]``.
        seed: Seed of the folds.

    Raises:
        ValueError: Where the labels hold one class, or fewer posts than ``FOLDS``.
    """
    y = np.asarray(y).astype(np.int64)
    if len(np.unique(y)) < 2:
        raise ValueError("a head correction needs labelled posts of both classes")
    if len(y) < FOLDS:
        raise ValueError(f"a head correction needs {FOLDS} labelled posts at least, got {len(y)}")
    features = np.column_stack([np.asarray(embeddings, dtype=np.float64), np.asarray(logits, dtype=np.float64)])
    folds = np.random.default_rng(seed).permutation(len(y)) % FOLDS
    held_out = held_out_logits(features, y, folds)
    model = logistic_regression().fit(features, y)
    coefficients = model.coef_.ravel()
    return HeadCorrection(float(coefficients[-1]), coefficients[:-1].copy(), float(model.intercept_[0])), held_out

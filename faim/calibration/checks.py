"""Input checks shared by the metric functions: they fail early, naming the argument at fault."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from faim.wording import plural


def check_probabilities(prob: np.ndarray, name: str = "prob") -> np.ndarray:
    """Return ``prob`` as a float array after checking every value is a finite probability.

    Raises:
        ValueError: if a value is NaN or outside [0, 1].
    """
    p = np.asarray(prob, dtype=np.float64)
    bad = ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        wrong = plural(int(bad.sum()), "value")
        raise ValueError(f"{name} must hold probabilities in [0, 1]; NaN or out of range: {wrong}")
    return p


def check_binary_labels(y_true: np.ndarray, name: str = "y_true") -> np.ndarray:
    """Return ``y_true`` as an int64 array after checking it holds only 0 and 1 (bools are accepted).

    Raises:
        ValueError: on any other value, NaN included.
    """
    y = np.asarray(y_true)
    if not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name} must hold only 0 and 1, got values {np.unique(y)[:10].tolist()}")
    return y.astype(np.int64)


def as_binary_inputs(y_true: np.ndarray, prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Check a binary evaluation sample and return ``(labels int64 [N], probabilities float64 [N])``.

    Raises:
        ValueError: on an empty sample, mismatched or non-1-D shapes, labels other than 0/1 or
            probabilities outside [0, 1].
    """
    y, p = np.asarray(y_true), np.asarray(prob)
    if y.ndim != 1 or y.shape != p.shape:
        raise ValueError(f"y_true and prob must be 1-D arrays of one length, got shapes {y.shape} and {p.shape}")
    if y.size == 0:
        raise ValueError("cannot evaluate an empty sample")
    return check_binary_labels(y), check_probabilities(p)


def as_multiclass_inputs(y_true: np.ndarray, prob: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Check a multiclass sample and return ``(class indices int64 [N], probabilities float64 [N, C])``.

    Raises:
        ValueError: on an empty sample, shapes other than ``[N]`` and ``[N, len(labels)]``, class
            indices outside ``[0, C)`` or probabilities outside [0, 1].
    """
    y, p = np.asarray(y_true), np.asarray(prob)
    n_classes = len(labels)
    if y.ndim != 1 or p.shape != (y.shape[0], n_classes):
        raise ValueError(
            f"expected y_true [N] and prob [N, {n_classes}] (one column per label), got shapes {y.shape} and {p.shape}"
        )
    if y.size == 0:
        raise ValueError("cannot evaluate an empty sample")
    if not np.isin(y, np.arange(n_classes)).all():
        raise ValueError(f"y_true must hold class indices in [0, {n_classes}), got values {np.unique(y)[:10].tolist()}")
    return y.astype(np.int64), check_probabilities(p)


def as_multilabel_inputs(y_true: np.ndarray, prob: np.ndarray, labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Check a multilabel sample and return ``(targets float64 [N, L] with NaN, probabilities float64 [N, L])``.

    Raises:
        ValueError: on an empty sample, shapes other than ``[N, len(labels)]``, targets other than
            0, 1 and NaN (unlabelled) or probabilities outside [0, 1].
    """
    y, p = np.asarray(y_true, dtype=np.float64), np.asarray(prob)
    if y.ndim != 2 or y.shape[1] != len(labels) or y.shape != p.shape:
        raise ValueError(
            f"expected y_true and prob of shape [N, {len(labels)}] (one column per label), got {y.shape} and {p.shape}"
        )
    if y.shape[0] == 0:
        raise ValueError("cannot evaluate an empty sample")
    if not (np.isnan(y) | np.isin(y, (0.0, 1.0))).all():
        raise ValueError("y_true must hold only 0, 1 and NaN (unlabelled)")
    return y, check_probabilities(p)

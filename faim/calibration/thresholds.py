"""Decision thresholds: the sweep over every distinct cut, fixed-recall / fixed-precision operating
points and threshold choice on validation data.

A decision is positive when ``prob >= threshold``. With distinct probabilities ``u_1 < ... < u_k``
there are only ``k`` non-empty positive sets ("``prob >= u_j``"), and the sweep evaluates each once.
Each cut is reported as the midpoint ``(u_{j-1} + u_j) / 2`` (the lowest, "everything positive", as
``u_1``), so a chosen threshold sits between validation scores rather than on one. Cutting above
``u_k`` (nothing positive) is not a candidate: it has no precision and zero recall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from faim.calibration.checks import as_binary_inputs

OBJECTIVES = ("f1", "macro_f1", "precision@recall", "recall@precision")
_TOL = 1e-12


class PrecisionUnreachable(ValueError):
    """No cut of a sample reaches the precision a ``recall@precision`` threshold asks for.

    Attributes:
        best: The highest precision a cut of the sample reaches (asking for it chooses the most precise cut).
    """

    def __init__(self, message: str, best: float) -> None:
        super().__init__(message)
        self.best = best


@dataclass(frozen=True)
class ThresholdSweep:
    """Confusion counts at every distinct cut of one binary sample, in increasing threshold order.

    Attributes:
        thresholds: candidate thresholds (see the module docstring).
        tp: true positives at each threshold; ``fp``, ``fn``, ``tn`` likewise (sums of the posts' weights when
            the sweep is weighted).
    """

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    tn: np.ndarray

    @property
    def positives(self) -> float:
        """Number (or weight) of positive labels in the sample."""
        return float(self.tp[0] + self.fn[0])

    @property
    def precision(self) -> np.ndarray:
        """Precision at each threshold (always defined: each cut predicts at least one positive)."""
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> np.ndarray:
        """Recall at each threshold; NaN everywhere when the sample has no positives."""
        return self.tp / self.positives if self.positives else np.full(len(self.tp), np.nan)

    @property
    def f1(self) -> np.ndarray:
        """Positive-class F1 at each threshold."""
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    @property
    def macro_f1(self) -> np.ndarray:
        """Mean of positive- and negative-class F1; an F1 with an empty denominator counts as 0."""
        denom = 2 * self.tn + self.fn + self.fp
        f1_negative = np.divide(2 * self.tn, denom, out=np.zeros(len(denom)), where=denom > 0)
        return (self.f1 + f1_negative) / 2

    def precision_at_recall(self, min_recall: float) -> float:
        """Best precision over thresholds with recall >= ``min_recall``; NaN without positives."""
        if not self.positives:
            return float("nan")
        return float(np.max(self.precision[self.recall >= min_recall - _TOL], initial=0.0))

    def recall_at_precision(self, min_precision: float) -> float:
        """Best recall over thresholds with precision >= ``min_precision``; 0 if none reaches it, NaN without
        positives."""
        if not self.positives:
            return float("nan")
        return float(np.max(self.recall[self.precision >= min_precision - _TOL], initial=0.0))


def threshold_sweep(y_true: np.ndarray, prob: np.ndarray, weights: np.ndarray | None = None) -> ThresholdSweep:
    """Count TP/FP/FN/TN at every distinct cut of ``prob`` in O(N log N); with ``weights`` (``[N]``, positive),
    each post counts its weight instead of one.

    Raises:
        ValueError: on an empty sample, mismatched shapes, labels other than 0/1, probabilities outside [0, 1]
            or weights that are not positive.
    """
    y, p = as_binary_inputs(y_true, prob)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != y.shape or not (w > 0).all():
        raise ValueError(f"weights must be {len(y)} positive numbers, one per post")
    values, inverse = np.unique(p, return_inverse=True)
    pos = np.bincount(inverse, weights=y * w, minlength=len(values))
    neg = np.bincount(inverse, weights=(1 - y) * w, minlength=len(values))
    tp = np.cumsum(pos[::-1])[::-1]
    fp = np.cumsum(neg[::-1])[::-1]
    mid = (values[:-1] + values[1:]) / 2
    mid = np.where(mid > values[:-1], mid, values[1:])  # adjacent floats: keep the cut's partition exact
    thresholds = np.concatenate((values[:1], mid))
    return ThresholdSweep(thresholds=thresholds, tp=tp, fp=fp, fn=pos.sum() - tp, tn=neg.sum() - fp)


def precision_at_recall(y_true: np.ndarray, prob: np.ndarray, min_recall: float) -> float:
    """Best precision achievable with recall >= ``min_recall``; NaN when there are no positives."""
    return threshold_sweep(y_true, prob).precision_at_recall(min_recall)


def recall_at_precision(y_true: np.ndarray, prob: np.ndarray, min_precision: float) -> float:
    """Best recall achievable with precision >= ``min_precision``; 0 if unreachable, NaN without positives."""
    return threshold_sweep(y_true, prob).recall_at_precision(min_precision)


def choose_threshold(
    y_true: np.ndarray,
    prob: np.ndarray,
    objective: str = "f1",
    target: float | None = None,
    weights: np.ndarray | None = None,
) -> float:
    """Choose a decision threshold on validation data by searching every distinct cut.

    Objectives:
        - ``"f1"``: maximise positive-class F1; ties go to the lowest threshold.
        - ``"macro_f1"``: maximise the mean F1 of both classes; ties go to the lowest threshold.
        - ``"precision@recall"``: maximise precision subject to recall >= ``target``; ties go to the
          lowest threshold (the highest recall).
        - ``"recall@precision"``: maximise recall subject to precision >= ``target``; ties go to the
          highest threshold (the highest precision).

    Args:
        y_true: validation labels, 0/1 ``[N]``.
        prob: validation positive-class probabilities ``[N]``.
        objective: one of :data:`OBJECTIVES`.
        target: the recall or precision constraint in [0, 1]; required by the constrained objectives
            and rejected by the others.
        weights: what each post counts for (``[N]``, positive; ``None``: one each), as ``threshold_sweep``.

    Returns:
        The threshold; predict positive when ``prob >= threshold``.

    Raises:
        ValueError: on an unknown objective, a missing or misplaced ``target``, or a sample without both
            classes.
        PrecisionUnreachable: when no threshold reaches the precision target.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; valid objectives: {', '.join(OBJECTIVES)}")
    constrained = objective in ("precision@recall", "recall@precision")
    if constrained and (target is None or not 0.0 <= target <= 1.0):
        raise ValueError(f"objective {objective!r} needs a target in [0, 1], got {target}")
    if not constrained and target is not None:
        raise ValueError(f"objective {objective!r} takes no target, got {target}")
    sweep = threshold_sweep(y_true, prob, weights)
    if not 0 < sweep.positives < sweep.tp[0] + sweep.fp[0]:  # the lowest cut predicts all N rows positive
        raise ValueError("choosing a threshold needs validation labels of both classes")
    if objective == "f1":
        return float(sweep.thresholds[np.argmax(sweep.f1)])
    if objective == "macro_f1":
        return float(sweep.thresholds[np.argmax(sweep.macro_f1)])
    if objective == "precision@recall":
        score = np.where(sweep.recall >= target - _TOL, sweep.precision, -np.inf)
        return float(sweep.thresholds[np.argmax(score)])
    feasible = sweep.precision >= target - _TOL
    if not feasible.any():
        best = float(sweep.precision.max())
        raise PrecisionUnreachable(f"no threshold reaches precision {target} on this sample (best is {best:.4f})", best)
    score = np.where(feasible, sweep.recall, -np.inf)
    return float(sweep.thresholds[len(score) - 1 - np.argmax(score[::-1])])

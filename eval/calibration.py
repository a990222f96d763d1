"""Measuring calibration: reliability bins, expected calibration error (ECE) and the range of ECE a calibrated
model would show (fitting a calibration is ``faim.calibration``).

Calibration compares a confidence with how often the event it predicts happens:

- binary: the confidence is the positive-class probability and the event is "the label is 1";
- multiclass: the confidence is the max probability and the event is "the arg-max class is right".

Bins are ``bins`` equal-width intervals over [0, 1], closed on the left (the last one also on the
right). ECE is the sample-weighted mean, over non-empty bins, of ``|event frequency - mean confidence|``.
It is biased upwards on a finite sample: :func:`ece_if_calibrated` gives the range a calibrated model would show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from faim.calibration.checks import check_binary_labels, check_probabilities


@dataclass(frozen=True)
class ReliabilityBins:
    """Per-bin summary behind a reliability diagram; means of empty bins are NaN.

    Attributes:
        edges: ``bins + 1`` equal-width edges over [0, 1].
        counts: number of samples per bin.
        confidence: mean confidence per bin.
        frequency: observed frequency of the event per bin.
    """

    edges: np.ndarray
    counts: np.ndarray
    confidence: np.ndarray
    frequency: np.ndarray


def bin_index(confidence: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """``(edges [bins + 1], bin of each confidence [N])`` for ``bins`` equal-width bins over [0, 1], closed on the
    left (the last one also on the right).

    Raises:
        ValueError: if ``bins < 1``.
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    # i / bins is the float nearest each edge; linspace's i * (1 / bins) overshoots some (0.7000000000000001 of ten
    # bins), which put a confidence of exactly 0.7 in the bin below
    edges = np.arange(bins + 1) / bins
    return edges, np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, bins - 1)


def reliability_bins(confidence: np.ndarray, outcome: np.ndarray, bins: int = 15) -> ReliabilityBins:
    """Bin confidences into equal-width bins and average confidence and outcome in each.

    Args:
        confidence: predicted probabilities of the event, ``[N]`` in [0, 1].
        outcome: whether the event happened, ``[N]`` of 0/1 or bool.
        bins: number of bins.

    Raises:
        ValueError: on an empty sample, mismatched shapes or ``bins < 1``.
    """
    conf = check_probabilities(np.asarray(confidence).ravel(), "confidence")
    event = check_binary_labels(np.asarray(outcome).ravel(), "outcome")
    if conf.shape != event.shape or conf.size == 0:
        raise ValueError(
            f"confidence and outcome must be non-empty and of one length, got {conf.size} and {event.size}"
        )
    edges, index = bin_index(conf, bins)
    counts = np.bincount(index, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(index, weights=conf, minlength=bins) / counts
        frequency = np.bincount(index, weights=event, minlength=bins) / counts
    return ReliabilityBins(edges=edges, counts=counts, confidence=mean_conf, frequency=frequency)


def expected_calibration_error(confidence: np.ndarray, outcome: np.ndarray, bins: int = 15) -> float:
    """ECE with equal-width bins: ``sum_b n_b / N * |frequency_b - confidence_b|``.

    For a binary task pass ``(prob, y_true)``; for a multiclass one pass
    ``(prob.max(1), prob.argmax(1) == y_true)``.

    Raises:
        ValueError: as :func:`reliability_bins`.
    """
    rb = reliability_bins(confidence, outcome, bins)
    filled = rb.counts > 0
    gaps = np.abs(rb.frequency[filled] - rb.confidence[filled])
    return float(np.sum(rb.counts[filled] * gaps) / rb.counts.sum())


@dataclass(frozen=True)
class CalibratedDraws:
    """Outcomes drawn from the probabilities themselves, binned as a reliability diagram bins them.

    Attributes:
        counts: rows per bin ``[bins]``.
        confidence_sums: sum of the confidences per bin ``[bins]``.
        outcome_sums: sum of the drawn outcomes per draw and bin ``[draws, bins]``.
    """

    counts: np.ndarray
    confidence_sums: np.ndarray
    outcome_sums: np.ndarray

    def ece_range(self, level: float = 0.95) -> tuple[float, float]:
        """The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the draws' ECEs."""
        # per bin, n_b * |frequency_b - confidence_b| = |outcome sum - confidence sum|
        eces = np.abs(self.outcome_sums - self.confidence_sums).sum(axis=1) / self.counts.sum()
        low, high = np.quantile(eces, _quantiles(level))
        return float(low), float(high)

    def frequency_range(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Per bin, the same quantiles of the draws' event frequencies, ``(low [bins], high [bins])``; NaN for an
        empty bin."""
        with np.errstate(invalid="ignore", divide="ignore"):
            frequency = self.outcome_sums / self.counts  # [draws, bins]; NaN where a bin is empty
        low, high = np.quantile(frequency, _quantiles(level), axis=0)
        return low, high


def _quantiles(level: float) -> list[float]:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return [(1 - level) / 2, (1 + level) / 2]


def draw_calibrated(
    prob: np.ndarray, groups: np.ndarray | None = None, bins: int = 15, draws: int = 1000, seed: int = 0
) -> CalibratedDraws:
    """Draw outcomes from the probabilities themselves: samples of a model calibrated by construction
    (consistency resampling, Bröcker and Smith, 2007, "Increasing the reliability of reliability diagrams").

    Args:
        prob: binary positive-class probabilities ``[N]``, or class probabilities ``[N, C]`` (the confidence is
            the max probability and the event is "the arg-max class is right", as in
            :func:`expected_calibration_error`).
        groups: optional group id per row ``[N]``: rows of one group share one uniform number (a row's outcome is
            whether it falls below the row's confidence), so rows of a group with equal probabilities get the same
            outcome, as posts pooled by a shared picture do. ``None``: every row is drawn on its own.
        bins: number of equal-width bins.
        draws: number of simulated samples.
        seed: seed of the draws (results are reproducible).

    Raises:
        ValueError: on an empty sample, probabilities outside [0, 1], groups of another length, ``bins < 1`` or
            ``draws < 1``.
    """
    p = check_probabilities(prob, "prob")
    if p.ndim not in (1, 2) or p.shape[0] == 0:
        raise ValueError(f"prob must be a non-empty [N] or [N, C] array, got shape {p.shape}")
    confidence = p if p.ndim == 1 else p.max(axis=1)
    n = confidence.size
    if groups is None:
        group_index = np.arange(n)
    else:
        ids = np.asarray(groups)
        if ids.shape != (n,):
            raise ValueError(f"groups must have one id per row, shape ({n},), got {ids.shape}")
        group_index = np.unique(ids, return_inverse=True)[1].ravel()
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    _, index = bin_index(confidence, bins)
    rng = np.random.default_rng(seed)
    n_groups = int(group_index.max()) + 1
    outcome_sums = np.empty((draws, bins))
    chunk = max(1, 2**22 // n)  # draws simulated together: about 4M rows at a time
    for start in range(0, draws, chunk):
        count = min(chunk, draws - start)
        outcomes = rng.random((count, n_groups))[:, group_index] < confidence  # [count, N]
        outcome_sums[start : start + count] = [np.bincount(index, weights=row, minlength=bins) for row in outcomes]
    return CalibratedDraws(
        counts=np.bincount(index, minlength=bins),
        confidence_sums=np.bincount(index, weights=confidence, minlength=bins),
        outcome_sums=outcome_sums,
    )


def ece_if_calibrated(
    prob: np.ndarray,
    groups: np.ndarray | None = None,
    bins: int = 15,
    draws: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """The range of ECE a perfectly calibrated model would show on this sample: ``(low, high)``, the central
    ``level`` share of the ECEs of :func:`draw_calibrated` (which the other arguments go to).

    An observed ECE reads against this range, not against 0: with few independent outcomes even a calibrated
    model's ECE is far above 0.

    Raises:
        ValueError: as :func:`draw_calibrated`, and on ``level`` outside (0, 1).
    """
    _quantiles(level)  # a bad level fails before the draws
    return draw_calibrated(prob, groups, bins, draws, seed).ece_range(level)


def consistency_bars(
    prob: np.ndarray, groups: np.ndarray | None = None, bins: int = 15, draws: int = 1000, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Per reliability bin, the range of observed frequency a perfectly calibrated model would show here.

    Arguments as :func:`ece_if_calibrated`. Returns ``(low [bins], high [bins])``, NaN for empty bins: a bar of the
    reliability diagram outside its range is miscalibration this sample can show.
    """
    _quantiles(level)
    return draw_calibrated(prob, groups, bins, draws).frequency_range(level)

"""Calibration: reliability bins, expected calibration error (ECE) and temperature scaling.

Calibration compares a confidence with how often the event it predicts happens:

- binary: the confidence is the positive-class probability and the event is "the label is 1";
- multiclass: the confidence is the max probability and the event is "the arg-max class is right".

Bins are ``bins`` equal-width intervals over [0, 1], closed on the left (the last one also on the
right). ECE is the sample-weighted mean, over non-empty bins, of ``|event frequency - mean confidence|``.
It is biased upwards on a finite sample: :func:`ece_if_calibrated` gives the range a calibrated model would show.

Temperature scaling divides logits by one scalar ``T > 0`` fitted on validation data by minimising
the negative log-likelihood. ``T > 1`` softens overconfident scores. In the binary case
``sigmoid(z / T)`` is increasing in ``z``, so the ranking, AUROC and average precision are unchanged;
in the multiclass case the arg-max, hence accuracy, is unchanged.

A binary task may also shift the scaled logit, ``sigmoid(z / T + s)`` (Platt scaling, fitted jointly by
``fit_platt``): a temperature alone cannot move the probabilities when the share of positives differs
between training and validation data (prior shift), a shift can. The ranking is still unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit, logsumexp, softmax

from faim.eval._checks import check_binary_labels, check_probabilities

_PROB_EPS = 1e-12


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
    edges = np.linspace(0.0, 1.0, bins + 1)
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


def fit_temperature(
    scores: np.ndarray,
    y_true: np.ndarray,
    *,
    from_probs: bool = False,
    bounds: tuple[float, float] = (0.05, 20.0),
) -> float:
    """Fit the temperature minimising validation negative log-likelihood.

    The search is a bounded 1-D minimisation (Brent's method) over ``log T``.

    Args:
        scores: logits, ``[N]`` for a binary task (logit of the positive class) or ``[N, C]`` for a
            multiclass one; probabilities of the same shapes when ``from_probs`` is set.
        y_true: labels, 0/1 ``[N]`` for binary, class indices ``[N]`` for multiclass.
        from_probs: whether ``scores`` are probabilities; they are turned into logits first
            (clipped away from 0 and 1).
        bounds: smallest and largest temperature searched.

    Returns:
        The temperature ``T``; divide logits by it, or call :func:`apply_temperature`.

    Raises:
        ValueError: on an empty sample, mismatched shapes, labels that do not fit the scores or
            bounds that are not ``0 < low < high``.
    """
    low, high = bounds
    if not 0 < low < high:
        raise ValueError(f"bounds must satisfy 0 < low < high, got {bounds}")
    logits = _to_logits(scores, from_probs)
    y = _check_targets(y_true, logits)

    def nll(log_t: float) -> float:
        z = logits / np.exp(log_t)
        if z.ndim == 1:
            return float(np.mean(np.logaddexp(0.0, z) - y * z))
        return float(np.mean(logsumexp(z, axis=1) - z[np.arange(len(y)), y]))

    result = minimize_scalar(nll, bounds=(np.log(low), np.log(high)), method="bounded", options={"xatol": 1e-6})
    return float(np.exp(result.x))


def fit_platt(
    scores: np.ndarray,
    y_true: np.ndarray,
    *,
    from_probs: bool = False,
    bounds: tuple[float, float] = (0.05, 20.0),
) -> tuple[float, float]:
    """Fit a binary task's temperature and logit shift together, minimising validation negative log-likelihood.

    Args:
        scores: logits ``[N]`` of the positive class, or probabilities with ``from_probs``.
        y_true: 0/1 labels ``[N]``.
        from_probs: whether ``scores`` are probabilities.
        bounds: smallest and largest temperature searched.

    Returns:
        ``(T, s)``: calibrated probabilities are ``sigmoid(z / T + s)`` (:func:`apply_temperature` with ``shift``).

    Raises:
        ValueError: on an empty sample, multiclass scores, labels that are not 0/1 or bad ``bounds``.
    """
    low, high = bounds
    if not 0 < low < high:
        raise ValueError(f"bounds must satisfy 0 < low < high, got {bounds}")
    logits = _to_logits(scores, from_probs)
    if logits.ndim != 1:
        raise ValueError(f"a logit shift is fitted for binary scores [N] only, got shape {logits.shape}")
    y = _check_targets(y_true, logits)
    start = fit_temperature(logits, y, bounds=bounds)

    def nll(params: np.ndarray) -> float:
        z = logits / np.exp(params[0]) + params[1]
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    result = minimize(
        nll, np.array([np.log(start), 0.0]), method="L-BFGS-B", bounds=[(np.log(low), np.log(high)), (None, None)]
    )
    return float(np.exp(result.x[0])), float(result.x[1])


def fit_scaling(
    scores: np.ndarray, y_true: np.ndarray, *, logit_shift: bool = False, from_probs: bool = False
) -> tuple[float, float]:
    """``(T, s)`` as evaluation fits a task's calibration: with ``logit_shift``, binary scores ``[N]`` whose labels
    hold both classes get a temperature and a shift (:func:`fit_platt`); any other scores a temperature alone
    (:func:`fit_temperature`) and shift 0, since a shift fitted on one class runs off without bound.
    ``from_probs``: the scores are probabilities, as in :func:`fit_temperature`.

    Raises:
        ValueError: As :func:`fit_temperature`.
    """
    if logit_shift and np.ndim(scores) == 1 and len(np.unique(y_true)) == 2:
        return fit_platt(scores, y_true, from_probs=from_probs)
    return fit_temperature(scores, y_true, from_probs=from_probs), 0.0


def apply_temperature(
    scores: np.ndarray, temperature: float, *, shift: float = 0.0, from_probs: bool = False
) -> np.ndarray:
    """Return calibrated probabilities ``sigmoid(z / T + shift)`` (``[N]``) or ``softmax(z / T)`` (``[N, C]``).

    Args:
        scores: logits or, with ``from_probs``, probabilities; shapes as in :func:`fit_temperature`.
        temperature: ``T > 0`` from :func:`fit_temperature` or :func:`fit_platt`.
        shift: Logit shift of a binary task from :func:`fit_platt`.
        from_probs: whether ``scores`` are probabilities.

    Raises:
        ValueError: if ``temperature`` is not positive, ``scores`` is not 1-D or 2-D, or a shift is given
            for multiclass scores.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    z = _to_logits(scores, from_probs) / temperature
    if z.ndim == 2 and shift:
        raise ValueError("a logit shift applies to binary scores [N] only")
    return expit(z + shift) if z.ndim == 1 else softmax(z, axis=1)


def _to_logits(scores: np.ndarray, from_probs: bool) -> np.ndarray:
    """Return float logits ``[N]`` or ``[N, C]``; probabilities map to log-odds or log-probabilities."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim not in (1, 2) or s.shape[0] == 0:
        raise ValueError(f"scores must be a non-empty [N] or [N, C] array, got shape {s.shape}")
    if not from_probs:
        if not np.isfinite(s).all():
            raise ValueError("scores (logits) must be finite")
        return s
    p = np.clip(check_probabilities(s, "scores"), _PROB_EPS, 1.0 - _PROB_EPS)
    return np.log(p) - np.log1p(-p) if p.ndim == 1 else np.log(p)


def _check_targets(y_true: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """Return labels as int64 ``[N]`` after checking they fit binary (1-D) or multiclass (2-D) logits."""
    y = np.asarray(y_true)
    if y.shape != logits.shape[:1]:
        raise ValueError(f"y_true must have shape {logits.shape[:1]}, got {y.shape}")
    if logits.ndim == 1:
        return check_binary_labels(y)
    if not np.isin(y, np.arange(logits.shape[1])).all():
        raise ValueError(f"y_true must hold class indices in [0, {logits.shape[1]})")
    return y.astype(np.int64)

"""Fitting a calibration: temperature scaling and Platt scaling of logits.

Temperature scaling divides logits by one scalar ``T > 0`` fitted on validation data by minimising
the negative log-likelihood. ``T > 1`` softens overconfident scores. In the binary case
``sigmoid(z / T)`` is increasing in ``z``, so the ranking, AUROC and average precision are unchanged;
in the multiclass case the arg-max, hence accuracy, is unchanged.

A binary task may also shift the scaled logit, ``sigmoid(z / T + s)`` (Platt scaling, fitted jointly by
``fit_platt``): a temperature alone cannot move the probabilities when the share of positives differs
between training and validation data (prior shift), a shift can. The ranking is still unchanged. On a few hundred
labels a shift that is not there costs more than it brings (its fitted value is noise), so ``fit_scaling`` can keep
it only where a likelihood-ratio test finds one (``shift_level``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit, logsumexp, softmax
from scipy.stats import chi2

from faim.calibration.checks import check_binary_labels, check_probabilities

_PROB_EPS = 1e-12
TEMPERATURE_BOUNDS = (0.05, 20.0)
"""Smallest and largest temperature the fits search."""


def temperature_edge(temperature: float) -> str | None:
    """What a fitted ``temperature`` lying at an edge of ``TEMPERATURE_BOUNDS`` says of the labels it was fitted on
    (``at the upper edge of the range 0.05–20 the fit searches: ...``); ``None`` for one inside the range. The lower
    edge is where the fit would sharpen the scores further still: labels they separate perfectly, or scores lying so
    close together (a head that learnt little) that even this temperature spreads them less than the labels call
    for."""
    low, high = TEMPERATURE_BOUNDS
    edge = f"at the {{}} edge of the range {low:g}–{high:g} the fit searches: {{}}"
    if np.isclose(temperature, low, rtol=1e-3):
        separate = "the model's scores separate these labels perfectly (too few to fit on)"
        close = "or lie so close together that this temperature spreads them too little (a head that learnt little)"
        return edge.format("lower", f"{separate}, {close}")
    if np.isclose(temperature, high, rtol=1e-3):
        return edge.format("upper", "the model's scores barely tell these labels apart, or read them backwards")
    return None


def fit_temperature(
    scores: np.ndarray,
    y_true: np.ndarray,
    *,
    from_probs: bool = False,
    bounds: tuple[float, float] = TEMPERATURE_BOUNDS,
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
        if logits.ndim == 1:
            return binary_nll(logits, y, np.exp(log_t), 0.0) / len(y)
        z = logits / np.exp(log_t)
        return float(np.mean(logsumexp(z, axis=1) - z[np.arange(len(y)), y]))

    result = minimize_scalar(nll, bounds=(np.log(low), np.log(high)), method="bounded", options={"xatol": 1e-6})
    return float(np.exp(result.x))


def fit_platt(
    scores: np.ndarray,
    y_true: np.ndarray,
    *,
    from_probs: bool = False,
    bounds: tuple[float, float] = TEMPERATURE_BOUNDS,
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
        return binary_nll(logits, y, np.exp(params[0]), params[1]) / len(y)

    result = minimize(
        nll, np.array([np.log(start), 0.0]), method="L-BFGS-B", bounds=[(np.log(low), np.log(high)), (None, None)]
    )
    return float(np.exp(result.x[0])), float(result.x[1])


def fit_scaling(
    scores: np.ndarray,
    y_true: np.ndarray,
    *,
    logit_shift: bool = False,
    from_probs: bool = False,
    shift_level: float | None = None,
) -> tuple[float, float]:
    """``(T, s)`` as evaluation fits a task's calibration: with ``logit_shift``, binary scores ``[N]`` whose labels
    hold both classes get a temperature and a shift (:func:`fit_platt`); any other scores a temperature alone
    (:func:`fit_temperature`) and shift 0, since a shift fitted on one class runs off without bound.
    ``from_probs``: the scores are probabilities, as in :func:`fit_temperature`. ``shift_level``: keep the shift
    only where the likelihood-ratio test of temperature and shift against the temperature alone rejects "no
    shift" at this significance level (twice the gain in log-likelihood above the chi-squared quantile, one degree
    of freedom); otherwise the temperature alone. ``None``: always keep it.

    Raises:
        ValueError: As :func:`fit_temperature`, or for a ``shift_level`` outside (0, 1).
    """
    if shift_level is not None and not 0 < shift_level < 1:
        raise ValueError(f"shift_level must be a significance level in (0, 1), got {shift_level}")
    if not (logit_shift and np.ndim(scores) == 1 and len(np.unique(y_true)) == 2):
        return fit_temperature(scores, y_true, from_probs=from_probs), 0.0
    temperature, shift = fit_platt(scores, y_true, from_probs=from_probs)
    if shift_level is None:
        return temperature, shift
    alone = fit_temperature(scores, y_true, from_probs=from_probs)
    logits, y = _to_logits(scores, from_probs), np.asarray(y_true)
    gain = binary_nll(logits, y, alone, 0.0) - binary_nll(logits, y, temperature, shift)
    return (temperature, shift) if 2 * gain > chi2.ppf(1 - shift_level, df=1) else (alone, 0.0)


def binary_nll(
    logits: np.ndarray, y: np.ndarray, temperature: float, shift: float, weights: np.ndarray | None = None
) -> float:
    """Summed negative log-likelihood of 0/1 labels under ``sigmoid(logits / T + shift)``; with ``weights``, each
    post's term counts that much."""
    z = logits / temperature + shift
    terms = np.logaddexp(0.0, z) - y * z
    return float(np.sum(terms if weights is None else weights * terms))


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

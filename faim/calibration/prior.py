"""Moving a calibration to another class prior, estimated from unlabelled posts by EM (Saerens, Latinne and
Decaestecker, 2002, "Adjusting the outputs of a classifier to new a priori probabilities", Neural Computation).

A binary task's probabilities are calibrated to the share of positives of the posts it was calibrated on (its
prior ``π``). On posts where positives are rarer or commoner, Bayes' rule gives their probabilities under the new
prior ``π'`` as ``π'/π · p`` against ``(1-π')/(1-π) · (1-p)``, and ``π'`` is the mean of those: EM alternates the
two until ``π'`` settles. A probability's log-odds then move by ``logit(π') - logit(π)``: one more logit shift.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logit

from faim.calibration.checks import check_probabilities

EPSILON = 1e-6


def estimate_prior(probabilities: np.ndarray, prior: float, tolerance: float = 1e-8, max_steps: int = 10_000) -> float:
    """The share of positives among the posts whose calibrated ``probabilities`` (under ``prior``) are given.

    Raises:
        ValueError: On no probabilities, a value outside [0, 1], or a prior outside (0, 1).
    """
    p = np.clip(check_probabilities(np.asarray(probabilities, dtype=np.float64).ravel()), EPSILON, 1 - EPSILON)
    if p.size == 0:
        raise ValueError("estimating a prior needs at least one probability")
    if not 0 < prior < 1:
        raise ValueError(f"the calibration prior must be in (0, 1), got {prior}")
    estimate = prior
    for _ in range(max_steps):
        positive = estimate / prior * p
        negative = (1 - estimate) / (1 - prior) * (1 - p)
        updated = float(np.mean(positive / (positive + negative)))
        if abs(updated - estimate) < tolerance:
            return updated
        estimate = updated
    return estimate


def prior_shift(old: float, new: float) -> float:
    """The logit shift that moves probabilities calibrated to prior ``old`` to prior ``new``."""
    old, new = np.clip([old, new], EPSILON, 1 - EPSILON)
    return float(logit(new) - logit(old))

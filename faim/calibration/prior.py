"""Moving a calibration to another class prior, estimated from unlabelled posts by EM (Saerens, Latinne and
Decaestecker, 2002, "Adjusting the outputs of a classifier to new a priori probabilities", Neural Computation).

A binary task's probabilities are calibrated to the share of positives of the posts it was calibrated on (its
prior ``π``). On posts where positives are rarer or commoner, Bayes' rule gives their probabilities under the new
prior ``π'`` as ``π'/π · p`` against ``(1-π')/(1-π) · (1-p)``, and ``π'`` is the mean of those: EM alternates the
two until ``π'`` settles. A probability's log-odds then move by ``logit(π') - logit(π)``: one more logit shift.

The likelihood of ``π'`` is concave, so where it peaks at an edge (0 or 1) EM creeps towards it without end: the
posts' scores evidence no post of one class (too few posts, or scores that barely tell the classes apart), and a
move there would put every probability at 0 or 1. ``estimate_prior`` then gives half a post's share from that edge
instead (``edge_shares``), a continuity correction: the most the posts can be said to hold of a class they show none
of is a fraction of one post.

Few posts make a noisy estimate: ``prior_interval`` gives the shares the posts' likelihood does not rule out
(a 95% likelihood-ratio interval), which ``faim calibrate --unlabelled`` reports beside the estimate, warning where it
is wider than ``WIDE_INTERVAL``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import logit

from faim.calibration.checks import check_probabilities

EPSILON = 1e-6

CHI2_95 = 3.841458820694124
"""The 95% quantile of the chi-squared distribution with one degree of freedom: a share lies in the likelihood-ratio
interval where twice its log-likelihood's drop from the peak is below it."""

WIDE_INTERVAL = 0.2
"""The width of ``prior_interval`` above which the estimate is too uncertain to move a calibration to unsaid."""


def estimate_prior(probabilities: np.ndarray, prior: float, tolerance: float = 1e-8, max_steps: int = 10_000) -> float:
    """The share of positives among the posts whose calibrated ``probabilities`` (under ``prior``) are given; where
    its likelihood peaks at an edge (``likelihood_edge``), half a post's share from it (``edge_shares``).

    Raises:
        ValueError: On no probabilities, a value outside [0, 1], or a prior outside (0, 1).
    """
    p = np.clip(check_probabilities(np.asarray(probabilities, dtype=np.float64).ravel()), EPSILON, 1 - EPSILON)
    if p.size == 0:
        raise ValueError("estimating a prior needs at least one probability")
    if not 0 < prior < 1:
        raise ValueError(f"the calibration prior must be in (0, 1), got {prior}")
    edge = likelihood_edge(p, prior)
    if edge is not None:
        return edge_shares(p.size)[int(edge)]
    estimate = prior
    for _ in range(max_steps):
        positive = estimate / prior * p
        negative = (1 - estimate) / (1 - prior) * (1 - p)
        updated = float(np.mean(positive / (positive + negative)))
        if abs(updated - estimate) < tolerance:
            return updated
        estimate = updated
    return estimate


def likelihood_edge(probabilities: np.ndarray, prior: float) -> float | None:
    """0.0 or 1.0 where the likelihood of the share of positives peaks at that edge, ``None`` where it peaks inside.

    ``probabilities`` are calibrated under ``prior`` and clipped away from 0 and 1. Each post's likelihood ratio is
    its odds over the prior's: the likelihood falls from 0 where their mean is below 1, and rises to 1 where the
    mean of their inverses is.
    """
    ratios = probabilities / (1 - probabilities) * (1 - prior) / prior
    if np.mean(ratios) < 1:
        return 0.0
    if np.mean(1 / ratios) < 1:
        return 1.0
    return None


def edge_shares(posts: int) -> tuple[float, float]:
    """The shares ``estimate_prior`` gives over ``posts`` posts where the likelihood peaks at 0 and at 1: half a
    post's share from each edge."""
    return 0.5 / posts, 1 - 0.5 / posts


def prior_shift(old: float, new: float) -> float:
    """The logit shift that moves probabilities calibrated to prior ``old`` to prior ``new``."""
    old, new = np.clip([old, new], EPSILON, 1 - EPSILON)
    return float(logit(new) - logit(old))


def prior_interval(probabilities: np.ndarray, prior: float, estimate: float) -> tuple[float, float]:
    """The 95% likelihood-ratio interval around ``estimate`` (``estimate_prior``'s) of the share of positives among
    the posts whose calibrated ``probabilities`` (under ``prior``) are given: the shares whose log-likelihood is within
    ``CHI2_95 / 2`` of its peak's (the estimate's, or, where the likelihood peaks at an edge, that edge's, not that of
    the share half a post from it: the likelihood is concave, so its peak is the highest of the three); an end is 0 or
    1 where the likelihood there is not that far below."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64).ravel(), EPSILON, 1 - EPSILON)
    peak = max(log_likelihood(p, prior, share) for share in (0.0, estimate, 1.0))

    def drop(share: float) -> float:
        """Twice the peak's log-likelihood over that of ``share``, less ``CHI2_95``: negative inside."""
        return 2 * (peak - log_likelihood(p, prior, share)) - CHI2_95

    low = 0.0 if drop(0.0) <= 0 else brentq(drop, 0.0, estimate)
    high = 1.0 if drop(1.0) <= 0 else brentq(drop, estimate, 1.0)
    return float(low), float(high)


def log_likelihood(probabilities: np.ndarray, prior: float, share: float) -> float:
    """The log-likelihood of ``share`` positives among posts whose ``probabilities`` are calibrated under ``prior``
    (up to a constant): each post's probability of its features under the mixture ``share`` gives."""
    mixture = share / prior * probabilities + (1 - share) / (1 - prior) * (1 - probabilities)
    return float(np.sum(np.log(mixture)))

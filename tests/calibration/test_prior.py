"""EM for a new class prior (Saerens et al., 2002) on generated, calibrated scores."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logit

from faim.calibration.prior import (
    CHI2_95,
    WIDE_INTERVAL,
    edge_shares,
    estimate_prior,
    log_likelihood,
    prior_interval,
    prior_shift,
)
from faim.eval import expected_calibration_error


def calibrated_scores(prior: float, n: int = 20000, separation: float = 2.0, seed: int = 0) -> tuple:
    """Labels drawn with ``prior`` and the exact posterior of each post under that prior (two Gaussian classes)."""
    rng = np.random.default_rng(seed)
    y = (rng.uniform(size=n) < prior).astype(int)
    x = rng.normal(np.where(y == 1, separation / 2, -separation / 2), 1.0)
    return expit(separation * x + logit(prior)), y


@pytest.mark.parametrize("new_prior", [0.05, 0.15, 0.4, 0.7])
def test_em_recovers_a_shifted_prior_within_five_points(new_prior: float) -> None:
    shifted, y = calibrated_scores(new_prior, seed=1)
    as_calibrated = expit(logit(shifted) - logit(new_prior) + logit(0.4))  # a model calibrated on 40 % positives
    estimate = estimate_prior(as_calibrated, 0.4)
    assert abs(estimate - y.mean()) < 0.05


def test_the_shift_to_the_estimated_prior_lowers_the_calibration_error() -> None:
    shifted, y = calibrated_scores(0.1, seed=2)
    as_calibrated = expit(logit(shifted) - logit(0.1) + logit(0.5))
    moved = expit(logit(as_calibrated) + prior_shift(0.5, estimate_prior(as_calibrated, 0.5)))
    assert expected_calibration_error(moved, y) < 0.02 < 0.1 < expected_calibration_error(as_calibrated, y)


@pytest.mark.parametrize(
    ("probabilities", "edge"),
    [([0.9], 0.5), ([0.2, 0.1, 0.3], 0.5 / 3), (np.full(500, 0.24), 0.001), (np.full(500, 0.26), 0.999)],
)
def test_a_share_whose_likelihood_peaks_at_an_edge_is_taken_half_a_post_from_it(
    probabilities: list, edge: float
) -> None:
    estimate = estimate_prior(np.array(probabilities), 0.25)  # one post, a few, scores that tell nothing apart
    assert estimate == pytest.approx(edge) and estimate in edge_shares(len(probabilities))
    shifted, _ = calibrated_scores(0.1, n=500, seed=3)
    assert estimate_prior(shifted, 0.25) not in edge_shares(500)


def test_bad_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="prior must be in"):
        estimate_prior(np.array([0.2]), 1.0)
    with pytest.raises(ValueError, match="at least one"):
        estimate_prior(np.array([]), 0.3)


def test_the_interval_of_the_estimate_holds_it_and_is_wide_on_ten_posts_narrow_on_thousands() -> None:
    widths = {}
    for n in (10, 5000):
        shifted, _ = calibrated_scores(0.3, n=n, seed=2)
        as_calibrated = expit(logit(shifted) - logit(0.3) + logit(0.5))  # a model calibrated on 50 % positives
        estimate = estimate_prior(as_calibrated, 0.5)
        low, high = prior_interval(as_calibrated, 0.5, estimate)
        assert low <= estimate <= high and low - 0.02 <= 0.3 <= high + 0.02  # the true share, within a draw's luck
        widths[n] = high - low
    assert widths[10] > WIDE_INTERVAL > 0.05 > widths[5000]


@pytest.mark.parametrize(("probabilities", "edge"), [(np.full(20, 0.05), 0.0), ([0.9], 1.0), (np.full(500, 0.24), 0.0)])
def test_an_interval_whose_likelihood_peaks_at_an_edge_is_measured_from_that_edge(
    probabilities: list, edge: float
) -> None:
    p = np.array(probabilities)
    estimate = estimate_prior(p, 0.25)  # half a post from the edge, whose likelihood is below the edge's
    low, high = prior_interval(p, 0.25, estimate)
    far = high if edge == 0.0 else low
    assert (low, high)[int(edge)] == edge and low <= estimate <= high
    assert 2 * (log_likelihood(p, 0.25, edge) - log_likelihood(p, 0.25, far)) == pytest.approx(CHI2_95)

"""Expected calibration error and the range a calibrated model would show, on synthetic samples with known
calibration."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import overconfident_binary
from scipy.special import expit

from faim.eval import consistency_bars, ece_if_calibrated, expected_calibration_error, reliability_bins


def test_ece_hand_computed() -> None:
    # two bins: [0, 0.5) holds 0.2, 0.4 (mean 0.3, one positive: 0.5); [0.5, 1] holds 0.9 (positive)
    ece = expected_calibration_error(np.array([0.2, 0.4, 0.9]), np.array([0, 1, 1]), bins=2)
    assert ece == pytest.approx((2 * abs(0.5 - 0.3) + abs(1.0 - 0.9)) / 3)


def test_reliability_bins_edges_and_empty_bins() -> None:
    rb = reliability_bins(np.array([0.0, 0.5, 1.0]), np.array([0, 1, 1]), bins=4)
    assert rb.counts.tolist() == [1, 0, 1, 1]  # 1.0 falls in the last, closed bin
    assert np.isnan(rb.confidence[1]) and np.isnan(rb.frequency[1])


def test_ece_of_calibrated_sample_is_small() -> None:
    rng = np.random.default_rng(0)
    prob = rng.uniform(size=20_000)
    y = (rng.uniform(size=20_000) < prob).astype(int)
    assert expected_calibration_error(prob, y) < 0.02


def test_ece_of_overconfident_sample_is_large() -> None:
    logits, y = overconfident_binary()
    assert expected_calibration_error(expit(logits), y) > 0.1


def test_ece_rejects_empty_and_bad_bins() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        expected_calibration_error(np.array([]), np.array([]))
    with pytest.raises(ValueError, match="bins"):
        expected_calibration_error(np.array([0.5]), np.array([1]), bins=0)


def test_ece_of_calibrated_samples_falls_in_the_calibrated_range() -> None:
    rng = np.random.default_rng(1)
    prob = rng.uniform(size=300)
    low, high = ece_if_calibrated(prob)
    eces = [expected_calibration_error(prob, rng.uniform(size=300) < prob) for _ in range(200)]
    inside = np.mean([low <= ece <= high for ece in eces])
    assert 0.9 <= inside <= 0.99 and low > 0.02  # 300 outcomes: a calibrated model's ECE is well above 0


def test_shared_outcomes_widen_the_calibrated_range() -> None:
    prob = np.repeat(np.random.default_rng(2).uniform(size=20), 50)  # 20 groups of 50 rows with one probability
    alone, shared = ece_if_calibrated(prob), ece_if_calibrated(prob, groups=np.repeat(np.arange(20), 50))
    assert shared[1] > 2 * alone[1]
    assert ece_if_calibrated(prob, groups=np.arange(1000)) == alone  # groups of one: rows drawn on their own


def test_calibrated_range_is_reproducible_and_zero_for_certain_forecasts() -> None:
    prob = np.random.default_rng(3).uniform(size=(100, 3))
    prob /= prob.sum(axis=1, keepdims=True)
    assert ece_if_calibrated(prob, seed=5) == ece_if_calibrated(prob, seed=5) != ece_if_calibrated(prob, seed=6)
    assert ece_if_calibrated(np.array([0.0, 1.0, 1.0])) == (0.0, 0.0)


def test_consistency_bars_hold_a_calibrated_samples_bin_frequencies() -> None:
    rng = np.random.default_rng(4)
    prob = rng.uniform(size=3000)
    low, high = consistency_bars(prob, bins=10)
    assert np.all(low <= high) and np.all((low >= 0) & (high <= 1))
    inside = []
    for _ in range(50):
        frequency = reliability_bins(prob, rng.uniform(size=3000) < prob, bins=10).frequency
        inside.append(np.mean((low <= frequency) & (frequency <= high)))
    assert np.mean(inside) > 0.9
    overconfident = reliability_bins(prob, rng.uniform(size=3000) < 0.5 + (prob - 0.5) / 2, bins=10).frequency
    assert np.mean((low <= overconfident) & (overconfident <= high)) < 0.5
    grouped_low, grouped_high = consistency_bars(prob, groups=np.arange(3000) // 300, bins=10)
    assert np.all(grouped_high - grouped_low > high - low)  # ten groups share their outcomes: wider bars


def test_consistency_bars_of_an_empty_bin_are_nan() -> None:
    low, high = consistency_bars(np.array([0.05, 0.95]), bins=2)
    low_three, _ = consistency_bars(np.array([0.05, 0.95]), bins=3)
    assert not np.isnan(low).any() and not np.isnan(high).any() and np.isnan(low_three[1])


def test_calibrated_range_errors() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        ece_if_calibrated(np.array([]))
    with pytest.raises(ValueError, match="one id per row"):
        ece_if_calibrated(np.array([0.2, 0.4]), groups=np.array([0]))
    with pytest.raises(ValueError, match="level"):
        ece_if_calibrated(np.array([0.2, 0.4]), level=1.0)
    with pytest.raises(ValueError, match="probabilities"):
        ece_if_calibrated(np.array([0.2, 1.4]))


def test_a_confidence_on_a_bin_edge_falls_in_the_bin_it_opens() -> None:
    # bins are closed on the left: 0.3, 0.6 and 0.7 open bins 3, 6 and 7 of ten, as does 0.1 * 7 just above 0.7
    confidence = np.array([0.3, 0.6, 0.7, 0.1 * 7, 0.75])
    rb = reliability_bins(confidence, np.ones(5), bins=10)
    assert np.flatnonzero(rb.counts).tolist() == [3, 6, 7] and rb.counts[7] == 3
    assert rb.edges[7] == 0.7
    # 0.7 and 0.75 share the bin [0.7, 0.8): one event of two against a mean confidence of 0.725
    assert expected_calibration_error(np.array([0.7, 0.75]), np.array([0, 1]), bins=10) == pytest.approx(0.225)

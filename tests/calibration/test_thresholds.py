"""Threshold sweep, fixed operating points and threshold choice, checked against brute force."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score

from faim.calibration.fit import source_class_weights
from faim.calibration.thresholds import (
    PrecisionUnreachable,
    choose_threshold,
    precision_at_recall,
    recall_at_precision,
    threshold_sweep,
)

Y = np.array([0, 1, 0, 1, 1, 0, 1, 0, 0, 1])
P = np.array([0.05, 0.3, 0.35, 0.4, 0.55, 0.6, 0.7, 0.2, 0.65, 0.9])


def _brute_force(y: np.ndarray, prob: np.ndarray, metric: Callable[[np.ndarray, np.ndarray], float]) -> np.ndarray:
    """Metric of the decision ``prob >= u`` for every distinct probability ``u``."""
    return np.array([metric(y, prob >= u) for u in np.unique(prob)])


def test_sweep_counts_match_brute_force() -> None:
    sweep = threshold_sweep(Y, P)
    assert sweep.positives == 5
    assert sweep.f1 == pytest.approx(_brute_force(Y, P, f1_score))
    assert sweep.precision == pytest.approx(_brute_force(Y, P, precision_score))
    assert sweep.recall == pytest.approx(_brute_force(Y, P, recall_score))
    # thresholds: the lowest probability, then midpoints between consecutive distinct probabilities
    assert sweep.thresholds[0] == 0.05 and sweep.thresholds[1] == pytest.approx(0.125)


def test_choose_threshold_maximises_f1_on_tiny_example() -> None:
    # cutting at 0.3 keeps all five positives and 3 negatives: f1 = 10 / 13, the best of all cuts
    threshold = choose_threshold(Y, P, "f1")
    assert threshold == pytest.approx((0.2 + 0.3) / 2)
    best = max(f1_score(Y, P >= u) for u in np.unique(P))
    assert f1_score(Y, P >= threshold) == pytest.approx(best) == pytest.approx(10 / 13)


def test_choose_threshold_macro_f1_is_optimal() -> None:
    threshold = choose_threshold(Y, P, "macro_f1")
    best = max(f1_score(Y, P >= u, average="macro") for u in np.unique(P))
    assert f1_score(Y, P >= threshold, average="macro") == pytest.approx(best)


def test_choose_threshold_constrained_objectives() -> None:
    rng = np.random.default_rng(3)
    prob = rng.uniform(size=400)
    y = (rng.uniform(size=400) < prob).astype(int)
    t = choose_threshold(y, prob, "precision@recall", target=0.8)
    assert recall_score(y, prob >= t) >= 0.8
    assert precision_score(y, prob >= t) == pytest.approx(precision_at_recall(y, prob, 0.8))
    t = choose_threshold(y, prob, "recall@precision", target=0.8)
    assert precision_score(y, prob >= t) >= 0.8
    assert recall_score(y, prob >= t) == pytest.approx(recall_at_precision(y, prob, 0.8))


def test_fixed_operating_points_match_brute_force() -> None:
    precision = _brute_force(Y, P, precision_score)
    recall = _brute_force(Y, P, recall_score)
    for target in (0.2, 0.6, 0.8, 1.0):
        assert precision_at_recall(Y, P, target) == pytest.approx(precision[recall >= target].max())
        feasible = recall[precision >= target]
        assert recall_at_precision(Y, P, target) == pytest.approx(feasible.max() if feasible.size else 0.0)


def test_operating_points_without_positives_are_nan() -> None:
    y, prob = np.zeros(4, dtype=int), np.array([0.1, 0.2, 0.3, 0.4])
    assert math.isnan(precision_at_recall(y, prob, 0.9))
    assert math.isnan(recall_at_precision(y, prob, 0.9))


def test_choose_threshold_errors() -> None:
    with pytest.raises(ValueError, match="unknown objective"):
        choose_threshold(Y, P, "accuracy")
    with pytest.raises(ValueError, match="needs a target"):
        choose_threshold(Y, P, "precision@recall")
    with pytest.raises(ValueError, match="takes no target"):
        choose_threshold(Y, P, "f1", target=0.5)
    with pytest.raises(ValueError, match="both classes"):
        choose_threshold(np.ones(3, dtype=int), np.array([0.2, 0.5, 0.9]))
    with pytest.raises(PrecisionUnreachable, match="no threshold reaches precision 0.9") as unreachable:
        choose_threshold(np.array([1, 0, 1]), np.array([0.2, 0.9, 0.1]), "recall@precision", target=0.9)
    assert unreachable.value.best == pytest.approx(2 / 3)  # every post positive: 2 of 3


def test_weighted_choice_equals_the_choice_on_repeated_posts() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    prob = np.clip(0.3 * y + rng.random(300) * 0.7, 0, 1)
    times = rng.integers(1, 5, 300)
    for objective in ("f1", "macro_f1"):
        weighted = choose_threshold(y, prob, objective, weights=times.astype(float))
        assert weighted == choose_threshold(np.repeat(y, times), np.repeat(prob, times), objective)
    assert choose_threshold(y, prob, "macro_f1", weights=np.ones(300)) == choose_threshold(y, prob, "macro_f1")
    with pytest.raises(ValueError, match="weights must be 300 positive numbers"):
        choose_threshold(y, prob, weights=np.zeros(300))


def test_source_class_weights_make_each_cell_count_as_much() -> None:
    sources = ["a"] * 8 + ["b"] * 2
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0, 1, 0])
    weights = source_class_weights(sources, y)
    cells = {
        (s, c): weights[[i for i in range(10) if sources[i] == s and y[i] == c]].sum() for s in "ab" for c in (0, 1)
    }
    assert np.allclose(list(cells.values()), 2.5) and np.isclose(weights.mean(), 1.0)

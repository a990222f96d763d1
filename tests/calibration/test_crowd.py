"""Weighing the crowd's corrections by cross-validation over groups (``faim.calibration.crowd``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from faim.calibration.crowd import crowd_correction_weight, fit_correction_weight, held_out_logits


def test_held_out_logits_come_from_a_model_fitted_on_the_other_groups() -> None:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(200, 3))
    y = (features[:, 0] + rng.normal(size=200) > 0).astype(int)
    folds = np.where(np.arange(200) < 80, "storm", "eclipse")
    logits = held_out_logits(features, y, folds)
    storm = folds == "storm"
    fitted_elsewhere = LogisticRegression(max_iter=2000).fit(features[~storm], y[~storm])
    assert np.allclose(logits[storm], fitted_elsewhere.decision_function(features[storm]))
    with pytest.raises(ValueError, match="at least two groups"):
        held_out_logits(features, y, ["storm"] * 200)


def test_a_fold_whose_other_posts_hold_one_class_gets_that_classs_smoothed_share() -> None:
    features = np.random.default_rng(0).normal(size=(30, 2))
    y = np.array([1] * 10 + [0, 1] * 10)
    folds = ["all fake"] * 10 + ["mixed"] * 20
    logits = held_out_logits(features, y, folds)
    assert np.allclose(logits[10:], np.log(11 / 1))  # (10 + 1) / (10 + 2) against 1 / 12


def test_the_weight_of_evidence_that_moves_the_labels_is_recovered_and_kept() -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=4000)
    evidence = np.where(rng.random(4000) < 0.2, np.log1p(100 * rng.random(4000)), 0.0)
    y = (rng.random(4000) < expit(logits + 1.5 * evidence)).astype(int)
    assert fit_correction_weight(logits, y, evidence, level=0.05) == pytest.approx(1.5, abs=0.3)


def test_evidence_unrelated_to_the_labels_is_weighed_nothing_at_five_percent() -> None:
    kept = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        logits = rng.normal(size=500)
        y = (rng.random(500) < expit(logits)).astype(int)
        evidence = np.where(rng.random(500) < 0.1, 2.0, 0.0)
        kept += fit_correction_weight(logits, y, evidence, level=0.05) > 0
    assert kept <= 5  # the one-sided test keeps a weight on about 5 % of such samples


def test_a_picture_shown_by_many_posts_counts_once_in_the_test() -> None:
    kept = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        pictures = np.repeat(np.arange(100), 20)  # 100 pictures, twenty posts each, one label and one logit each
        logits = rng.normal(size=100)[pictures]
        y = (rng.random(100) < expit(logits[::20]))[pictures].astype(int)
        evidence = np.where(rng.random(100) < 0.2, 2.0, 0.0)[pictures]  # unrelated to the labels
        kept += fit_correction_weight(logits, y, evidence, level=0.05, groups=pictures) > 0
    assert kept <= 5  # counted post by post, about a third of such samples keep a weight


def test_crowd_corrections_that_mark_fake_pictures_earn_a_weight_that_unrelated_ones_do_not() -> None:
    rng = np.random.default_rng(2)
    pictures = np.repeat(np.arange(300), 10)  # 300 pictures, ten posts each
    fake = rng.random(300) < 0.5
    y = fake[pictures].astype(int)
    features = rng.normal(size=(3000, 4)) + 0.3 * y[:, None]  # weak text evidence
    events = pictures % 6
    marked = rng.random(3000) < np.where(y == 1, 0.15, 0.01)
    shown = np.ones(3000, dtype=bool)
    fit = crowd_correction_weight(features, y, events, pictures, marked, shown, level=0.05)
    assert fit.weight > 0.5 and fit.temperature > 0
    unrelated = rng.random(3000) < 0.08
    assert crowd_correction_weight(features, y, events, pictures, unrelated, shown, level=0.05).weight == 0.0
    unshown = np.zeros(3000, dtype=bool)  # posts without pictures: no crowd, no evidence, no weight
    assert crowd_correction_weight(features, y, events, pictures, marked, unshown, level=0.05).weight == 0.0

"""Calibration of a detector on validation posts: temperature, optional logit shift, threshold; tasks without labels
keep theirs. Scores and embeddings come back in input order whatever order the posts are batched in."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import calibrated, check_rows_in_input_order, pooling_detector
from scipy.special import expit, logit

from faim import Detector
from faim.inference import predict
from faim.recipe.sections import EvalConfig
from faim.training.loaders import make_loader


def test_without_logit_shift_only_the_temperature_is_fitted(demo_data, tmp_path: Path) -> None:
    detector, _ = calibrated(demo_data, tmp_path, logit_shift=False)
    assert detector.logit_shifts["harmful"] == 0.0 and detector.temperatures["harmful"] != 1.0


def test_logit_shift_is_fitted_and_moves_every_score_by_it(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=True)
    shift = detector.logit_shifts["harmful"]
    assert shift != 0.0
    shifted = np.array([row["harmful"] for row in detector.score(posts)])
    detector.logit_shifts["harmful"] = 0.0
    plain = np.array([row["harmful"] for row in detector.score(posts)])
    assert shifted == pytest.approx(expit(logit(plain) + shift), abs=1e-5)


def test_calibrating_on_posts_without_a_tasks_labels_keeps_both_its_calibrations(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    per_post, pooled = detector.calibration.copy(), detector.pooled.copy()
    unlabelled = [replace(post, labels={}) for post in posts]
    loader = make_loader(detector.model, detector.collator(with_targets=True), unlabelled, 32, shuffle=False)
    predictions = predict(detector.model, loader, link_kind=detector.pooling_kind)
    detector.calibrate_predictions(predictions, EvalConfig(pool_by_image=1.0, logit_shift=True))
    assert detector.calibration == per_post and detector.pooled == pooled
    assert pooled.temperatures["harmful"] != 1.0  # a fitted calibration, not the identity


def test_posts_batched_shortest_text_first_come_back_in_input_order(exported: tuple[Path, Path]) -> None:
    check_rows_in_input_order(Detector.load(exported[0]))

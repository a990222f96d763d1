"""Calibration of a detector on validation posts: temperature, optional logit shift, threshold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import tiny_recipe
from scipy.special import expit, logit

import faim
from faim.data.sources import read_posts
from faim.evaluate import calibrate
from faim.training.loaders import make_loader


def calibrated(demo_data: dict[str, Path], tmp_path: Path, logit_shift: bool) -> tuple[faim.Detector, list]:
    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"logit_shift": logit_shift}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    calibrate(detector, loader)
    return detector, posts


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

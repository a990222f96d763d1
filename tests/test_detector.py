"""Calibration of a detector on validation posts: temperature, optional logit shift, threshold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import calibrated
from scipy.special import expit, logit


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

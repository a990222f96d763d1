"""The input checks of the metric functions (``faim.calibration.checks``)."""

from __future__ import annotations

import numpy as np
import pytest

from faim.calibration.checks import check_probabilities


@pytest.mark.parametrize(("prob", "said"), [([0.2, np.nan], "1 value"), ([1.5, -0.1, 0.3], "2 values")])
def test_probabilities_out_of_range_are_counted(prob: list[float], said: str) -> None:
    with pytest.raises(ValueError, match=rf"^scores must hold probabilities in \[0, 1\]; NaN or out of range: {said}$"):
        check_probabilities(np.array(prob), "scores")

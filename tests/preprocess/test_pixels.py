"""A square centre crop of pictures refuses, as it is built, a resampling filter Pillow has not."""

from __future__ import annotations

import pytest

from faim.preprocess.pixels import CentreCrop


def test_a_filter_pillow_has_not_is_refused_as_the_crop_is_built_naming_those_it_has() -> None:
    with pytest.raises(ValueError, match=r"interpolation 'bilnear' is not a resampling filter; valid: nearest, box, "):
        CentreCrop(8, (0.5,) * 3, (0.5,) * 3, "bilnear")
    assert CentreCrop(8, (0.5,) * 3, (0.5,) * 3, "BICUBIC").interpolation == "BICUBIC"  # Pillow's own, in any case

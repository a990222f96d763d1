"""A square centre crop of pictures refuses, as it is built, a resampling filter Pillow or timm has not."""

from __future__ import annotations

import re

import pytest
from PIL import Image

from faim.preprocess.pixels import INTERPOLATIONS, CentreCrop

VALID = "valid: nearest, box, bilinear, hamming, bicubic, lanczos"


@pytest.mark.parametrize("interpolation", ["bilnear", "mks2013", "MKS2021"])
def test_a_filter_pillow_or_timm_has_not_is_refused_as_the_crop_is_built_naming_those_both_have(
    interpolation: str,
) -> None:
    refusal = f"interpolation {interpolation!r} is not a resampling filter; {VALID}"
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
        CentreCrop(8, (0.5,) * 3, (0.5,) * 3, interpolation)
    assert CentreCrop(8, (0.5,) * 3, (0.5,) * 3, "BICUBIC").interpolation == "BICUBIC"  # Pillow's own, in any case


def test_every_filter_there_is_is_pillows_and_timms() -> None:
    from timm.data.transforms import str_to_pil_interp

    assert all(str_to_pil_interp(name) == Image.Resampling[name.upper()] for name in INTERPOLATIONS)

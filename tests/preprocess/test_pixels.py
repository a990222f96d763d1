"""A square centre crop of pictures refuses, as it is built, a resampling filter Pillow or timm has not and numbers
no crop is made with."""

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


@pytest.mark.parametrize(
    ("numbers", "refusal"),
    [
        ({"size": 0}, "size 0 is not a whole number of pixels above 0"),
        ({"size": 8.5}, "size 8.5 is not a whole number of pixels above 0"),
        ({"mean": (0.5,)}, "mean [0.5] is not 3 numbers, one per RGB channel"),
        ({"std": (0.5, "x", 0.5)}, "std [0.5, 'x', 0.5] is not 3 numbers, one per RGB channel"),
        ({"std": (0.5, 0.0, 0.5)}, "std [0.5, 0.0, 0.5] is not 3 numbers above 0"),
        ({"crop_pct": "wide"}, "crop_pct 'wide' is not a number above 0"),
        ({"crop_pct": 0}, "crop_pct 0 is not a number above 0"),
        ({"crop_pct": True}, "crop_pct True is not a number above 0"),
    ],
)
def test_numbers_no_crop_is_made_with_are_refused_as_the_crop_is_built_naming_them(numbers: dict, refusal: str) -> None:
    settings = {"size": 8, "mean": (0.5,) * 3, "std": (0.5,) * 3, "crop_pct": 0.875} | numbers
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
        CentreCrop(**settings)


def test_every_filter_there_is_is_pillows_and_timms() -> None:
    from timm.data.transforms import str_to_pil_interp

    assert all(str_to_pil_interp(name) == Image.Resampling[name.upper()] for name in INTERPOLATIONS)

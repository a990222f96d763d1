"""The one-resize centre crop gives timm's eval transform within a few pixel levels, channels-last; a crop mode or a
filter there is not is refused as the preprocessor is built, without timm."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
from PIL import Image

from faim import registry
from faim.encoders.image_preprocess import ImagePreprocessor


def photo(width: int, height: int, seed: int, mode: str = "RGB") -> Image.Image:
    """A smooth random picture (photos are smooth at the scale of a pixel), in ``mode``."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (height // 8 + 1, width // 8 + 1, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize((width, height), Image.Resampling.BILINEAR).convert(mode)


@pytest.mark.parametrize("interpolation", ["bicubic", "bilinear"])
def test_one_resize_crop_matches_timm_transform(interpolation: str) -> None:
    preprocess = ImagePreprocessor((224, 224), (0.5, 0.4, 0.3), (0.2, 0.25, 0.3), interpolation, crop_pct=0.875)
    assert preprocess.crops_in_one_resize
    sources = [photo(1342, 702, 0), photo(470, 423, 1), photo(273, 512, 2), photo(120, 90, 3), photo(300, 300, 4, "L")]
    fast = preprocess(sources)
    reference = torch.stack([preprocess.transform(image.convert("RGB")) for image in sources])
    assert fast.shape == reference.shape == (5, 3, 224, 224)
    assert fast.is_contiguous(memory_format=torch.channels_last)
    difference = (fast - reference).abs() * torch.tensor(preprocess.std).view(1, 3, 1, 1) * 255  # in pixel levels
    assert difference.mean() < 0.05 and difference.max() <= 3


def test_other_crop_modes_run_timm_transform_unchanged() -> None:
    preprocess = ImagePreprocessor((64, 48), (0.5,) * 3, (0.5,) * 3, "bilinear", crop_pct=1.0, crop_mode="squash")
    assert not preprocess.crops_in_one_resize
    image = photo(100, 30, 5)
    assert torch.equal(preprocess([image])[0], preprocess.transform(image))


NOT_A_FILTER = "is not a resampling filter; valid: nearest, box, bilinear, hamming, bicubic, lanczos"
"""How a filter there is not is refused, naming the resampling filters both Pillow and timm take."""


@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        ({"crop_mode": "centre"}, "crop_mode 'centre' is not a crop mode of timm's; valid: center, squash, border"),
        ({"interpolation": "bilnear"}, f"interpolation 'bilnear' {NOT_A_FILTER}"),
        ({"crop_mode": "squash", "interpolation": "cubic"}, f"interpolation 'cubic' {NOT_A_FILTER}"),
        ({"interpolation": "mks2013"}, f"interpolation 'mks2013' {NOT_A_FILTER}"),
    ],
)
def test_a_crop_mode_or_filter_there_is_not_is_refused_as_the_preprocessor_is_built_without_timm(
    monkeypatch: pytest.MonkeyPatch, given: dict[str, str], refusal: str
) -> None:
    for name in ["timm", *(name for name in sys.modules if name.startswith("timm."))]:
        monkeypatch.setitem(sys.modules, name, None)  # importing timm fails
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
        ImagePreprocessor((24, 32), (0.5,) * 3, (0.5,) * 3, **given)
    ImagePreprocessor((24, 32), (0.5,) * 3, (0.5,) * 3, "BICUBIC", crop_mode="border")  # Pillow's name: any case


def test_a_filter_named_in_pillows_case_runs_timms_transform_too() -> None:
    preprocess = ImagePreprocessor((24, 32), (0.5,) * 3, (0.5,) * 3, "BICUBIC")
    assert not preprocess.crops_in_one_resize
    assert preprocess([photo(50, 40, 6)]).shape == (1, 3, 24, 32)


def test_a_saved_model_with_a_crop_mode_there_is_not_is_warned_of_and_crops_as_it_was_trained() -> None:
    warned = pytest.warns(registry.SavedModelWarning, match="saved: crop_mode 'centre'")
    with registry.rebuilding_saved("saved"), warned:
        preprocess = ImagePreprocessor((24, 32), (0.5,) * 3, (0.5,) * 3, crop_mode="centre")
    image = photo(50, 40, 7)
    centre = ImagePreprocessor((24, 32), (0.5,) * 3, (0.5,) * 3, crop_mode="center")
    assert torch.equal(preprocess([image]), centre([image]))


def test_a_saved_models_preprocessor_with_a_crop_mode_there_is_not_pickles_without_a_word() -> None:
    """Data-loading workers get the preprocessor pickled: it is neither refused nor warned of again there."""
    with registry.rebuilding_saved("saved"), pytest.warns(registry.SavedModelWarning):
        preprocess = ImagePreprocessor((24, 32), (0.5,) * 3, (0.5,) * 3, crop_mode="centre")
    image = photo(50, 40, 8)
    cropped = preprocess([image])  # builds timm's transform, which is not pickled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        copy = pickle.loads(pickle.dumps(preprocess))
    assert "transform" not in vars(copy)
    assert copy.to_dict() == preprocess.to_dict()
    assert torch.equal(copy([image]), cropped)


LOADS_TIMM = """
import sys
from PIL import Image
from faim.encoders.image_preprocess import ImagePreprocessor

preprocess = ImagePreprocessor((32, {width}), (0.5,) * 3, (0.5,) * 3)
preprocess([Image.new("RGB", (50, 40))])
print("timm" in sys.modules)
"""


@pytest.mark.slow
@pytest.mark.parametrize(("width", "loads_timm"), [(32, False), (24, True)])
def test_only_crops_other_than_square_centre_ones_import_timm(width: int, loads_timm: bool) -> None:
    """Building and running a square centre crop (``tiny_image``'s, most timm models') needs Pillow and numpy alone."""
    code = LOADS_TIMM.format(width=width)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(loads_timm)]

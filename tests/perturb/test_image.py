"""Image perturbations: seeded, pure, keep size and mode, and change the image as much as they claim."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from PIL import Image

from faim.perturb.image import crop, jpeg, overlay, resize

ImageFn = Callable[[Image.Image, random.Random, float], Image.Image]
CASES = [(jpeg, 20), (resize, 0.5), (crop, 0.8), (overlay, 0.05)]


def _photo(mode: str = "RGB", size: tuple[int, int] = (96, 64)) -> Image.Image:
    """A smooth gradient with a little texture, in ``mode``."""
    x, y = np.meshgrid(np.linspace(0, 1, size[0]), np.linspace(0, 1, size[1]))
    texture = 0.1 * np.sin(x * 40) * np.cos(y * 30)
    rgb = np.stack([x, y, (x + y) / 2], -1) * 0.8 + texture[..., None] + 0.1
    return Image.fromarray((rgb.clip(0, 1) * 255).astype(np.uint8)).convert(mode)


def _pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.int16)


@pytest.mark.parametrize(("fn", "strength"), CASES)
@pytest.mark.parametrize("mode", ["RGB", "L", "RGBA"])
def test_size_and_mode_are_kept_and_input_untouched(fn: ImageFn, strength: float, mode: str) -> None:
    image = _photo(mode)
    before = image.tobytes()
    out = fn(image, random.Random(0), strength)
    assert out.size == image.size and out.mode == mode
    assert image.tobytes() == before
    assert not np.array_equal(_pixels(out), _pixels(image))


@pytest.mark.parametrize(("fn", "strength"), CASES)
def test_same_seed_same_output(fn: ImageFn, strength: float) -> None:
    image = _photo()
    assert fn(image, random.Random(5), strength).tobytes() == fn(image, random.Random(5), strength).tobytes()


@pytest.mark.parametrize(("fn", "strength"), [(crop, 0.8), (overlay, 0.05)])
def test_other_seed_differs(fn: ImageFn, strength: float) -> None:
    image = _photo()
    assert fn(image, random.Random(5), strength).tobytes() != fn(image, random.Random(6), strength).tobytes()


def test_low_quality_jpeg_changes_pixels_but_stays_close() -> None:
    image = _photo()
    difference = np.abs(_pixels(jpeg(image, random.Random(0), 10)) - _pixels(image))
    assert difference.max() > 0 and difference.mean() < 8


def test_resize_loses_detail_but_stays_close_and_scale_one_is_identity() -> None:
    image = _photo()
    difference = np.abs(_pixels(resize(image, random.Random(0), 0.25)) - _pixels(image))
    assert difference.max() > 0 and difference.mean() < 20
    assert resize(image, random.Random(0), 1.0).tobytes() == image.tobytes()


def test_crop_keeping_everything_is_identity() -> None:
    image = _photo()
    assert crop(image, random.Random(0), 1.0).tobytes() == image.tobytes()


@pytest.mark.parametrize("seed", range(5))
def test_overlay_touches_one_small_rectangle(seed: int) -> None:
    image = _photo()
    changed = (_pixels(overlay(image, random.Random(seed), 0.05)) != _pixels(image)).any(-1)
    rows, cols = np.nonzero(changed)
    assert 0 < changed.mean() <= 0.06
    box = changed[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    assert box.mean() > 0.9  # one filled rectangle (a blended pixel may round back to its old value)
    assert overlay(image, random.Random(seed), 0.0).tobytes() == image.tobytes()


@pytest.mark.parametrize(("fn", "strength"), [(jpeg, 0), (jpeg, 100), (resize, 0), (crop, 1.2), (overlay, -0.1)])
def test_strength_out_of_range_raises(fn: ImageFn, strength: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        fn(_photo(), random.Random(0), strength)

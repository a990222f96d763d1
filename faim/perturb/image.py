"""Image perturbations that re-uploads and evaders cause: recompression, rescaling, cropping and stickers.

Every function has the signature ``(image, rng, strength) -> image``: it is pure (the input is never modified),
draws all its randomness from ``rng`` (so a seeded ``random.Random`` gives the same output every time), and returns
an image of the input's size and mode. The meaning of ``strength`` differs per function; each raises ``ValueError``
for a strength outside its range.
"""

from __future__ import annotations

import io
import random

from PIL import Image, ImageDraw


def jpeg(image: Image.Image, rng: random.Random, quality: float) -> Image.Image:
    """Re-encode as JPEG and decode again, as an upload pipeline does.

    Args:
        image: The image; modes JPEG cannot store (``RGBA``, ``P``, …) go through RGB, so transparency is lost.
        rng: Unused (JPEG is deterministic); kept so every perturbation has the same signature.
        quality: JPEG quality from 1 (worst) to 95, rounded to an integer.
    """
    if not 1 <= quality <= 95:
        raise ValueError(f"JPEG quality must be between 1 and 95, got {quality}")
    buffer = io.BytesIO()
    source = image if image.mode in ("RGB", "L") else image.convert("RGB")
    source.save(buffer, format="JPEG", quality=round(quality))
    with Image.open(buffer) as decoded:
        return decoded.convert(image.mode)


def resize(image: Image.Image, rng: random.Random, scale: float) -> Image.Image:
    """Shrink each side by ``scale`` (in ``(0, 1]``) and enlarge back to the original size, losing fine detail.

    ``rng`` is unused (the operation is deterministic); it is kept so every perturbation has the same signature.
    """
    if not 0.0 < scale <= 1.0:
        raise ValueError(f"resize scale must be in (0, 1], got {scale}")
    small = image.resize(_scaled(image.size, scale), Image.Resampling.BILINEAR)
    return small.resize(image.size, Image.Resampling.BILINEAR)


def crop(image: Image.Image, rng: random.Random, keep: float) -> Image.Image:
    """Cut out a window of ``keep`` (in ``(0, 1]``) times each side at a random position; stretch it back to size."""
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"crop keep fraction must be in (0, 1], got {keep}")
    width, height = _scaled(image.size, keep)
    left, top = rng.randint(0, image.width - width), rng.randint(0, image.height - height)
    return image.resize(image.size, Image.Resampling.BILINEAR, box=(left, top, left + width, top + height))


def overlay(image: Image.Image, rng: random.Random, area: float) -> Image.Image:
    """Paste a semi-transparent rectangle of a random colour covering about ``area`` (in ``[0, 1]``) of the image.

    The rectangle has the image's aspect ratio and a random position; it blends at 60% opacity, like a sticker or
    caption box put over a meme. Pixels outside it are unchanged.
    """
    if not 0.0 <= area <= 1.0:
        raise ValueError(f"overlay area must be in [0, 1], got {area}")
    if area == 0:
        return image.copy()
    width, height = _scaled(image.size, area**0.5)
    left, top = rng.randint(0, image.width - width), rng.randint(0, image.height - height)
    colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256), 153)
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    ImageDraw.Draw(layer).rectangle((left, top, left + width - 1, top + height - 1), fill=colour)
    return Image.alpha_composite(image.convert("RGBA"), layer).convert(image.mode)


def _scaled(size: tuple[int, int], factor: float) -> tuple[int, int]:
    """Both sides of ``size`` times ``factor``, rounded, at least one pixel."""
    return max(1, round(size[0] * factor)), max(1, round(size[1] * factor))

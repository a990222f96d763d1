"""Perturb posts the way evaders do: every named perturbation (``PERTURBATIONS``) over a post's text and comments
or its pictures, seeded per post. Training augments with them (``train.augment``); evaluation measures how far
each one moves a model's metrics (``faim.eval.robustness``)."""

from __future__ import annotations

import copy
import difflib
import io
import random
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from faim.data.images import ImageError, ImageRef, load_image
from faim.data.post import Post
from faim.perturb import image as perturb_image
from faim.perturb import text as perturb_text


@dataclass(frozen=True)
class Perturbation:
    """One perturbation: ``fn(value, rng, strength)`` over a text (``str``) or an image (``PIL.Image``).

    Attributes:
        fn: The pure, seeded function from :mod:`faim.perturb.text` or :mod:`faim.perturb.image`.
        strength: Default strength: the rate of touched words/characters for text, the JPEG quality, the resize
            scale, the crop's kept side fraction or the overlay's area fraction for images.
        modality: ``"text"`` (applied to the text and every comment) or ``"image"`` (applied to every image).
    """

    fn: Callable[[Any, random.Random, float], Any]
    strength: float
    modality: Literal["text", "image"]


PERTURBATIONS: dict[str, Perturbation] = {
    "text.char_swap": Perturbation(perturb_text.char_swap, 0.3, "text"),
    "text.leetspeak": Perturbation(perturb_text.leetspeak, 0.3, "text"),
    "text.spaces": Perturbation(perturb_text.insert_spaces, 0.3, "text"),
    "text.homoglyphs": Perturbation(perturb_text.homoglyphs, 0.3, "text"),
    "image.jpeg": Perturbation(perturb_image.jpeg, 20, "image"),
    "image.resize": Perturbation(perturb_image.resize, 0.5, "image"),
    "image.crop": Perturbation(perturb_image.crop, 0.8, "image"),
    "image.overlay": Perturbation(perturb_image.overlay, 0.05, "image"),
}
"""Every perturbation by name, with its default strength."""


def perturbations_of(modalities: Collection[str]) -> list[str]:
    """The names of the perturbations of ``modalities`` (``"text"``, ``"image"``), in ``PERTURBATIONS`` order."""
    return [name for name, perturbation in PERTURBATIONS.items() if perturbation.modality in modalities]


def perturb_posts(posts: list[Post], name: str, seed: int = 0, strength: float | None = None) -> list[Post]:
    """Return perturbed copies of ``posts``; the inputs are never modified.

    A text perturbation changes the text and every comment; an image perturbation changes every image, which
    is stored in the copy as PNG bytes (lossless, so only the perturbation changes pixels). An image that cannot
    be loaded keeps its original reference, so evaluation reports its error as usual. Each post draws from its
    own generator seeded by ``seed`` and its ``id``: its perturbation does not depend on the other posts.

    Args:
        posts: The posts to perturb.
        name: A key of ``PERTURBATIONS``.
        seed: Seed of the random choices; the same seed gives the same output.
        strength: Overrides the perturbation's default strength.

    Raises:
        ValueError: For an unknown name (listing the valid ones), or a strength outside the function's range (raised
            when the function first runs, so not for posts that have nothing to perturb).
    """
    perturbation = get_perturbation(name)
    level = perturbation.strength if strength is None else strength
    result: list[Post] = []
    for post in posts:
        rng = random.Random(f"{seed}:{post.id}")
        new = copy.deepcopy(post)
        if perturbation.modality == "text":
            new.text = perturbation.fn(post.text, rng, level) if post.text else post.text
            new.comments = [perturbation.fn(comment, rng, level) for comment in post.comments]
        else:
            new.images = [_perturb_image(ref, post, perturbation.fn, rng, level) for ref in post.images]
        result.append(new)
    return result


def check_augmentation(probabilities: Mapping[str, float]) -> None:
    """Check a ``train.augment`` mapping: known perturbation names, each with a probability in [0, 1].

    Raises:
        ValueError: Naming the unknown perturbation (and the valid ones) or the probability out of range.
    """
    for name, probability in probabilities.items():
        get_perturbation(name)
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"augmentation {name!r}: probability must be between 0 and 1, got {probability}")


def get_perturbation(name: str) -> Perturbation:
    """The perturbation called ``name``; raises ``ValueError`` naming the valid ones (and the closest match)."""
    if name in PERTURBATIONS:
        return PERTURBATIONS[name]
    close = difflib.get_close_matches(name, PERTURBATIONS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"unknown perturbation {name!r}{hint}; valid: {', '.join(PERTURBATIONS)}")


def _perturb_image(
    ref: ImageRef, post: Post, fn: Callable[[Any, random.Random, float], Any], rng: random.Random, strength: float
) -> ImageRef:
    """The perturbed image as PNG bytes, or ``ref`` unchanged when it cannot be loaded."""
    try:
        image = load_image(ref, post.image_root)
    except ImageError:
        return ref
    buffer = io.BytesIO()
    fn(image, rng, strength).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()

"""Evasion-style perturbations of posts: typos, leetspeak, spaced-out words and look-alike characters in text;
recompression, rescaling, cropping and stickers on pictures (``faim.perturb.text``, ``faim.perturb.image``)."""

from faim.perturb.posts import (
    PERTURBATIONS,
    Perturbation,
    check_augmentation,
    get_perturbation,
    perturb_posts,
    perturbations_of,
)

__all__ = [
    "PERTURBATIONS",
    "Perturbation",
    "check_augmentation",
    "get_perturbation",
    "perturb_posts",
    "perturbations_of",
]

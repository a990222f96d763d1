"""Pooling across posts that share a picture: groups, group-mean logits, and scoring a set of posts pooled."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import pooling_detector, shared_picture_posts, tiny_recipe

import faim
from faim.calibration.fit import Calibration
from faim.data.elements import PostError
from faim.eval.evaluate import evaluate
from faim.inference import predict
from faim.pooling import picture_groups, pooled, pooled_logits
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
    pictureless = [row for row, post in zip(rows, posts) if not post.images]
    assert pictureless and all(row["picture_group"] is None for row in pictureless)  # as faim score writes null
    assert all(isinstance(row["picture_group"], int) for row, post in zip(rows, posts) if post.images)
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


def test_pooled_logits_gain_the_weighted_share_of_posts_that_question_or_correct_their_picture() -> None:
    logits = {"fake": np.array([1.0, 3.0, -1.0, 0.5, 0.2]), "topic": np.zeros((5, 3))}
    groups = np.array([0, 0, 1, 1, 2])
    corrections = np.array([True, False, False, False, True])
    has_picture = np.array([True, True, True, True, False])  # the last post shows no picture
    together = pooled_logits(logits, groups, {"fake": 2.0}, corrections, has_picture)
    assert np.allclose(together["fake"], [2.0 + 2.0 * np.log1p(50.0)] * 2 + [-0.25] * 2 + [0.2])
    assert np.array_equal(together["topic"], logits["topic"])
    assert np.allclose(pooled_logits(logits, groups, {}, None, None)["fake"], [2.0, 2.0, -0.25, -0.25, 0.2])
    with pytest.raises(ValueError, match="weighs the crowd's corrections for fake"):
        pooled_logits(logits, groups, {"fake": 2.0}, None, None)


def test_scoring_pooled_raises_the_groups_whose_posts_question_their_picture(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    for post in posts[::8]:
        post.text = f"{post.text} is this real?"
    before = detector.score(posts, pool_by_image=True)
    detector.pooled.correction_weights = {"harmful": 1.0}
    after = detector.score(posts, pool_by_image=True)
    asking = [post.text.endswith("is this real?") for post in posts]
    marked = {row["picture_group"] for row, post, asks in zip(after, posts, asking) if asks and post.images}
    assert marked and any(asks and not post.images for post, asks in zip(posts, asking))
    moved = [a["harmful"] - b["harmful"] for a, b in zip(after, before)]
    assert all(m > 0.01 for m, row in zip(moved, after) if row["picture_group"] in marked)
    assert all(abs(m) < 1e-9 for m, row in zip(moved, after) if row["picture_group"] not in marked)  # no picture: none


def test_a_post_showing_only_a_picture_is_scored_pooled_by_a_model_fusing_its_text_alone(
    demo_data, tmp_path: Path
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"pool_by_image": 1.0}
    recipe["model"]["fusion"] = {"type": "concat", "kinds": ["text"]}  # the picture links posts, as faim score reads it
    detector = faim.build(recipe)
    detector.pooled = Calibration.identity(detector.tasks)
    posts = [post for post in shared_picture_posts(demo_data)[:8] if post.images and post.text]
    picture_only = replace(posts[0], id="picture-only", text=None, comments=[])
    rows = detector.score([*posts, picture_only], pool_by_image=True)
    assert rows[-1]["id"] == "picture-only" and rows[-1]["picture_group"] == rows[0]["picture_group"]
    assert detector.readable([picture_only], pool_by_image=True) == ([picture_only], [])
    with pytest.raises(PostError, match="nothing the model reads"):
        detector.score([picture_only])  # one by one, the model reads its text alone

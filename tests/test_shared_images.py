"""Pooling evidence across posts that share a picture: near-duplicate groups and group means."""

from __future__ import annotations

import numpy as np
import pytest

from faim.shared_images import correction_evidence, pool_by_group, shared_image_groups


def unit(angle_degrees: float) -> list[float]:
    angle = np.radians(angle_degrees)
    return [np.cos(angle), np.sin(angle), 0.0]


def test_identical_and_near_duplicate_pictures_share_a_group_distinct_ones_do_not() -> None:
    embeddings = np.array([unit(0), unit(0), unit(5), unit(60), unit(60.5)]) * [[1], [3], [1], [2], [1]]
    groups = shared_image_groups(embeddings, np.ones(5, bool), min_cosine=0.99)  # cos(5°) = 0.996
    assert groups[0] == groups[1] == groups[2]  # scale does not matter: cosine
    assert groups[3] == groups[4] != groups[0]


def test_links_are_transitive() -> None:
    embeddings = np.array([unit(0), unit(7), unit(14)])  # 0-7 and 7-14 linked at cos(7°) = 0.993; 0-14 not
    groups = shared_image_groups(embeddings, np.ones(3, bool), min_cosine=0.99)
    assert len(set(groups)) == 1


def test_posts_without_a_picture_stay_alone_whatever_their_row_holds() -> None:
    embeddings = np.array([unit(0), [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], unit(0), [np.nan] * 3])
    present = np.array([True, False, False, True, False])
    groups = shared_image_groups(embeddings, present, min_cosine=0.9)
    assert groups[0] == groups[3]
    assert len({groups[1], groups[2], groups[4], groups[0]}) == 4


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="min_cosine"):
        shared_image_groups(np.ones((2, 3)), np.ones(2, bool), min_cosine=0.0)
    with pytest.raises(ValueError, match=r"\[N, d\]"):
        shared_image_groups(np.ones((2, 3)), np.ones(3, bool), min_cosine=0.9)
    with pytest.raises(ValueError, match="finite"):
        shared_image_groups(np.array([[np.nan, 1.0]]), np.ones(1, bool), min_cosine=0.9)


def test_pooling_takes_the_group_mean_of_binary_and_multiclass_logits() -> None:
    groups = np.array([7, 3, 7, 9])
    assert pool_by_group(np.array([1.0, 5.0, 3.0, -2.0]), groups).tolist() == [2.0, 5.0, 2.0, -2.0]
    pooled = pool_by_group(np.array([[1.0, 0.0], [0.0, 0.0], [3.0, 2.0], [1.0, 1.0]]), groups)
    assert pooled.tolist() == [[2.0, 1.0], [0.0, 0.0], [2.0, 1.0], [1.0, 1.0]]
    with pytest.raises(ValueError, match="one row per post"):
        pool_by_group(np.zeros(3), groups)


def test_correction_evidence_is_the_log_of_one_plus_a_groups_percentage_of_correcting_posts() -> None:
    groups = np.array([0, 0, 0, 0, 1, 1, 2, 3])
    corrections = np.array([True, False, False, False, False, False, True, True])
    has_picture = np.array([True] * 7 + [False])
    evidence = correction_evidence(corrections, groups, has_picture)
    assert np.allclose(evidence[:4], np.log1p(25.0))
    assert np.allclose(evidence[4:6], 0.0)
    assert evidence[6] == pytest.approx(np.log1p(100.0))  # the one post showing its picture
    assert evidence[7] == 0.0  # a post without a picture: no crowd shares it
    with pytest.raises(ValueError, match="one row per post"):
        correction_evidence(corrections[:3], groups, has_picture)

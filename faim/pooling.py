"""Pooling evidence across posts that share a picture (``eval.pool_by_image``).

Posts whose first pictures embed as near-duplicates (the model's image encoder, cosine at least the recipe's
``eval.pool_by_image``) form a group, and each post takes its group's mean logits before calibration. Evaluation
pools this way when the recipe says so (``faim.evaluate``); ``Detector.score(posts, pool_by_image=True)`` scores a
set of posts the same way, so a post's score depends on the other posts given with it, and
``score_dump(..., pool_by_image=True)`` a whole dump (``faim.scoring.pool_parts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from faim.data.post import Post, as_posts
from faim.eval.shared_images import pool_by_group, shared_image_groups
from faim.training.loaders import make_loader
from faim.training.predict import Predictions, predict

if TYPE_CHECKING:
    from faim.detector import Detector


def picture_groups(detector: Detector, predictions: Predictions) -> np.ndarray:
    """Group id per post: posts whose pictures are near-duplicates (``eval.pool_by_image``) share one."""
    if predictions.link_embeddings is None or predictions.link_present is None:
        raise ValueError("pooling by shared picture needs predictions made with link_kind='image'")
    return shared_image_groups(
        predictions.link_embeddings, predictions.link_present, detector.eval_config.pool_by_image
    )


def pooled(predictions: Predictions, groups: np.ndarray) -> Predictions:
    """``predictions`` with every task's logits averaged over the posts of each group."""
    logits = {name: pool_by_group(values, groups) for name, values in predictions.logits.items()}
    return replace(predictions, logits=logits)


def pooled_probabilities(
    detector: Detector, logits: Mapping[str, np.ndarray], groups: np.ndarray
) -> dict[str, np.ndarray]:
    """Task → probabilities of the raw ``logits`` averaged over each group, under the pooled calibration."""
    means = {name: torch.from_numpy(pool_by_group(values, groups)) for name, values in logits.items()}
    return {name: value.numpy() for name, value in detector.probabilities(means, detector.pooled).items()}


def check_pooling(detector: Detector) -> None:
    """Raise ``ValueError`` unless ``detector`` can score posts pooled by picture (``eval.pool_by_image`` and a
    pooled calibration)."""
    if detector.pooling_kind is None:
        raise ValueError(f"{detector.source}: the recipe has no eval.pool_by_image; score its posts one by one")
    if detector.pooled is None:
        raise ValueError(f"{detector.source}: no calibration of pooled scores yet; train or calibrate the model first")


def score_pooled(
    detector: Detector, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64
) -> tuple[list[str], dict[str, np.ndarray], np.ndarray]:
    """``(ids, probabilities per task, group id per post)`` of posts scored together, pooled by shared picture
    under the detector's pooled calibration; a post without a picture is a group of its own.

    Raises:
        ValueError: When the recipe has no ``eval.pool_by_image``, or the detector has no pooled calibration yet.
        PostError: On a post that cannot be read.
    """
    check_pooling(detector)
    loader = make_loader(detector.model, detector.collator(), as_posts(list(posts)), batch_size, shuffle=False)
    predictions = predict(detector.model, loader, desc="scoring", link_kind=detector.pooling_kind)
    groups = picture_groups(detector, predictions)
    return predictions.ids, pooled_probabilities(detector, predictions.logits, groups), groups

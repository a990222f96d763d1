"""Pooling evidence across posts that share a picture (``eval.pool_by_image``).

Posts whose first pictures embed as near-duplicates (the model's image encoder, cosine at least the detector's
``pool_by_image``) form a group, and each post takes its group's mean logits before calibration; where the pooled
calibration has a correction weight for a task (``eval.crowd_corrections``), the group's share of posts that
question or correct the picture adds to that task's pooled logit (``faim.shared_images.correction_evidence``).
Evaluation pools this way when the recipe says so; ``Detector.score(posts, pool_by_image=True)`` scores a set of
posts the same way, so a post's score depends on the other posts given with it, and
``score_dump(..., pool_by_image=True)`` a whole dump (``faim.scoring.pool_parts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np

from faim.calibration.fit import Calibration
from faim.data.targets import TaskSpec
from faim.inference import Predictions
from faim.shared_images import correction_evidence, pool_by_group, shared_image_groups


def picture_groups(predictions: Predictions, min_cosine: float) -> np.ndarray:
    """Group id per post: posts whose pictures are near-duplicates (cosine at least ``min_cosine``) share one."""
    if predictions.link_embeddings is None or predictions.link_present is None:
        raise ValueError("pooling by shared picture needs predictions made with link_kind='image'")
    return shared_image_groups(predictions.link_embeddings, predictions.link_present, min_cosine)


def pooled_logits(
    logits: Mapping[str, np.ndarray],
    groups: np.ndarray,
    correction_weights: Mapping[str, float],
    corrections: np.ndarray | None,
    has_picture: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """Task → its ``logits`` averaged over each group, plus ``correction_weights[task]`` times the group's
    correction evidence (``correction_evidence``: none for a post without a picture) for a task with a weight.

    Raises:
        ValueError: When a task has a weight other than 0 and ``corrections`` (per post, whether it questions or
            corrects what it shares) or ``has_picture`` is ``None``.
    """
    weighted = {name: w for name, w in correction_weights.items() if w and name in logits}
    if weighted and (corrections is None or has_picture is None):
        raise ValueError(
            f"the pooled calibration weighs the crowd's corrections for {', '.join(weighted)}, but these predictions "
            "do not say which posts show a picture and which question or correct what they share"
        )
    evidence = correction_evidence(corrections, groups, has_picture) if weighted else None
    return {
        name: pool_by_group(values, groups) + (weighted[name] * evidence if name in weighted else 0.0)
        for name, values in logits.items()
    }


def pooled(
    predictions: Predictions, groups: np.ndarray, correction_weights: Mapping[str, float] | None = None
) -> Predictions:
    """``predictions`` with every task's logits pooled over the posts of each group (``pooled_logits``; no
    correction weights: group means alone)."""
    weights = correction_weights or {}
    logits = pooled_logits(predictions.logits, groups, weights, predictions.corrections, predictions.link_present)
    return replace(predictions, logits=logits)


def pooled_probabilities(
    tasks: Iterable[TaskSpec],
    calibration: Calibration,
    logits: Mapping[str, np.ndarray],
    groups: np.ndarray,
    corrections: np.ndarray | None,
    has_picture: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """Task → probabilities of the raw ``logits`` pooled over each group (``pooled_logits``, with the correction
    weights of ``calibration``), under ``calibration`` (the pooled one)."""
    pooled_values = pooled_logits(logits, groups, calibration.correction_weights, corrections, has_picture)
    return {task.name: calibration.probabilities(task, pooled_values[task.name]) for task in tasks}

"""Pooling evidence across posts that share a picture (``eval.pool_by_image``).

Posts whose first pictures embed as near-duplicates (the model's image encoder, cosine at least the detector's
``pool_by_image``) form a group, and each post takes its group's mean logits before calibration. Evaluation pools
this way when the recipe says so; ``Detector.score(posts, pool_by_image=True)`` scores a set of posts the same way,
so a post's score depends on the other posts given with it, and ``score_dump(..., pool_by_image=True)`` a whole
dump (``faim.scoring.pool_parts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np

from faim.calibration.fit import Calibration
from faim.data.targets import TaskSpec
from faim.inference import Predictions
from faim.shared_images import pool_by_group, shared_image_groups


def picture_groups(predictions: Predictions, min_cosine: float) -> np.ndarray:
    """Group id per post: posts whose pictures are near-duplicates (cosine at least ``min_cosine``) share one."""
    if predictions.link_embeddings is None or predictions.link_present is None:
        raise ValueError("pooling by shared picture needs predictions made with link_kind='image'")
    return shared_image_groups(predictions.link_embeddings, predictions.link_present, min_cosine)


def pooled(predictions: Predictions, groups: np.ndarray) -> Predictions:
    """``predictions`` with every task's logits averaged over the posts of each group."""
    logits = {name: pool_by_group(values, groups) for name, values in predictions.logits.items()}
    return replace(predictions, logits=logits)


def pooled_probabilities(
    tasks: Iterable[TaskSpec], calibration: Calibration, logits: Mapping[str, np.ndarray], groups: np.ndarray
) -> dict[str, np.ndarray]:
    """Task → probabilities of the raw ``logits`` averaged over each group, under ``calibration`` (the pooled one)."""
    return {task.name: calibration.probabilities(task, pool_by_group(logits[task.name], groups)) for task in tasks}

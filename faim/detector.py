"""``Detector``: a model plus its tasks, thresholds and temperatures — what users score posts with."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from faim.data.batch import PostBatch
from faim.data.collate import PostCollator, PostError
from faim.data.post import Post, as_posts
from faim.data.targets import TaskSpec
from faim.model import WholePostModel
from faim.recipe import Recipe
from faim.recipe.sections import EvalConfig, TrainConfig
from faim.training.predict import first_elements


@dataclass
class BatchScores:
    """One forward pass over a batch, as numpy, one row per post.

    Attributes:
        probabilities: Task → calibrated probabilities (per-post calibration).
        embeddings: Whole-post embeddings, ``[B, D]``.
        logits: Task → raw logits, before calibration (what pooling averages).
        links: With a link kind, each post's first element of it embedded, ``[B, d]`` (zeros where absent).
        link_present: With a link kind, whether each post has one, ``[B]`` bool.
    """

    probabilities: dict[str, np.ndarray]
    embeddings: np.ndarray
    logits: dict[str, np.ndarray]
    links: np.ndarray | None = None
    link_present: np.ndarray | None = None


@dataclass
class Calibration:
    """What turns a task's logits into calibrated probabilities and decisions, per task name.

    Attributes:
        thresholds: Decision threshold of each binary task on the calibrated probability.
        temperatures: Logit temperature of each task.
        logit_shifts: Shift added to a binary task's tempered logit.
    """

    thresholds: dict[str, float] = field(default_factory=dict)
    temperatures: dict[str, float] = field(default_factory=dict)
    logit_shifts: dict[str, float] = field(default_factory=dict)

    @classmethod
    def identity(cls, tasks: Iterable[TaskSpec]) -> Calibration:
        """Threshold 0.5, temperature 1 and no shift for every task."""
        tasks = list(tasks)
        return cls(
            {t.name: 0.5 for t in tasks if t.type == "binary"},
            {t.name: 1.0 for t in tasks},
            {t.name: 0.0 for t in tasks},
        )


class Detector:
    """A whole-post model ready to score posts.

    Args:
        model: The network.
        tasks: Task specs, one per head.
        recipe: The recipe it was built from (saved in artifacts). A model composed in code has none: it
            scores, embeds and evaluates, but saving needs a recipe to rebuild the architecture from.
        max_elements: Images and comments taken per post (default: the recipe's ``train.max_elements``).
        thresholds: Decision threshold per binary task on the calibrated probability (default 0.5).
        temperatures: Logit temperature per task, fitted on validation data (default 1.0).
        logit_shifts: Shift added to a binary task's tempered logit, fitted on validation data (default 0.0).
        pooled: The calibration of logits pooled across posts that share a picture (``eval.pool_by_image``),
            fitted on validation data; ``None`` when the recipe does not pool. Scoring post by post uses the
            per-post calibration above.
    """

    def __init__(
        self,
        model: WholePostModel,
        tasks: list[TaskSpec],
        recipe: Recipe | None = None,
        thresholds: Mapping[str, float] | None = None,
        temperatures: Mapping[str, float] | None = None,
        max_elements: int | None = None,
        logit_shifts: Mapping[str, float] | None = None,
        pooled: Calibration | None = None,
    ) -> None:
        self.model = model
        self.tasks = tasks
        self.recipe = recipe
        self.eval_config = recipe.eval if recipe else EvalConfig()
        self.max_elements = max_elements or (recipe.train.max_elements if recipe else TrainConfig.max_elements)
        identity = Calibration.identity(tasks)
        self.thresholds = identity.thresholds | dict(thresholds or {})
        self.temperatures = identity.temperatures | dict(temperatures or {})
        self.logit_shifts = identity.logit_shifts | dict(logit_shifts or {})
        self.pooled = pooled

    @property
    def calibration(self) -> Calibration:
        """The per-post calibration, sharing this detector's dicts (changes to either show in both)."""
        return Calibration(self.thresholds, self.temperatures, self.logit_shifts)

    def collator(
        self,
        with_targets: bool = False,
        on_error: str = "raise",
        draft_images: bool = False,
        kinds: Iterable[str] | None = None,
    ) -> PostCollator:
        """A collator preprocessing posts for this model's encoders (see ``PostCollator``); ``kinds`` limits the
        element kinds it reads (default: every kind the model reads; scoring reads only the fused ones)."""
        read = self.model.kinds if kinds is None else list(kinds)
        preprocessors = {kind: self.model.encoder_for(kind).preprocessor() for kind in read}
        tasks = self.tasks if with_targets else ()
        return PostCollator(preprocessors, tasks, self.max_elements, on_error, draft_images)

    def probabilities(
        self, logits: Mapping[str, torch.Tensor], calibration: Calibration | None = None
    ) -> dict[str, torch.Tensor]:
        """Calibrated probabilities per task from raw logits (temperature and logit shift of ``calibration``,
        default the per-post one, applied)."""
        calibration = calibration or self.calibration
        return {
            name: self.model.heads[name].probabilities(
                value.float() / calibration.temperatures[name] + calibration.logit_shifts[name]
            )
            for name, value in logits.items()
        }

    @torch.inference_mode()
    def run(
        self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64, drop: Iterable[str] = ()
    ) -> Iterator[tuple[list[str], dict[str, np.ndarray], np.ndarray]]:
        """Yield ``(ids, probabilities per task, embeddings)`` per batch; raises ``PostError`` on a bad post."""
        self.model.eval()
        collate = self.collator(kinds=self.model.fused_kinds)
        buffer: list[Post] = []
        for post in as_posts(list(posts)):
            buffer.append(post)
            if len(buffer) == batch_size:
                yield self._run_batch(collate, buffer, drop)
                buffer = []
        if buffer:
            yield self._run_batch(collate, buffer, drop)

    def _run_batch(
        self, collate: PostCollator, posts: list[Post], drop: Iterable[str]
    ) -> tuple[list[str], dict[str, np.ndarray], np.ndarray]:
        batch = collate(posts)
        scores = self.predict_batch(batch, drop)
        return batch.ids, scores.probabilities, scores.embeddings

    def predict_batch(self, batch: PostBatch, drop: Iterable[str] = (), link_kind: str | None = None) -> BatchScores:
        """Everything one forward pass over a collated batch gives (see ``BatchScores``); ``link_kind`` also
        embeds each post's first element of that kind (the batch must hold that kind)."""
        elements = self.model.encode(batch, drop, self.model.kinds_with(link_kind))
        embedding = self.model.fuse(elements)
        logits = {name: head(embedding) for name, head in self.model.heads.items()}
        scores = BatchScores(
            {name: value.float().cpu().numpy() for name, value in self.probabilities(logits).items()},
            embedding.float().cpu().numpy(),
            {name: value.float().cpu().numpy() for name, value in logits.items()},
        )
        if link_kind is not None:
            links, present = first_elements(elements, link_kind, batch.size)
            scores.links, scores.link_present = links.cpu().numpy(), present.cpu().numpy()
        return scores

    def score(
        self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64, pool_by_image: bool = False
    ) -> list[dict[str, Any]]:
        """Per-post probabilities: ``{"id", task: P(positive)}`` for binary tasks, ``{label: p}`` otherwise.

        Posts may be ``Post`` objects or plain dicts (``{"id", "text", "images", "comments"}``). With
        ``pool_by_image`` (a recipe with ``eval.pool_by_image``), the posts are scored together: each takes the mean
        logits of the given posts showing a near-duplicate of its first picture, under the pooled calibration (as
        evaluation reports it), and its row gains ``picture_group``, the id its group's posts share.
        """
        if pool_by_image:
            from faim.pooling import score_pooled  # imported here: it loads the evaluation package (plots too)

            ids, probs, groups = score_pooled(self, posts, batch_size)
            return [row | {"picture_group": int(group)} for row, group in zip(self._rows(ids, probs), groups)]
        return [row for ids, probs, _ in self.run(posts, batch_size) for row in self._rows(ids, probs)]

    def _rows(self, ids: list[str], probs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
        rows = []
        for i, post_id in enumerate(ids):
            row: dict[str, Any] = {"id": post_id}
            for task in self.tasks:
                value = probs[task.name][i]
                row[task.name] = float(value) if task.type == "binary" else dict(zip(task.labels, map(float, value)))
            rows.append(row)
        return rows

    def embed(self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64) -> np.ndarray:
        """Whole-post embeddings ``[N, D]`` (float32), in input order."""
        parts = [embedding for _, _, embedding in self.run(posts, batch_size)]
        return np.concatenate(parts) if parts else np.zeros((0, self.model.fusion.output_dim), np.float32)

    def decisions(self, task: str, probabilities: np.ndarray, pooled: bool = False) -> np.ndarray:
        """Thresholded decisions for a task: 0/1 for binary, argmax for multiclass, per-label 0.5 for multilabel.

        ``pooled``: the probabilities come from ``score(..., pool_by_image=True)``; the pooled threshold applies.
        """
        spec = next(t for t in self.tasks if t.name == task)
        if spec.type == "binary":
            if pooled and self.pooled is None:
                raise ValueError(f"{self.source}: no pooled calibration (the recipe has no eval.pool_by_image)")
            calibration = self.pooled if pooled else self.calibration
            return (probabilities >= calibration.thresholds[task]).astype(np.int64)
        if spec.type == "multiclass":
            return probabilities.argmax(-1)
        return (probabilities >= 0.5).astype(np.int64)

    @property
    def pooling_kind(self) -> str | None:
        """The element kind posts are pooled by (``"image"`` with ``eval.pool_by_image``), or ``None``."""
        return "image" if self.eval_config.pool_by_image is not None else None

    @property
    def source(self) -> str:
        """Where the model came from, for reports: the recipe file, or ``"<python>"``."""
        return self.recipe.source if self.recipe else "<python>"

    def save(self, directory: str) -> None:
        """Write the artifact directory (see ``faim.artifact``); needs a recipe."""
        from faim.artifact import save_artifact  # artifact imports Detector to load one

        save_artifact(self, directory)


__all__ = ["Calibration", "Detector", "PostError"]

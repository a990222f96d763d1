"""``ShardScorer``: a saved model scored with torch — model loaded once, shards in, Parquet tables out — and
``TorchScorers``, what each scoring process makes it from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import torch

from faim.data.batch import PostBatch
from faim.data.columns import ColumnMap
from faim.data.post import Post
from faim.detector import Detector
from faim.inference import Predictions, predict
from faim.scoring.inputs import Shard
from faim.scoring.optimize import optimise_for_inference
from faim.scoring.options import ScoringOptions
from faim.scoring.output import (
    CORRECTS,
    PICTURE,
    logits_column,
    output_schema,
    output_table,
    score_columns,
    write_shard,
)
from faim.scoring.report import ShardReport
from faim.scoring.rows import ShardRows, readable_batches, set_aside_nonfinite


class ShardScorer:
    """Scores shards with one model instance.

    Args:
        detector: The model (a loaded artifact); optimised in place per ``options``.
        columns: The dump's column mapping (recipe-style dict; ``None``: identity).
        image_root: Directory relative image paths resolve against (``None``: each file's folder).
        options: Speed-ups (see ``ScoringOptions``).
        batch_size: Posts per forward pass.
        scores: Write per-task scores and decisions.
        embeddings: Write whole-post embeddings.
        device: Where the model runs (``"cpu"``, ``"cuda"``, ``"cuda:1"``); decoding stays on the CPU.
        pool_by_image: Also write what pooling by picture reads (``faim.scoring.pool_parts``): each task's raw
            logits and the post's picture embedded; pictures are then read even when the heads do not see them.
    """

    def __init__(
        self,
        detector: Detector,
        columns: dict | None,
        image_root: str | None,
        options: ScoringOptions,
        batch_size: int = 16,
        scores: bool = True,
        embeddings: bool = False,
        device: str = "cpu",
        pool_by_image: bool = False,
    ) -> None:
        self.detector = detector
        self.device = torch.device(device)
        self.link_kind = detector.pooling_kind if pool_by_image else None
        # kinds neither fused nor linking (a picture that only links posts in evaluation) are not read
        kinds = self.kinds = detector.model.kinds_with(self.link_kind)
        optimise_for_inference(detector.model.to(self.device), options, kinds)
        self.collate = detector.collator(on_error="record", draft_images=options.draft_jpeg, kinds=kinds)
        self.columns = ColumnMap.from_recipe(columns)
        self.image_root = Path(image_root) if image_root else None
        self.batch_size = batch_size
        self.schema = output_schema(detector.tasks, scores, embeddings, "inputs" if pool_by_image else None)
        self.scores, self.embeddings = scores, embeddings
        self.caller_threads = torch.get_num_threads()

    @classmethod
    def from_artifact(cls, model_dir: str, threads: int | None = None, **kwargs: object) -> ShardScorer:
        """Load the model (once per process) and set torch's thread count (``close`` sets the caller's back)."""
        caller_threads = torch.get_num_threads()
        if threads:
            torch.set_num_threads(threads)
        scorer = cls(Detector.load(model_dir), **kwargs)  # type: ignore[arg-type]
        scorer.caller_threads = caller_threads
        return scorer

    def close(self) -> None:
        """Set torch's thread count back to the caller's. Torch applies a count to the thread that sets it and to
        threads that first use torch later, so a scorer run from a thread of the main process changes it there."""
        torch.set_num_threads(self.caller_threads)

    def table(self, rows: ShardRows) -> pa.Table:
        """The output rows of one shard's rows read (``shard_posts``): one per input row."""
        errors = rows.errors
        scored: list[tuple[int, Post]] = []
        batches = readable_batches(rows.posts, self.batch_size, self.collated, errors, scored)
        predictions = predict(
            self.detector.model,
            batches,
            desc=None,
            link_kind=self.link_kind,
            embeddings=self.embeddings,
            device=self.device,
            source=self.detector.source,
        )
        if self.scores or self.embeddings:
            tasks = self.detector.tasks if self.scores else []
            embeddings = predictions.embeddings if self.embeddings else None
            predictions = predictions.rows(set_aside_nonfinite(scored, tasks, predictions.logits, errors, embeddings))
        return output_table(self.schema, scored, self.scored_columns(predictions) if scored else {}, errors)

    def collated(self, posts: list[Post]) -> tuple[PostBatch, list]:
        """``posts`` preprocessed into one batch, and the errors of those that could not be read."""
        result = self.collate.collate(posts)
        return result.batch, result.errors

    def scored_columns(self, predictions: Predictions) -> dict[str, list[Any]]:
        """Output columns of the scored posts, from their predictions (in order)."""
        columns: dict[str, list[Any]] = {}
        if self.scores:
            probabilities = self.detector.probabilities(predictions.logits)
            columns = score_columns(self.detector.tasks, self.detector.decisions, probabilities)
        if self.embeddings:
            columns["embedding"] = predictions.embeddings.tolist()
        if self.link_kind is not None:
            for task in self.detector.tasks:
                columns[logits_column(task.name)] = predictions.logits[task.name].tolist()
            pictures = zip(predictions.link_embeddings, predictions.link_present)
            columns[PICTURE] = [vector.tolist() if has else None for vector, has in pictures]
            columns[CORRECTS] = predictions.corrections.tolist()
        return columns

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        """Score ``shard`` into ``out_dir/part-<key>.parquet``, atomically (all rows or none)."""
        limit, fused = self.detector.max_elements, self.detector.model.fused_kinds
        return write_shard(shard, out_dir, self.table, self.columns, self.image_root, self.kinds, limit, fused)


@dataclass(frozen=True)
class TorchScorers:
    """What each scoring process makes its ``ShardScorer`` from (picklable; see ``faim.scoring.runner.Scorers``).

    Attributes:
        model_dir: The saved model.
        device: Where the model runs.
        kwargs: ``ShardScorer``'s other arguments.
    """

    model_dir: str
    device: str
    kwargs: dict[str, Any]

    def __call__(self, threads: int) -> ShardScorer:
        return ShardScorer.from_artifact(self.model_dir, threads=threads, device=self.device, **self.kwargs)

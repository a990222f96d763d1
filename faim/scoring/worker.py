"""``ShardScorer``: the stateful scorer both engines run — model loaded once, shards in, Parquet tables out."""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from faim.artifact import load_artifact
from faim.data.columns import ColumnMap
from faim.detector import Detector
from faim.scoring.inputs import Shard
from faim.scoring.optimize import ScoringOptions, optimise_for_inference
from faim.scoring.output import output_schema, output_table
from faim.scoring.rows import RowError, shard_posts


@dataclass
class ShardReport:
    """What scoring one shard produced, and which process spent how long on it (0 when read back from disk)."""

    key: str
    rows: int
    errors: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    worker: int = 0


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
    ) -> None:
        self.detector = detector
        self.device = torch.device(device)
        optimise_for_inference(detector.model.to(self.device), options)
        self.collate = detector.collator(
            on_error="record", draft_images=options.draft_jpeg, kinds=detector.model.fused_kinds
        )  # kinds the heads do not see (a picture that only links posts in evaluation) are not read
        self.columns = ColumnMap.from_recipe(columns)
        self.image_root = Path(image_root) if image_root else None
        self.batch_size = batch_size
        self.schema = output_schema(detector, scores, embeddings)
        self.embeddings = embeddings

    @classmethod
    def from_artifact(cls, model_dir: str, threads: int | None = None, **kwargs: object) -> ShardScorer:
        """Load the model (once per process) and set torch's thread count."""
        if threads:
            torch.set_num_threads(threads)
        return cls(load_artifact(model_dir), **kwargs)  # type: ignore[arg-type]

    @torch.inference_mode()
    def table(self, shard: Shard) -> pa.Table:
        """The output rows of one shard: one per input row."""
        numbered, errors = shard_posts(shard, self.columns, self.image_root)
        numbered.sort(key=lambda item: len(item[1].text or ""))  # similar lengths together: less padding
        scored, probs, embeddings = [], [], []
        for start in range(0, len(numbered), self.batch_size):
            chunk = [post for _, post in numbered[start : start + self.batch_size]]
            result = self.collate.collate(chunk)
            errors += [RowError(e.origin, e.post_id, e.kind, str(e)) for e in result.errors]
            if not result.batch.size:
                continue
            failed = {e.origin for e in result.errors}
            scored += [(n, p) for n, p in numbered[start : start + self.batch_size] if p.origin not in failed]
            batch_probs, batch_embeddings = self.detector.predict_batch(result.batch.to(self.device))
            probs.append(batch_probs)
            embeddings.append(batch_embeddings)
        merged = {name: np.concatenate([p[name] for p in probs]) for name in probs[0]} if probs else {}
        stacked = np.concatenate(embeddings) if embeddings and self.embeddings else None
        return output_table(self.schema, self.detector, scored, merged, stacked, errors)

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        """Score ``shard`` into ``out_dir/part-<key>.parquet``, atomically (all rows or none)."""
        start = time.perf_counter()
        table = self.table(shard)
        final = out_dir / f"part-{shard.key}.parquet"
        partial = out_dir / f".part-{shard.key}.{os.getpid()}.tmp"
        pq.write_table(table, partial)
        os.replace(partial, final)
        kinds = Counter(kind for kind in table.column("error_kind").to_pylist() if kind)
        return ShardReport(shard.key, table.num_rows, kinds, time.perf_counter() - start, os.getpid())

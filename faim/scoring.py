"""Stream posts through a model into Parquet: one output row per input post, scored or with an error."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from tqdm.auto import tqdm

from faim.data.post import Post
from faim.detector import Detector


@dataclass
class ScoreSummary:
    """What a scoring run did."""

    rows: int = 0
    errors: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    output: str = ""

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    def format(self) -> str:
        errors = ", ".join(f"{kind}: {n}" for kind, n in self.errors.most_common()) or "none"
        return (
            f"rows: {self.rows}  errors: {sum(self.errors.values())} ({errors})  "
            f"throughput: {self.rows_per_second:.1f} rows/s  output: {self.output}"
        )


def batched(items: Iterable[Post], size: int) -> Iterator[list[Post]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def score_columns(detector: Detector, probs: dict[str, np.ndarray]) -> dict[str, list[Any]]:
    """Score and decision columns: ``<task>`` (P(positive), or per-label ``<task>.<label>``) and ``<task>.decision``."""
    columns: dict[str, list[Any]] = {}
    for task in detector.tasks:
        value = probs[task.name]
        if task.type == "binary":
            columns[task.name] = value.tolist()
        else:
            for j, label in enumerate(task.labels):
                columns[f"{task.name}.{label}"] = value[:, j].tolist()
        decision = detector.decisions(task.name, value)
        columns[f"{task.name}.decision"] = (
            [task.labels[d] for d in decision] if task.type != "multilabel" else decision.tolist()
        )
    return columns


def output_schema(detector: Detector, scores: bool, embeddings: bool) -> pa.Schema:
    """The Parquet schema of a scoring run, fixed up front so error-only batches fit it too."""
    fields = [pa.field("id", pa.string())]
    if scores:
        for task in detector.tasks:
            names = [task.name] if task.type == "binary" else [f"{task.name}.{label}" for label in task.labels]
            fields += [pa.field(name, pa.float32()) for name in names]
            decision = pa.list_(pa.int64()) if task.type == "multilabel" else pa.string()
            fields.append(pa.field(f"{task.name}.decision", decision))
    if embeddings:
        fields.append(pa.field("embedding", pa.list_(pa.float32())))
    fields.append(pa.field("error", pa.string()))
    return pa.schema(fields)


@torch.inference_mode()
def score_posts(
    detector: Detector,
    posts: Iterable[Post],
    out: str | Path,
    batch_size: int = 64,
    scores: bool = True,
    embeddings: bool = False,
) -> ScoreSummary:
    """Score ``posts`` into the Parquet file ``out`` and return a summary.

    A post that cannot be prepared (unreadable image, …) yields a row with null scores and ``error`` set.
    """
    detector.model.eval()
    collate = detector.collator(on_error="record")
    summary = ScoreSummary(output=str(out))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    schema = output_schema(detector, scores, embeddings)
    writer = pq.ParquetWriter(str(out), schema)
    start = time.perf_counter()
    progress = tqdm(unit="post", desc="scoring", smoothing=0.1)
    for chunk in batched(posts, batch_size):
        result = collate.collate(chunk)
        batch = result.batch
        rows: dict[str, list[Any]] = {name: [] for name in schema.names}
        rows["id"] = list(batch.ids)
        if batch.size:
            embedding = detector.model.embed(batch)
            logits = {name: head(embedding) for name, head in detector.model.heads.items()}
            probs = {k: v.cpu().numpy() for k, v in detector.probabilities(logits).items()}
            if scores:
                rows |= score_columns(detector, probs)
            if embeddings:
                rows["embedding"] = embedding.float().cpu().numpy().tolist()
        rows["error"] = [None] * batch.size
        for error in result.errors:
            rows["id"].append(error.post_id)
            for name in rows:
                if name not in ("id", "error"):
                    rows[name].append(None)
            rows["error"].append(str(error))
            summary.errors[error.field] += 1
        writer.write_table(pa.table(rows, schema=schema))
        summary.rows += len(chunk)
        progress.update(len(chunk))
    progress.close()
    writer.close()
    summary.seconds = time.perf_counter() - start
    return summary

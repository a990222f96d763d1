"""The Parquet rows a scoring run writes: one per input row, scored or with its error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from faim.data.post import Post
from faim.detector import Detector
from faim.scoring.rows import RowError


def output_schema(detector: Detector, scores: bool, embeddings: bool) -> pa.Schema:
    """Columns: ``source`` (``file:row``), ``id``, per task ``<task>`` (P(positive)) or ``<task>.<label>``,
    ``<task>.decision``, optionally ``embedding``, then ``error`` and ``error_kind`` (null when scored)."""
    fields = [pa.field("source", pa.string()), pa.field("id", pa.string())]
    if scores:
        for task in detector.tasks:
            names = [task.name] if task.type == "binary" else [f"{task.name}.{label}" for label in task.labels]
            fields += [pa.field(name, pa.float32()) for name in names]
            decision = pa.list_(pa.int64()) if task.type == "multilabel" else pa.string()
            fields.append(pa.field(f"{task.name}.decision", decision))
    if embeddings:
        fields.append(pa.field("embedding", pa.list_(pa.float32())))
    fields += [pa.field("error", pa.string()), pa.field("error_kind", pa.string())]
    return pa.schema(fields)


def score_columns(detector: Detector, probs: dict[str, np.ndarray]) -> dict[str, list[Any]]:
    """Score and decision columns for scored posts, named as in ``output_schema``."""
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


def output_table(
    schema: pa.Schema,
    detector: Detector,
    scored: list[tuple[int, Post]],
    probs: dict[str, np.ndarray],
    embeddings: np.ndarray | None,
    errors: list[RowError],
) -> pa.Table:
    """Scored rows followed by error rows, in ``schema``, sorted back into input order (by row number)."""
    columns = {name: [] for name in schema.names}
    columns["source"] = [post.origin for _, post in scored] + [e.source for e in errors]
    columns["id"] = [post.id for _, post in scored] + [e.post_id for e in errors]
    if scored:
        if "embedding" in columns and embeddings is not None:
            columns["embedding"] = embeddings.tolist()
        for name, values in score_columns(detector, probs).items():
            if name in columns:
                columns[name] = values
    for name in schema.names:
        if name not in ("source", "id", "error", "error_kind"):
            columns[name] = columns[name] + [None] * len(errors)
    columns["error"] = [None] * len(scored) + [e.message for e in errors]
    columns["error_kind"] = [None] * len(scored) + [e.kind for e in errors]
    order = sorted(range(len(columns["source"])), key=lambda i: row_number(columns["source"][i]))
    return pa.table(columns, schema=schema).take(order)


def row_number(source: str) -> tuple[int, str]:
    """Sort key of a ``file:row`` source within one file: numbered rows first, in order."""
    where = source.rsplit(":", 1)[-1]
    return (int(where), "") if where.isdigit() else (1 << 62, where)

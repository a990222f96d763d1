"""The Parquet rows a scoring run writes: one per input row, scored or with its error."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from faim.data.columns import ColumnMap
from faim.data.post import Post
from faim.decisions import Task
from faim.folders import replace_durably
from faim.scoring.inputs import Shard
from faim.scoring.report import HELD_KEY, Held, ShardReport
from faim.scoring.rows import RowError, ShardRows, shard_posts

Pooling = Literal["inputs", "groups"] | None
"""What a run pooling by picture adds: ``"inputs"`` (its per-post parts) each task's raw logits, the picture
embedding and whether the post questions or corrects what it shares, which the pooling reads; ``"groups"`` (its
pooled parts) the picture group."""

PICTURE = "picture"
CORRECTS = "corrects"
PICTURE_GROUP = "picture_group"
EMBEDDING = "embedding"

ROW_COLUMNS = {"source": "each row's source", "id": "each row's id"}
"""The columns of each row before its scores (``output_schema``), each with what it holds."""
ERROR_COLUMNS = {"error": "each row's error", "error_kind": "the kind of each row's error"}
"""The columns of each row after its scores and what a run adds (``output_schema``), each with what it holds."""
EMBEDDING_COLUMNS = {EMBEDDING: "each post's embedding"}
"""The columns a run writing embeddings adds (``faim score --with-embeddings``), each with what it holds."""
POOLING_COLUMNS = {
    PICTURE: "each post's picture embedded",
    CORRECTS: "whether each post corrects its picture",
    PICTURE_GROUP: "each post's picture group",
}
"""The columns a run pooling by picture adds (``faim score --pool-by-image``): the first two to its per-post parts,
with each task's logits (``logits_column``), the last to its pooled parts; each with what it holds."""


def logits_column(task: str) -> str:
    """Column of a task's raw logits in the per-post parts of a pooled run."""
    return f"{task}.logits"


def logits_held(task: str) -> str:
    """What the column ``logits_column(task)`` holds."""
    return f"the logits of task {task!r}"


Decide = Callable[[str, np.ndarray], np.ndarray]
"""A model's decisions for one task from its probabilities (``Detector.decisions``, ``ExportedModel.decisions``)."""


def output_schema(tasks: Sequence[Task], scores: bool, embeddings: bool, pooling: Pooling = None) -> pa.Schema:
    """Columns: ``source`` (``file:row``), ``id`` (the row's id, or its row number where it has none; null where
    the row could not be read as far as its id), per task ``<task>`` (P(positive)) or ``<task>.<label>``,
    ``<task>.decision``, optionally ``embedding``, with ``pooling`` its columns (see ``Pooling``), then ``error``
    and ``error_kind`` (null when scored).

    Raises:
        ValueError: Where two columns would share a name (a label named ``decision``, a task named ``id`` or as
            another's label, of a model saved before its recipe was refused for it), naming the name, what each
            column holds and what to do.
    """
    fields = [(pa.field(name, pa.string()), what) for name, what in ROW_COLUMNS.items()]
    if scores:
        for task in tasks:
            if task.type == "binary":
                fields.append((pa.field(task.name, pa.float32()), f"the score of task {task.name!r}"))
            else:
                fields += [
                    (
                        pa.field(f"{task.name}.{label}", pa.float32()),
                        f"the score of label {label!r} of task {task.name!r}",
                    )
                    for label in task.labels
                ]
            decision = pa.list_(pa.int64()) if task.type == "multilabel" else pa.string()
            fields.append((pa.field(f"{task.name}.decision", decision), f"the decision of task {task.name!r}"))
    if embeddings:
        fields.append((pa.field(EMBEDDING, pa.list_(pa.float32())), EMBEDDING_COLUMNS[EMBEDDING]))
    if pooling == "inputs":
        for task in tasks:
            logits = pa.float32() if task.type == "binary" else pa.list_(pa.float32())
            fields.append((pa.field(logits_column(task.name), logits), logits_held(task.name)))
        fields += [
            (pa.field(PICTURE, pa.list_(pa.float32())), POOLING_COLUMNS[PICTURE]),
            (pa.field(CORRECTS, pa.bool_()), POOLING_COLUMNS[CORRECTS]),
        ]
    elif pooling == "groups":
        fields.append((pa.field(PICTURE_GROUP, pa.int64()), POOLING_COLUMNS[PICTURE_GROUP]))
    fields += [(pa.field(name, pa.string()), what) for name, what in ERROR_COLUMNS.items()]
    holds: dict[str, str] = {}
    for column, what in fields:
        if column.name in holds:
            remedy = "train it again with the task or label renamed"
            if column.name != "id":  # which the Python API's rows hold as the post's too
                remedy += ", or score its posts with faim.load (faim.runtime.load of an export), whose rows hold them"
            raise ValueError(
                f"the output column {column.name!r} would hold both {holds[column.name]} and {what}, so faim score "
                f"cannot write the model's scores: {remedy}"
            )
        holds[column.name] = what
    return pa.schema([column for column, _ in fields])


def check_output_columns(
    model: str | Path, tasks: Sequence[dict[str, Any]], scores: bool, embeddings: bool, pool_by_image: bool = False
) -> None:
    """Refuse, before a run reads any row, a model whose ``tasks`` (its manifest's) give two of the columns a run
    writes one name (``output_schema``), where each scoring process would otherwise stop at its first batch.

    Raises:
        ValueError: As ``output_schema`` does, naming ``model`` too.
    """
    named = [SimpleNamespace(name=task["name"], type=task["type"], labels=task["labels"]) for task in tasks]
    try:
        for pooling in ("inputs", "groups") if pool_by_image else (None,):
            output_schema(named, scores, embeddings, pooling)
    except ValueError as error:
        raise ValueError(f"{model}: {error}") from None


def score_columns(tasks: Sequence[Task], decide: Decide, probs: dict[str, np.ndarray]) -> dict[str, list[Any]]:
    """Score and decision columns for scored posts, named as in ``output_schema``, decided by ``decide``."""
    columns: dict[str, list[Any]] = {}
    for task in tasks:
        value = probs[task.name]
        if task.type == "binary":
            columns[task.name] = value.tolist()
        else:
            for j, label in enumerate(task.labels):
                columns[f"{task.name}.{label}"] = value[:, j].tolist()
        decision = decide(task.name, value)
        columns[f"{task.name}.decision"] = (
            [task.labels[d] for d in decision] if task.type != "multilabel" else decision.tolist()
        )
    return columns


def output_table(
    schema: pa.Schema, scored: list[tuple[int, Post]], columns: dict[str, list[Any]], errors: list[RowError]
) -> pa.Table:
    """Scored rows (``columns``: values of the scored posts, by column name) followed by error rows, in
    ``schema``, sorted back into input order (by row number); columns not given are null."""
    table = {name: [None] * len(scored) for name in schema.names}
    table |= {name: values for name, values in columns.items() if name in table}
    for name in schema.names:
        table[name] = table[name] + [None] * len(errors)
    table["source"] = [post.origin for _, post in scored] + [e.source for e in errors]
    table["id"] = [post.id for _, post in scored] + [e.post_id for e in errors]
    table["error"] = [None] * len(scored) + [e.message for e in errors]
    table["error_kind"] = [None] * len(scored) + [e.kind for e in errors]
    order = sorted(range(len(table["source"])), key=lambda i: row_number(table["source"][i]))
    return pa.table(table, schema=schema).take(order)


def row_number(source: str) -> tuple[int, str]:
    """Sort key of a ``file:row`` source within one file: numbered rows first, in order."""
    where = source.rsplit(":", 1)[-1]
    return (int(where), "") if where.isdigit() else (1 << 62, where)


def write_part(table: pa.Table, out_dir: Path, key: str, started: float, held: Held) -> ShardReport:
    """Write one shard's rows to ``out_dir/part-<key>.parquet`` atomically (all rows or none), its bytes and name on
    the disk before it returns (``replace_durably``), as the manifest records it after, and report them (``started``:
    when scoring the shard began, by ``time.perf_counter``; ``held``: what its rows hold, recorded in the part's
    key-value metadata too, under ``HELD_KEY``, for a run that resumes without the part's manifest line)."""
    final = out_dir / f"part-{key}.parquet"
    partial = out_dir / f".part-{key}.{os.getpid()}.tmp"
    with pq.ParquetWriter(partial, table.schema) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({HELD_KEY: json.dumps(held.record())})
    replace_durably(partial, final)
    kinds = Counter(kind for kind in table.column("error_kind").to_pylist() if kind)
    return ShardReport(key, table.num_rows, kinds, time.perf_counter() - started, os.getpid(), held)


def write_shard(
    shard: Shard,
    out_dir: Path,
    table: Callable[[ShardRows], pa.Table],
    columns: ColumnMap,
    image_root: Path | None,
    kinds: Sequence[str],
    limit: int,
    fused: Sequence[str],
) -> ShardReport:
    """Score ``shard`` into ``out_dir/part-<key>.parquet`` (``write_part``): its rows read (``shard_posts``, with the
    mapping ``columns``, relative picture paths under ``image_root``, ``kinds`` the element kinds the model reads),
    made output rows by ``table`` (a scorer's), and reported with what they hold (``ShardRows.held``: ``limit`` the
    pictures or comments the model reads of a post, its ``max_elements``, of the kinds of ``fused``, those its fusion
    reads)."""
    started = time.perf_counter()
    rows = shard_posts(shard, columns, image_root, kinds)
    # before ``table``, which reorders the posts and adds the read failures
    held = rows.held(kinds, columns.reading(shard.text_cells), limit, fused)
    return write_part(table(rows), out_dir, shard.key, started, held)

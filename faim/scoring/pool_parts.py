"""The second pass of a scoring run that pools by picture (``score_dump(pool_by_image=True)``).

The first pass writes per-post parts (``_per_post/part-*.parquet``): each post's own scores, each task's raw
logits and the post's picture embedded. This pass reads every part's pictures, groups the posts whose pictures
are near-duplicates (cosine at least the detector's ``pool_by_image``, as evaluation groups them), gives each
post its group's mean logits (with the weight of its share of posts that question or correct the picture, where
the pooled calibration has one), and writes the pooled parts (``part-*.parquet``, one per per-post part, same rows
in the same order): scores and decisions under the pooled calibration, and ``picture_group``, the id the posts
of a group share (null for a post without a picture, which is scored alone, and for a row that failed).

Memory: each distinct picture is held once (identical embeddings are stored once), plus every row's logits; the
comparison's float64 working copies and blocks of 2,048 rows of cosines take 2.5 GB at their peak for 40,000
distinct 1,280-dimensional pictures. Time: all pairs of distinct pictures are compared, so it grows with their
square: 20,000 such pictures take about 13 s on two cores, 40,000 about 51 s (``python -m
faim.eval.bench_pooling``). Far more distinct pictures need an approximate nearest-neighbour index.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from faim.detector import Detector
from faim.folders import replace_synced, sync_folder
from faim.pooling import pooled_probabilities
from faim.scoring.output import CORRECTS, PICTURE, PICTURE_GROUP, logits_column, output_schema, score_columns
from faim.shared_images import shared_image_groups
from faim.wording import plural


@dataclass
class PoolingReport:
    """What the pooling pass did: ``posts`` scored posts pooled, of which ``grouped_posts`` share a picture with
    another post, in ``groups`` groups."""

    posts: int = 0
    groups: int = 0
    grouped_posts: int = 0
    seconds: float = 0.0

    def format(self) -> str:
        return (
            f"pooled by picture: {self.grouped_posts} of {plural(self.posts, 'post')} share a picture, in "
            f"{plural(self.groups, 'group')} ({self.seconds:.1f} s)"
        )


class DistinctPictures:
    """Picture embeddings, each distinct one stored once, and the index of each row's picture among them."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.vectors: list[np.ndarray] = []

    def add(self, column: pa.ChunkedArray) -> np.ndarray:
        """Index per row of a ``picture`` column into the distinct pictures (-1 where null)."""
        column = column.combine_chunks()
        present = column.is_valid().to_numpy(zero_copy_only=False)
        rows = np.full(len(column), -1, dtype=np.int64)
        if present.any():
            vectors = np.asarray(column.drop_null().flatten(), dtype=np.float32).reshape(int(present.sum()), -1)
            rows[present] = [self._index_of(vector) for vector in vectors]
        return rows

    def _index_of(self, vector: np.ndarray) -> int:
        key = vector.tobytes()
        if key not in self.index:
            self.index[key] = len(self.vectors)
            self.vectors.append(vector.copy())  # not a view: the part's other rows are not kept
        return self.index[key]

    def groups(self, min_cosine: float) -> np.ndarray:
        """Group id per distinct picture: near-duplicates (cosine at least ``min_cosine``) share one."""
        if not self.vectors:
            return np.zeros(0, dtype=np.int64)
        return shared_image_groups(np.stack(self.vectors), np.ones(len(self.vectors), dtype=bool), min_cosine)


def read_logits(table: pa.Table, detector: Detector) -> dict[str, np.ndarray]:
    """Task → raw logits of a per-post part's scored rows (``[n]`` or ``[n, C]``)."""
    scored = table.filter(table.column("error").is_null())
    logits = {}
    for task in detector.tasks:
        column = scored.column(logits_column(task.name)).combine_chunks()
        if task.type == "binary":
            logits[task.name] = np.asarray(column, dtype=np.float32)
        else:
            logits[task.name] = np.asarray(column.flatten(), dtype=np.float32).reshape(len(column), len(task.labels))
    return logits


def pool_parts(detector: Detector, per_post_dir: Path, out_dir: Path, progress: bool = True) -> PoolingReport:
    """Pool the per-post parts in ``per_post_dir`` by picture into pooled parts in ``out_dir`` (see the module
    docstring); each pooled part is written atomically, its bytes on the disk before its name
    (``faim.folders.replace_synced``), and their names once all are written (``faim.folders.sync_folder``): nothing
    records the pooling done, and a rerun pools again, rewriting them whole.

    Raises:
        ValueError: On a per-post part written without what pooling reads, naming it.
    """
    detector.check_pooling()
    start = time.perf_counter()
    parts = sorted(per_post_dir.glob("part-*.parquet"))
    if not parts:
        return PoolingReport(seconds=time.perf_counter() - start)
    pictures = DistinctPictures()
    rows_picture, scored_masks, logits, corrects = [], [], [], []
    for part in tqdm(parts, desc="reading pictures", unit="part", disable=not progress):
        if CORRECTS not in pq.read_schema(part).names:
            raise ValueError(
                f"{part}: a per-post part without the {CORRECTS!r} column pooling reads (written by an earlier faim); "
                "score the dump again with --overwrite"
            )
        columns = [PICTURE, CORRECTS, "error", *[logits_column(t.name) for t in detector.tasks]]
        table = pq.read_table(part, columns=columns)
        scored = table.column("error").is_null().to_numpy(zero_copy_only=False)
        rows_picture.append(pictures.add(table.column(PICTURE))[scored])
        scored_masks.append(scored)
        logits.append(read_logits(table, detector))
        corrects.append(table.column(CORRECTS).to_numpy(zero_copy_only=False)[scored].astype(bool))
    picture = np.concatenate(rows_picture)
    has = picture >= 0
    distinct_group = pictures.groups(detector.pool_by_image)
    groups = np.arange(len(picture)) + len(distinct_group)  # a post without a picture is a group of its own
    groups[has] = distinct_group[picture[has]]
    every_row = {task.name: np.concatenate([part[task.name] for part in logits]) for task in detector.tasks}
    crowd = np.concatenate(corrects), has
    probs = pooled_probabilities(detector.tasks, detector.pooled, every_row, groups, *crowd)
    offset = 0
    for part, scored in tqdm(list(zip(parts, scored_masks)), desc="writing pooled", unit="part", disable=not progress):
        rows = slice(offset, offset + int(scored.sum()))
        offset = rows.stop
        part_groups = np.where(has[rows], groups[rows], -1)
        write_pooled(detector, part, out_dir, scored, {name: value[rows] for name, value in probs.items()}, part_groups)
    sync_folder(out_dir)
    sizes = np.bincount(groups[has], minlength=len(distinct_group))
    return PoolingReport(
        posts=len(picture),
        groups=int((sizes >= 2).sum()),
        grouped_posts=int(sizes[sizes >= 2].sum()),
        seconds=time.perf_counter() - start,
    )


def write_pooled(
    detector: Detector,
    part: Path,
    out_dir: Path,
    scored: np.ndarray,
    probs: dict[str, np.ndarray],
    groups: np.ndarray,
) -> None:
    """Write the pooled part of a per-post ``part``: its scored rows (``scored``) get ``probs`` and their picture
    group (``groups``, -1: none); error rows keep their error. Its name reaches the disk with ``pool_parts``'s sync of
    ``out_dir``."""
    embeddings = "embedding" in pq.read_schema(part).names
    kept = ["source", "id", "error", "error_kind"] + (["embedding"] if embeddings else [])
    table = pq.read_table(part, columns=kept)  # not the pictures: they are the bulk of a per-post part
    schema = output_schema(detector.tasks, scores=True, embeddings=embeddings, pooling="groups")
    where = np.flatnonzero(scored)
    columns = {name: [None] * table.num_rows for name in schema.names}
    for name in kept:
        columns[name] = table.column(name).to_pylist()
    if len(where):
        pooled = score_columns(detector.tasks, lambda task, p: detector.decisions(task, p, pooled=True), probs) | {
            PICTURE_GROUP: [int(group) if group >= 0 else None for group in groups]
        }
        for name, values in pooled.items():
            for row, value in zip(where, values):
                columns[name][row] = value
    final = out_dir / part.name
    partial = out_dir / f".{part.stem}.{os.getpid()}.tmp"
    pq.write_table(pa.table(columns, schema=schema), partial)
    replace_synced(partial, final)

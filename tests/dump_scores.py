"""A model's scores of posts as ``faim score`` gives them, with its default speed-ups (frozen image graphs among
them): the posts written as a JSONL dump with their pictures as files beside it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from faim.scoring.engine import score_dump


def dump_scores(model_dir: Path, posts: list[dict], root: Path, task: str) -> np.ndarray:
    """``task``'s scores of ``posts`` (each with an ``id`` and picture bytes under ``images``), in their order."""
    root.mkdir(parents=True)
    lines = []
    for post in posts:
        files = []
        for index, picture in enumerate(post.get("images", [])):
            (root / f"{post['id']}-{index}.png").write_bytes(picture)
            files.append(f"{post['id']}-{index}.png")
        lines.append(json.dumps({"id": post["id"], "text": post.get("text"), "images": files}))
    (root / "posts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    score_dump(model_dir, root / "posts.jsonl", root / "out", workers=1, progress=False)
    rows = {row["id"]: row for row in pq.read_table(root / "out").to_pylist()}
    return np.array([rows[post["id"]][task] for post in posts])

"""A model's scores of posts as ``faim score`` gives them, with its default speed-ups (frozen image graphs among
them): the posts written as a JSONL dump with their pictures as files beside it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from faim.scoring.engine import score_dump


def write_posts(root: Path, posts: list[dict]) -> Path:
    """``posts`` (each with an ``id``, picture bytes under ``images``) as ``root/posts.jsonl``, their pictures as PNG
    files beside it; the posts given are left as they are."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for post in posts:
        names = []
        for index, picture in enumerate(post.get("images", [])):
            (root / f"{post['id']}-{index}.png").write_bytes(picture)
            names.append(f"{post['id']}-{index}.png")
        fields = {key: value for key, value in post.items() if key != "images"}
        lines.append(json.dumps(fields | ({"images": names} if names else {})))
    (root / "posts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "posts.jsonl"


def dump_scores(model_dir: Path, posts: list[dict], root: Path, task: str) -> np.ndarray:
    """``task``'s scores of ``posts`` (each with an ``id`` and picture bytes under ``images``), in their order."""
    score_dump(model_dir, write_posts(root, posts), root / "out", workers=1, progress=False)
    rows = {row["id"]: row for row in pq.read_table(root / "out").to_pylist()}
    return np.array([rows[post["id"]][task] for post in posts])

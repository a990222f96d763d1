"""The benchmark's scoring dump: pictures given by relative paths still resolve from wherever the dump is written."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from faim.data.post import Post
from faim.data.sources import read_posts
from faim.eval.benchmark_runs import write_dump


def test_relative_picture_paths_are_written_absolute(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "pictures").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "pictures" / "a.png")
    Image.new("RGB", (4, 4)).save(tmp_path / "pictures" / "b.png")
    monkeypatch.chdir(tmp_path)  # "pictures/a.png" resolves from here only
    posts = [Post("1", "x", images=["pictures/a.png"]), Post("2", "y", images=["b.png"], image_root=Path("pictures"))]
    (tmp_path / "dumps").mkdir()
    dump = write_dump(posts, tmp_path / "dumps" / "posts.jsonl")
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    assert [row["images"] for row in rows] == [
        [str(tmp_path / "pictures" / "a.png")],
        [str(tmp_path / "pictures" / "b.png")],
    ]
    assert all(Path(image).is_file() for post in read_posts(dump) for image in post.images)

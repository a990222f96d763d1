"""The benchmark's scoring dump: pictures given by relative paths still resolve from wherever the dump is written. A
run record's recipe is read as a saved model's recipe is."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from PIL import Image

from faim.data.post import Post
from faim.data.sources import read_posts
from faim.eval.benchmark_runs import record_recipe, write_dump
from faim.recipe import Recipe
from faim.recipe.compare import plain


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


def test_a_run_records_recipe_is_read_as_the_recipe_of_the_model_it_saved_is() -> None:
    liar = plain(Recipe.load("misinfo_liar_binary"))
    then = copy.deepcopy(liar)
    then["model"]["heads"]["truth"]["labels"] = ["not-false", False]  # recorded when YAML's false was read so
    then["train"] |= {"monitor": "val/loss", "mode": "max"}  # refused since for a new run, as training starts
    assert record_recipe({"recipe": then}) == liar | {"train": liar["train"] | {"monitor": "val/loss", "mode": "max"}}

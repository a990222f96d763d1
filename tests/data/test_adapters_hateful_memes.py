"""The ``hateful_memes`` adapter on a generated folder in the Hateful Memes layout (jsonl files + img/)."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from faim.assembly import build_source
from faim.data.hateful_memes import LABELS, HatefulMemesSource
from faim.data.images import load_image
from faim.data.sources import JsonlSource, check_split
from faim.registry import SOURCES, build_source_spec


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def meme(ident: int, label: int | None = None, text: str = "a caption") -> dict:
    row = {"id": ident, "img": f"img/{ident:05d}.png", "text": text}
    return row if label is None else row | {"label": label}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "img").mkdir()
    for ident in (1, 2, 3, 4, 5):
        Image.new("RGB", (8, 8), "blue").save(tmp_path / "img" / f"{ident:05d}.png")
    write(tmp_path / "train.jsonl", [meme(1, 0, "love everyone"), meme(2, 1, "")])
    write(tmp_path / "dev_seen.jsonl", [meme(3, 1)])
    write(tmp_path / "dev_unseen.jsonl", [meme(4, 0), meme(3, 1)])
    write(tmp_path / "test_seen.jsonl", [meme(5)])
    return tmp_path


def test_registered_with_recipe_arguments():
    assert SOURCES["hateful_memes"] is HatefulMemesSource
    assert list(inspect.signature(HatefulMemesSource).parameters) == ["root", "task", "validation"]
    assert LABELS == ["not-hateful", "hateful"]


def test_posts_labels_and_images(root):
    source = HatefulMemesSource(str(root))
    train = source.posts("train")
    assert [(p.id, p.text, p.images, p.labels) for p in train] == [
        ("1", "love everyone", ["img/00001.png"], {"hateful": 0}),
        ("2", None, ["img/00002.png"], {"hateful": 1}),
    ]
    assert train[1].origin == f"{root / 'train.jsonl'}:2" and train[1].image_root == root.absolute()
    assert load_image(train[0].images[0], train[0].image_root).size == (8, 8)
    assert [p.labels for p in source.posts("test")] == [{}]


def test_a_validation_file_not_there_is_named_by_check_split_reading_no_file(root, monkeypatch):
    source = build_source({"type": "hateful_memes", "root": str(root), "validation": "dev"})
    monkeypatch.setattr(HatefulMemesSource, "iter_posts", lambda self, path: pytest.fail(f"{path} was read"))
    check_split(source, "train")
    with pytest.raises(FileNotFoundError, match=r"^data.validation: .*dev.jsonl does not exist"):
        check_split(source, "validation")
    (root / "train.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match=r"^data.root: .*train.jsonl does not exist"):
        source.posts("train")


def test_a_root_pointed_at_the_wrong_folder_is_named_by_its_recipe_key_with_what_the_folder_holds(
    tmp_path, monkeypatch
):
    source = build_source_spec({"type": "hateful_memes", "root": str(tmp_path)}, "data.sources[1]")
    monkeypatch.setattr(HatefulMemesSource, "iter_posts", lambda self, path: pytest.fail(f"{path} was read"))
    expected = (
        f"^data.sources\\[1\\].root: {re.escape(str(tmp_path / 'train.jsonl'))} does not exist .*; "
        "root must be the Hateful Memes folder holding train.jsonl"
    )
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(FileNotFoundError, match=expected):
            read(source, "train")


def test_a_split_it_does_not_give_is_refused_by_its_recipe_path_with_the_splits_there_are(root):
    source = build_source_spec({"type": "hateful_memes", "root": str(root)}, "data.sources[1]")
    found = "found: train, validation, test"
    expected = f"^\"data.sources\\[1\\]: no split 'tset' under {re.escape(str(root))}; {found}\"$"
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(KeyError, match=expected):
            read(source, "tset")


def test_validation_choice_picks_the_matching_test_file(root):
    assert HatefulMemesSource(str(root)).splits() == ["train", "validation", "test"]
    unseen = HatefulMemesSource(str(root), validation="dev_unseen", task="hate")
    assert unseen.splits() == ["train", "validation"]
    assert [(p.id, p.labels) for p in unseen.posts("validation")] == [("4", {"hate": 0}), ("3", {"hate": 1})]
    assert unseen.describe("test") == str(root / "test_unseen.jsonl")
    assert unseen.fingerprint("validation") != HatefulMemesSource(str(root)).fingerprint("validation")


def test_errors_name_the_file_row_and_value(root):
    with pytest.raises(FileNotFoundError, match="test_unseen.jsonl does not exist"):
        HatefulMemesSource(str(root), validation="dev_unseen").posts("test")
    write(root / "train.jsonl", [meme(1, 0), meme(2, 2)])
    with pytest.raises(ValueError, match=r"train.jsonl:2: unknown label 2; valid: 0, 1"):
        HatefulMemesSource(str(root)).posts("train")
    write(root / "train.jsonl", [{"id": 1, "text": "no image key"}])
    with pytest.raises(ValueError, match="train.jsonl:1: missing 1 key: img$"):
        HatefulMemesSource(str(root)).posts("train")
    with pytest.raises(ValueError, match=r"validation 'dev_sen' is not one of .*did you mean 'dev_seen'"):
        HatefulMemesSource(str(root), validation="dev_sen")


def test_a_line_without_an_id_takes_its_place_as_its_id_as_a_jsonl_file_does(root):
    lines = [meme(1, 0), meme(2, 1) | {"id": None}, {"img": "img/00003.png", "text": "c"}, meme(4, 0) | {"id": ""}]
    write(root / "train.jsonl", lines)
    posts = HatefulMemesSource(str(root)).posts("train")
    assert [post.id for post in posts] == ["1", "1", "2", "3"]
    assert [post.id for post in JsonlSource().iter_posts(root / "train.jsonl")] == ["1", "1", "2", "3"]
    assert posts[2].images == ["img/00003.png"] and posts[2].origin == f"{root / 'train.jsonl'}:3"

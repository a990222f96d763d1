"""The emoji mismatch task: every picture and caption once matched and once not, splits by emoji group."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from faim.data.emoji_pairs import EmojiPairsSource
from faim.registry import build_source_spec

CATEGORIES = ("food", "people", "travel")


@pytest.fixture
def gem(tmp_path: Path) -> Path:
    """A gemojione-shaped folder: 30 emoji in three categories, some with skin-tone variants."""
    root = tmp_path / "usr" / "share" / "gems" / "gemojione-3.3.0"
    (root / "config").mkdir(parents=True)
    (root / "assets" / "png").mkdir(parents=True)
    index = {}
    for number in range(30):
        keys = [f"emoji{number}"] + ([f"emoji{number}_tone{t}" for t in (1, 2)] if number % 5 == 0 else [])
        for key in keys:
            code = f"1F{len(index):03X}"
            index[key] = {"unicode": code, "name": key.replace("_", " "), "keywords": [f"word{number}"],
                          "category": CATEGORIES[number % 3]}  # fmt: skip
            Image.new("RGBA", (8, 8), (number * 8, 0, 0, 255)).save(root / "assets" / "png" / f"{code}.png")
    (root / "config" / "index.json").write_text(json.dumps(index), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("wrong", ["random", "category"])
def test_each_picture_and_caption_is_matched_once_and_mismatched_once(gem: Path, wrong: str) -> None:
    source = EmojiPairsSource(str(gem), wrong=wrong)
    for split in source.splits():
        posts = source.posts(split)
        assert Counter(p.labels["mismatch"] for p in posts) == {0: len(posts) // 2, 1: len(posts) // 2}
        for field in (lambda p: p.text, lambda p: p.images[0]):
            assert set(Counter((field(p), p.labels["mismatch"]) for p in posts).values()) == {1}
            assert {label for p in posts for label in [p.labels["mismatch"]]} == {0, 1}
        for post in (p for p in posts if p.labels["mismatch"]):
            own = post.meta["emoji"].split("_tone")[0]
            assert not post.text.startswith(own.replace("_", " ") + " ") and not post.text.startswith(own + ":")
            if wrong == "category":
                assert post.text.split(":")[1].strip() != ""


def test_tone_groups_never_cross_the_split_and_the_split_is_seeded(gem: Path) -> None:
    split = EmojiPairsSource(str(gem)).split_emoji()
    groups = {name: {key.split("_tone")[0] for key in keys} for name, keys in split.items()}
    assert not groups["train"] & groups["validation"] and groups["validation"]
    assert EmojiPairsSource(str(gem)).split_emoji() == split != EmojiPairsSource(str(gem), seed=1).split_emoji()


def test_a_split_it_does_not_give_is_refused_by_its_recipe_path(gem: Path) -> None:
    source = build_source_spec({"type": "emoji_pairs", "root": str(gem)}, "data.sources[1]")
    with pytest.raises(KeyError, match=r"^\"data.sources\[1\]: no split 'test'; found: train, validation\"$"):
        source.posts("test")


def test_a_missing_package_says_how_to_get_it_naming_the_root_by_its_recipe_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(FileNotFoundError, match=r"^data.root: no gemojione index under .*apt-get download ruby-gemo"):
        EmojiPairsSource(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    from_recipe = "; a recipe's data paths are read from the working directory, not its folder"
    said = f"data.root: no gemojione index under 'my gem' (resolved to {tmp_path / 'my gem'});"
    with pytest.raises(FileNotFoundError, match=f"^{re.escape(said)} .*{re.escape(from_recipe)}$"):
        EmojiPairsSource("my gem")

"""The ``tweeteval`` adapter on a generated folder in TweetEval's layout, and on the real hate set when present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faim.data.sources import check_split
from faim.data.tweeteval import TweetEvalSource
from faim.registry import build_source_spec

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tweeteval_hate"


@pytest.fixture
def root(tmp_path):
    (tmp_path / "train_text.txt").write_text("first tweet\n\n@user third\n", encoding="utf-8")
    (tmp_path / "train_labels.txt").write_text("0\n1\n1\n", encoding="utf-8")
    (tmp_path / "val_text.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "val_labels.txt").write_text("1\n0\n", encoding="utf-8")
    (tmp_path / "test_text.txt").write_text("unlabelled\n", encoding="utf-8")
    return tmp_path


def test_empty_line_stays_aligned_with_its_label(root):
    posts = TweetEvalSource(str(root), task="hate").posts("train")
    assert [(p.id, p.text, p.labels) for p in posts] == [
        ("0", "first tweet", {"hate": 0}),
        ("1", None, {"hate": 1}),
        ("2", "@user third", {"hate": 1}),
    ]
    assert posts[1].origin == f"{root / 'train_text.txt'}:2"


def test_splits_validation_prefix_and_withheld_labels(root):
    source = TweetEvalSource(str(root), task="offensive")
    assert source.splits() == ["train", "validation", "test"]
    assert [p.labels for p in source.posts("validation")] == [{"offensive": 1}, {"offensive": 0}]
    assert [p.labels for p in source.posts("test")] == [{}]
    assert source.describe("validation") == str(root / "val_text.txt")


def test_unknown_split_and_misaligned_files(root):
    (root / "test_text.txt").unlink()
    assert TweetEvalSource(str(root)).splits() == ["train", "validation"]
    for read in (check_split, lambda source, split: source.posts(split)):  # not a wrong root: the file is optional
        with pytest.raises(KeyError, match="data: no split 'test' under .*found: train, validation"):
            read(TweetEvalSource(str(root)), "test")
    with pytest.raises(KeyError, match="data: no split 'tset' .*found: train, validation"):
        TweetEvalSource(str(root)).posts("tset")
    (root / "val_labels.txt").write_text("1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="val_text.txt has 2 lines but .*val_labels.txt has 1"):
        TweetEvalSource(str(root)).posts("validation")
    (root / "val_labels.txt").write_text("1\nhate\n", encoding="utf-8")
    with pytest.raises(ValueError, match="val_labels.txt:2: label 'hate' is not an integer"):
        TweetEvalSource(str(root)).posts("validation")


def test_a_root_pointed_at_the_wrong_folder_is_named_by_its_recipe_key_with_what_the_folder_holds(
    tmp_path, monkeypatch
):
    source = build_source_spec({"type": "tweeteval", "root": str(tmp_path)}, "data.sources[1]")
    monkeypatch.setattr(TweetEvalSource, "iter_posts", lambda self, path: pytest.fail(f"{path} was read"))
    expected = (
        f"^data.sources\\[1\\].root: {re.escape(str(tmp_path / 'train_text.txt'))} does not exist .*; "
        "root must be a TweetEval task folder .* holding train_text.txt"
    )
    for read in (check_split, lambda source, split: source.posts(split)):
        for split in ("train", "test"):  # test too: the folder is not one without a test file
            with pytest.raises(FileNotFoundError, match=expected):
                read(source, split)


def test_fingerprint_covers_texts_and_labels(root):
    source = TweetEvalSource(str(root))
    before = source.fingerprint("train")
    (root / "train_labels.txt").write_text("1\n1\n1\n", encoding="utf-8")
    assert source.fingerprint("train") != before and len(before) == 64


@pytest.mark.real_data
@pytest.mark.skipif(not REAL.is_dir(), reason=f"TweetEval hate data not found at {REAL}")
def test_real_tweeteval_hate():
    source = TweetEvalSource(str(REAL))
    train = source.posts("train")
    assert len(train) == 9000 and sum(p.text is None for p in train) == 7
    assert sum(p.labels["hate"] for p in train) == 3783
    assert len(source.posts("validation")) == 1000

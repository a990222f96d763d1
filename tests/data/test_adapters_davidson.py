"""The ``davidson`` adapter and the shared stratified split, on a generated ``labeled_data.csv`` and the real file."""

from __future__ import annotations

import csv
import inspect
from collections import Counter
from pathlib import Path

import pytest

from faim.data.davidson import LABELS, DavidsonSource
from faim.registry import SOURCES

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "davidson2017"
HEADER = ["", "count", "hate_speech", "offensive_language", "neither", "class", "tweet"]


def write(root: Path, rows: list[tuple[int, str]]) -> Path:
    """``labeled_data.csv`` with (class, tweet) rows; the index column skips 5 like the real one has gaps."""
    with open(root / "labeled_data.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for index, (klass, tweet) in enumerate(rows):
            writer.writerow([index if index < 5 else index + 1, 3, 0, 0, 3, klass, tweet])
    return root / "labeled_data.csv"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    rows = [(0, 'multi\nline, "quoted"'), (1, "second"), (2, "")]
    write(tmp_path, rows + [(i % 3, f"tweet {i}") for i in range(3, 63)])
    return tmp_path


def test_registered_with_recipe_arguments():
    assert SOURCES["davidson"] is DavidsonSource
    assert list(inspect.signature(DavidsonSource).parameters) == [
        "root",
        "validation_fraction",
        "seed",
        "task",
        "labels",
    ]
    assert LABELS["three_way"] == ["hate", "offensive", "neither"] and LABELS["binary"] == ["not-hate", "hate"]


def test_rows_stay_aligned_across_a_multiline_tweet(root):
    posts = list(DavidsonSource(str(root)).iter_posts(root / "labeled_data.csv"))
    assert [(p.id, p.text, p.labels, p.meta) for p in posts[:3]] == [
        ("0", 'multi\nline, "quoted"', {"hate": 0}, {"class": 0}),
        ("1", "second", {"hate": 1}, {"class": 1}),
        ("2", None, {"hate": 2}, {"class": 2}),
    ]
    assert [p.origin.rsplit(":", 1)[1] for p in posts[:3]] == ["2", "4", "5"]
    assert posts[5].id == "6" and len(posts) == 63


@pytest.mark.parametrize(("labels", "expected"), [("binary", [1, 0, 0]), ("abusive", [1, 1, 0])])
def test_two_label_views_collapse_the_classes(root, labels, expected):
    posts = list(DavidsonSource(str(root), labels=labels, task="h").iter_posts(root / "labeled_data.csv"))
    assert [(p.labels["h"], p.meta["class"]) for p in posts[:3]] == list(zip(expected, [0, 1, 2]))
    assert len(LABELS[labels]) == 2


def test_hate_vs_neither_leaves_the_offensive_tweets_out_of_the_same_splits(root):
    binary = DavidsonSource(str(root), validation_fraction=0.2, labels="binary", task="h")
    narrowed = DavidsonSource(str(root), validation_fraction=0.2, labels="hate_vs_neither", task="h")
    for split in ("train", "validation"):
        kept = [p for p in binary.posts(split) if p.meta["class"] != 1]
        assert [(p.id, p.labels) for p in narrowed.posts(split)] == [(p.id, p.labels) for p in kept]
        assert {p.meta["class"] for p in narrowed.posts(split)} == {0, 2}
    assert narrowed.describe("train").endswith("offensive tweets left out")
    assert narrowed.fingerprint("train") != binary.fingerprint("train")


def test_split_is_stratified_disjoint_and_deterministic(root):
    source = DavidsonSource(str(root), validation_fraction=0.2)
    train, validation = source.posts("train"), source.posts("validation")
    assert not {p.id for p in train} & {p.id for p in validation}
    assert len(train) + len(validation) == 63
    assert Counter(p.meta["class"] for p in validation) == {0: 4, 1: 4, 2: 4}
    again = DavidsonSource(str(root), validation_fraction=0.2, labels="binary").posts("validation")
    assert [p.id for p in again] == [p.id for p in validation]
    other = DavidsonSource(str(root), validation_fraction=0.2, seed=1).posts("validation")
    assert [p.id for p in other] != [p.id for p in validation]


def test_describe_and_fingerprint(root):
    source = DavidsonSource(str(root))
    assert source.describe("validation").startswith(str(root / "labeled_data.csv"))
    train, validation = source.fingerprint("train"), source.fingerprint("validation")
    assert len(train) == 64 and train != validation
    assert DavidsonSource(str(root), seed=3).fingerprint("train") != train


def test_errors_name_the_file_row_and_value(root):
    write(root, [(1, "ok"), (3, "bad")])
    with pytest.raises(ValueError, match=r"labeled_data.csv:3: unknown label '3'.*valid: 0, 1, 2"):
        DavidsonSource(str(root)).posts("train")
    (root / "labeled_data.csv").write_text("tweet,label\nhi,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing 1 column: class; found: tweet, label"):
        DavidsonSource(str(root)).posts("train")
    with pytest.raises(ValueError, match="labels 'binry' is not one of three_way, binary, abusive"):
        DavidsonSource(str(root), labels="binry")


@pytest.mark.real_data
@pytest.mark.skipif(not REAL.is_dir(), reason=f"Davidson et al. data not found at {REAL}")
def test_real_davidson():
    source = DavidsonSource(str(REAL))
    train, validation = source.posts("train"), source.posts("validation")
    assert Counter(p.labels["hate"] for p in train) == {0: 1287, 1: 17271, 2: 3747}
    assert Counter(p.labels["hate"] for p in validation) == {0: 143, 1: 1919, 2: 416}
    assert len(train) + len(validation) == 24783

"""The ``liar`` adapter on generated ``.tsv`` files in LIAR's layout, and on the real set when present."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from pathlib import Path

import pytest

from faim.data.liar import BINARY, SIX_WAY, LiarSource
from faim.data.sources import check_split
from faim.registry import SOURCES, build_source_spec

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "liar"
ROW = ["2635.json", "false", 'Says "quoted text', "abortion,health", "dwayne-bohac", "State representative", "Texas"]
ROW += ["republican", "0", "1", "0", "0", "0", "a mailer"]


def tsv(rows: list[list[str]]) -> str:
    return "".join("\t".join(row) + "\n" for row in rows)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    others = [
        [f"{i}.json", label, f"statement {i}", "s", "x", "", "", "none", "1", "2", "3", "4", "5", ""]
        for i, label in enumerate(SIX_WAY)
    ]
    (tmp_path / "train.tsv").write_text(tsv([ROW, *others]), encoding="utf-8")
    (tmp_path / "valid.tsv").write_text(tsv(others[:2]), encoding="utf-8")
    return tmp_path


def test_registered_with_recipe_arguments():
    assert SOURCES["liar"] is LiarSource
    assert list(inspect.signature(LiarSource).parameters) == ["root", "task", "labels", "metadata"]
    assert SIX_WAY == ["pants-fire", "false", "barely-true", "half-true", "mostly-true", "true"]
    assert BINARY == ["not-false", "false"]


def test_columns_quotes_and_six_way_labels(root):
    posts = LiarSource(str(root)).posts("train")
    first = posts[0]
    assert (first.id, first.text, first.labels, first.origin) == (
        "2635.json",
        'Says "quoted text',
        {"truth": 1},
        f"{root / 'train.tsv'}:1",
    )
    assert first.meta == {
        "subject": "abortion,health",
        "speaker": "dwayne-bohac",
        "job": "State representative",
        "state": "Texas",
        "party": "republican",
        "context": "a mailer",
        "history_barely-true": 0,
        "history_false": 1,
        "history_half-true": 0,
        "history_mostly-true": 0,
        "history_pants-fire": 0,
    }
    assert [p.labels["truth"] for p in posts[1:]] == [0, 1, 2, 3, 4, 5]
    assert posts[1].meta["job"] is None and posts[1].meta["context"] is None


def test_binary_labels(root):
    posts = LiarSource(str(root), labels="binary", task="fake").posts("train")
    assert [p.labels["fake"] for p in posts[1:]] == [1, 1, 1, 0, 0, 0]


def test_metadata_text(root):
    posts = LiarSource(str(root), metadata=True).posts("train")
    assert posts[0].text == (
        'Says "quoted text [SEP] speaker: dwayne-bohac; party: republican; job: State representative; '
        "state: Texas; subject: abortion,health; context: a mailer; "
        "history: barely-true 0, false 1, half-true 0, mostly-true 0, pants-fire 0"
    )
    assert posts[1].text == (
        "statement 0 [SEP] speaker: x; party: none; subject: s; "
        "history: barely-true 1, false 2, half-true 3, mostly-true 4, pants-fire 5"
    )


def test_splits_follow_the_files(root):
    source = LiarSource(str(root))
    assert source.splits() == ["train", "validation"]
    with pytest.raises(KeyError, match="data: no split 'test' under .*; found: train, validation"):  # not a wrong root
        check_split(source, "test")
    assert len(source.posts("validation")) == 2 and source.describe("validation") == str(root / "valid.tsv")
    (root / "test.tsv").write_text(tsv([ROW]), encoding="utf-8")
    assert source.splits() == ["train", "validation", "test"]
    assert source.fingerprint("train") != LiarSource(str(root), metadata=True).fingerprint("train")


def test_errors_name_the_file_row_and_value(root):
    (root / "valid.tsv").unlink()
    with pytest.raises(FileNotFoundError, match="valid.tsv does not exist"):
        LiarSource(str(root)).posts("validation")
    bad = [*ROW[:1], "mostly-false", *ROW[2:]]
    (root / "train.tsv").write_text(tsv([ROW, bad]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"train.tsv:2: unknown label 'mostly-false'.*valid: pants-fire, false"):
        LiarSource(str(root)).posts("train")
    (root / "train.tsv").write_text(tsv([ROW, ROW[:13]]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"train\.tsv:2: expected 14 cells \(id, label, .*\), got 13: "):
        LiarSource(str(root)).posts("train")
    (root / "train.tsv").write_text(tsv([[*ROW[:8], "many", *ROW[9:]]]), encoding="utf-8")
    with pytest.raises(ValueError, match="train.tsv:1: credit history count 'many'"):
        LiarSource(str(root)).posts("train")
    with pytest.raises(ValueError, match="labels 'six' is not one of six_way, binary"):
        LiarSource(str(root), labels="six")


def test_a_root_pointed_at_the_wrong_folder_is_named_by_its_recipe_key_with_what_the_folder_holds(
    tmp_path, monkeypatch
):
    source = build_source_spec({"type": "liar", "root": str(tmp_path)}, "data.sources[1]")
    monkeypatch.setattr(LiarSource, "iter_posts", lambda self, path: pytest.fail(f"{path} was read"))
    expected = (
        f"^data.sources\\[1\\].root: {re.escape(str(tmp_path / 'valid.tsv'))} does not exist .*; "
        "root must be the LIAR folder holding train.tsv, valid.tsv"
    )
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(FileNotFoundError, match=expected):
            read(source, "validation")
    with pytest.raises(FileNotFoundError, match="^data.sources\\[1\\].root: .*train.tsv does not exist .*"):
        check_split(source, "test")  # not a LIAR folder without a test file: no LIAR folder at all


@pytest.mark.real_data
@pytest.mark.skipif(not REAL.is_dir(), reason=f"LIAR data not found at {REAL}")
def test_real_liar():
    source = LiarSource(str(REAL))
    train, validation = source.posts("train"), source.posts("validation")
    assert len(train) == 10269 and len(validation) == 1284
    assert Counter(SIX_WAY[p.labels["truth"]] for p in train) == {
        "half-true": 2123,
        "false": 1998,
        "mostly-true": 1966,
        "true": 1683,
        "barely-true": 1657,
        "pants-fire": 842,
    }
    assert Counter(p.labels["truth"] for p in LiarSource(str(REAL), labels="binary").posts("validation")) == {
        0: 668,
        1: 616,
    }


def test_a_root_beginning_with_a_tilde_is_under_the_home_folder(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(root.parent))
    source = build_source_spec({"type": "liar", "root": f"~/{root.name}"}, "data")
    assert source.posts("train") == LiarSource(str(root)).posts("train")

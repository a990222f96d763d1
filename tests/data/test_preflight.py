"""Checks of posts before a model reads them: a kind the model reads that no post of a recipe's split holds is warned
of, naming its file and the columns its mapping leaves unread, and pictures that are not there are refused up front,
naming the rows."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from faim.data.columns import ColumnMap
from faim.data.concat import ConcatSource
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.preflight import (
    refuse_missing_pictures,
    refuse_unevaluable,
    refuse_unreadable,
    unread_columns,
    warn_shared_ids,
    warn_source_split,
)
from faim.data.sources import JsonlSource
from faim.data.without import WithoutSource
from faim.notices import FaimWarning

KINDS = ["comments", "image", "text"]


def test_pictures_not_there_are_refused_naming_the_count_and_the_first_rows(tmp_path: Path) -> None:
    (tmp_path / "ok.png").write_bytes(b"not decoded here")
    (tmp_path / "empty.png").touch()
    (tmp_path / "folder.png").mkdir()
    refs = ["ok.png", "gone.png", "empty.png", "folder.png", b"", *[f"gone{n}.png" for n in range(4)]]
    posts = [Post(str(n), "t", images=["ok.png", ref], origin=f"p.jsonl:{n + 1}", image_root=tmp_path)
             for n, ref in enumerate(refs)]  # fmt: skip
    with pytest.raises(ValueError) as error:
        refuse_missing_pictures(posts, KINDS, 8, "p.jsonl")
    message = str(error.value)
    assert message.startswith("p.jsonl: 8 of 9 posts name a picture that is not there (missing, a folder or empty): ")
    assert "p.jsonl:2 (post id='1') field 'images': image 'gone.png': file not found (resolved to " in message
    assert "p.jsonl:3 (post id='2') field 'images': image 'empty.png': empty file" in message
    assert "p.jsonl:4 (post id='3') field 'images': image 'folder.png': is a directory" in message
    assert "p.jsonl:5 (post id='4') field 'images': image <0 bytes>: empty" in message
    assert "p.jsonl:6 (post id='5')" in message and "p.jsonl:7" not in message
    assert message.endswith("; and 3 more; mend the paths or the folder they resolve against, or leave those posts out")


def test_the_count_of_posts_naming_a_picture_not_there_reads_as_words(tmp_path: Path) -> None:
    def said(refs: list[str]) -> str:
        posts = [
            Post(str(n), "t", images=[ref], origin=f"p.jsonl:{n + 1}", image_root=tmp_path)
            for n, ref in enumerate(refs)
        ]
        with pytest.raises(ValueError) as error:
            refuse_missing_pictures(posts, KINDS, 8, "p.jsonl")
        return str(error.value).split(" (missing")[0]

    (tmp_path / "ok.png").write_bytes(b"not decoded here")
    assert said(["gone.png"]) == "p.jsonl: 1 of 1 post names a picture that is not there"
    assert said(["gone.png", "ok.png"]) == "p.jsonl: 1 of 2 posts names a picture that is not there"
    assert said(["gone.png", "gone2.png"]) == "p.jsonl: 2 of 2 posts name a picture that is not there"


def test_pictures_the_model_does_not_read_are_not_looked_at(tmp_path: Path) -> None:
    posts = [Post("a", "t", images=["ok.png", "gone.png"], image_root=tmp_path)]
    (tmp_path / "ok.png").write_bytes(b"x")
    refuse_missing_pictures(posts, ["text"], 8, "p.jsonl")  # a text model
    refuse_missing_pictures(posts, KINDS, 1, "p.jsonl")  # the second picture is beyond what a post gives the model
    with pytest.raises(ValueError, match=re.escape("p.jsonl: 1 of 1 post names a picture that is not there")):
        refuse_missing_pictures(posts, KINDS, 2, "p.jsonl")


def test_posts_a_model_would_stop_at_are_refused_a_text_that_is_not_text_first_then_pictures_not_there(
    tmp_path: Path,
) -> None:
    (tmp_path / "ok.png").write_bytes(b"x")
    posts = [
        Post("a", "fine", images=["ok.png"], origin="p.jsonl:1", image_root=tmp_path),
        Post("b", "fine", images=["gone.png"], origin="p.jsonl:2", image_root=tmp_path),
        Post("c", "cut \ud83d", origin="p.jsonl:3"),
    ]
    with pytest.raises(PostError, match=re.escape("p.jsonl:3 (post id='c') field 'text': holds half of a UTF-16")):
        refuse_unreadable(posts, KINDS, 8, "p.jsonl", fused=KINDS)
    with pytest.raises(ValueError, match=re.escape("p.jsonl: 1 of 2 posts names a picture that is not there")):
        refuse_unreadable(posts[:2], KINDS, 8, "p.jsonl", fused=KINDS)
    refuse_unreadable(posts[:1], KINDS, 8, "p.jsonl", fused=KINDS)


def test_a_post_whose_id_was_taken_away_after_it_was_built_is_refused_naming_its_origin() -> None:
    posts = [Post("a", "first", origin="p.jsonl:1"), Post("b", "second", origin="p.jsonl:2")]
    posts[1].id = None  # as a data source's plug-in may set it: training, evaluation and calibration read none so
    with pytest.raises(ValueError, match=r"^p.jsonl:2 field 'id': missing; give each post an id"):
        refuse_unreadable(posts, KINDS, 8, "p.jsonl", fused=KINDS)


def test_a_post_whose_text_was_set_to_a_number_after_it_was_built_is_refused_naming_its_origin() -> None:
    posts = [Post("a", "first", origin="p.jsonl:1"), Post("b", "second", origin="p.jsonl:2")]
    posts[1].text = 5  # as a data source's plug-in may set it: the tokenizer would fail on it part way
    with pytest.raises(ValueError, match=r"^p.jsonl:2 \(post id='b'\) field 'text': expected a string, got int$"):
        refuse_unreadable(posts, KINDS, 8, "p.jsonl", fused=KINDS)


def test_a_post_whose_id_was_set_to_a_number_after_it_was_built_is_read_with_it_as_text() -> None:
    posts = [Post("a", "first", origin="p.jsonl:1"), Post("b", "second", origin="p.jsonl:2")]
    posts[1].id = 7  # as a data source's plug-in may set it: training, evaluation and calibration read it as text
    refuse_unreadable(posts, KINDS, 8, "p.jsonl", fused=KINDS)
    assert [post.id for post in posts] == ["a", "7"]


def test_posts_an_evaluation_could_not_finish_are_refused_unlabelled_first_then_unreadable(tmp_path: Path) -> None:
    (tmp_path / "ok.png").write_bytes(b"x")
    cut = Post("c", "cut \ud83d", labels={"hate": 1}, origin="p.jsonl:3")
    posts = [Post("a", "fine", images=["ok.png"], origin="p.jsonl:1", image_root=tmp_path), cut]
    with pytest.raises(ValueError, match=r"^p.jsonl: no post carries a label for any task \(hate\); label them$"):
        refuse_unevaluable(
            [*posts[:1], replace(cut, labels={})], ["hate"], KINDS, 8, "p.jsonl", "label them", fused=KINDS
        )
    with pytest.raises(PostError, match=re.escape("p.jsonl:3 (post id='c') field 'text': holds half of a UTF-16")):
        refuse_unevaluable(posts, ["hate"], KINDS, 8, "p.jsonl", fused=KINDS)
    refuse_unevaluable([*posts[:1], replace(cut, text="whole")], ["hate"], KINDS, 8, "p.jsonl", fused=KINDS)


def test_a_recipe_split_is_warned_of_naming_its_file_and_the_columns_its_mapping_leaves_unread(tmp_path: Path) -> None:
    rows = [{"id": str(n), "text": "t", "img": "a.png", "comments": ["c"], "label": 1} for n in range(3)]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    source = JsonlSource(train=str(data), columns={"labels": {"harmful": "label"}})
    with pytest.warns(FaimWarning, match=re.escape(
        f"{data}: no post holds any image, which the model reads: each is read without one, as where the column "
        "holding them is not mapped; map the column that holds them in the recipe (data.columns: {image: COLUMN}) "
        "(columns of the data no mapping reads: img)"
    )):  # fmt: skip
        warn_source_split(source, "train", source.posts("train"), KINDS)


def test_unread_columns_say_an_unmapped_meta_column_is_read_where_it_holds_an_object_but_a_csv_one_is_not(tmp_path):
    (tmp_path / "p.jsonl").write_text(json.dumps({"id": "a", "text": "hi", "meta": {"likes": 3}, "topic": "x"}) + "\n")
    (tmp_path / "p.csv").write_text('id,text,meta\na,hi,"{""likes"": 3}"\n')
    read = ["meta (read where it holds an object)", "topic"]
    assert unread_columns(tmp_path / "p.jsonl", ColumnMap()) == read
    mapped = ColumnMap.from_recipe({"meta": ["topic"]})  # the column still gives the meta fields it does not name
    assert unread_columns(tmp_path / "p.jsonl", mapped) == ["meta (read where it holds an object)"]
    assert unread_columns(tmp_path / "p.jsonl", ColumnMap.from_recipe({"meta": None})) == ["meta", "topic"]
    assert unread_columns(tmp_path / "p.csv", ColumnMap()) == ["meta"]


def written_split(path: Path, ids: list) -> str:
    """``path`` holding a post of each of ``ids`` (``None``: a post without one), as a split's file."""
    rows = [{"text": "t"} if ident is None else {"id": ident, "text": "t"} for ident in ids]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def shared_ids_said(source: JsonlSource, splits: list[str]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_shared_ids(source, {split: source.posts(split) for split in splits})
    assert all(warning.category is FaimWarning for warning in caught)
    return [str(warning.message) for warning in caught]


def test_ids_repeated_in_a_split_or_shared_with_the_training_split_are_warned_of_naming_the_files_and_ids(
    tmp_path: Path,
) -> None:
    train = written_split(tmp_path / "train.jsonl", ["a", "b", "b", "c", "d", "e", "f"])
    validation = written_split(tmp_path / "validation.jsonl", ["x", "a", "c", "d", "e", "x"])
    source = JsonlSource(train=train, validation=validation)
    leak = "where they are the same posts, the validation split measures posts the model was trained on"
    assert shared_ids_said(source, ["train", "validation"]) == [
        f"{train}: 1 id given to more than one post: 'b'; give each post an id of its own",
        f"{validation}: 1 id given to more than one post: 'x'; give each post an id of its own",
        f"{validation}: 4 ids its posts share with the training posts of {train}: 'a', 'c', 'd', ...; {leak}",
    ]


def test_ids_posts_take_from_their_place_are_not_said_to_be_shared_nor_those_of_a_split_apart(tmp_path: Path) -> None:
    train = written_split(tmp_path / "train.jsonl", [None, None, "a", 3])  # 3 is its place: no post is named by it
    validation = written_split(tmp_path / "validation.jsonl", [None, "1", None, 3, "b"])
    assert shared_ids_said(JsonlSource(train=train, validation=validation), ["train", "validation"]) == []


def test_a_split_reading_the_training_splits_own_files_is_warned_of_with_or_without_ids(tmp_path: Path) -> None:
    train = written_split(tmp_path / "train.jsonl", [None, None, None])
    other = written_split(tmp_path / "other.jsonl", ["b", None])
    leak = "the validation split measures posts the model was trained on"
    assert shared_ids_said(JsonlSource(train=train, validation=train), ["train", "validation"]) == [
        f"{train}: reads 1 file of the training split: {train!r}; {leak}"
    ]
    named = written_split(tmp_path / "named.jsonl", ["a", "b"])  # its ids are shared as its file is: said once
    (tmp_path / "link.jsonl").symlink_to(named)
    link = str(tmp_path / "link.jsonl")
    assert shared_ids_said(JsonlSource(train=named, validation=link), ["train", "validation"]) == [
        f"{link}: reads 1 file of the training split: {named!r}; {leak}"
    ]
    (tmp_path / "folder").mkdir()  # a folder holding the training file and another: its ids are compared too
    first = written_split(tmp_path / "folder" / "a.jsonl", ["a", "b"])
    written_split(tmp_path / "folder" / "b.jsonl", ["b", "c"])
    folder = str(tmp_path / "folder")
    assert shared_ids_said(JsonlSource(train=first, validation=folder), ["train", "validation"]) == [
        f"{folder}: reads 1 file of the training split: {first!r}; {leak}",
        f"{folder}: 1 id given to more than one post: 'b'; give each post an id of its own",
        f"{folder}: 2 ids its posts share with the training posts of {first}: 'a', 'b'; where they are the same "
        f"posts, {leak}",
    ]
    assert shared_ids_said(JsonlSource(train=train, validation=other), ["train", "validation"]) == []


def test_a_split_reading_a_training_file_is_warned_of_through_a_concat_or_without_source(tmp_path: Path) -> None:
    train = written_split(tmp_path / "train.jsonl", [None, None])
    validation = written_split(tmp_path / "validation.jsonl", [None])
    first = {"type": "jsonl", "train": train, "validation": validation}
    concat = ConcatSource([first, {"type": "jsonl", "train": validation}])
    leak = "the validation split measures posts the model was trained on"
    assert shared_ids_said(concat, ["train", "validation"]) == [
        f"{validation}: reads 1 file of the training split: {validation!r}; {leak}"
    ]
    grouped = tmp_path / "grouped.jsonl"
    grouped.write_text("".join(json.dumps({"text": "t", "meta": {"g": g}}) + "\n" for g in "ab"), encoding="utf-8")
    left = WithoutSource({"type": "jsonl", "train": str(grouped), "validation": str(grouped)}, "g", ["a"])
    assert shared_ids_said(left, ["train", "validation"]) == [
        f"{grouped} without g a: reads 1 file of the training split: {str(grouped)!r}; {leak}"
    ]

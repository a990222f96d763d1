"""Warnings of posts holding no element of a kind the model reads, or no metadata field it reads, naming how to give
them."""

from __future__ import annotations

import warnings

import pytest

from faim.data.post import Post
from faim.data.unheld import warn_unheld_kinds
from faim.notices import FaimWarning

KINDS = ["comments", "image", "text"]


def test_a_kind_no_post_holds_is_warned_of_naming_it_how_to_map_it_and_the_unread_columns() -> None:
    posts = [Post(str(n), f"post {n}", comments=["a reply"] if n else []) for n in range(3)]
    with pytest.warns(FaimWarning) as said:
        warn_unheld_kinds(posts, KINDS, "posts.jsonl", columns=lambda: ["img", "likes"])
    assert [str(warning.message) for warning in said] == [
        "posts.jsonl: no post holds any image, which the model reads: each is read without one, as where the column "
        "holding them is not mapped; map the column that holds them with --map image=COLUMN (columns of the data no "
        "mapping reads: img, likes)"
    ]


def test_the_columns_no_mapping_reads_are_named_once_where_several_kinds_are_warned_of() -> None:
    posts = [Post(str(n), f"post {n}") for n in range(3)]
    with pytest.warns(FaimWarning) as said:
        warn_unheld_kinds(posts, KINDS, "posts.csv", columns=lambda: ["img", "replies"])
    messages = [str(warning.message) for warning in said]
    assert [message.split(",")[0] for message in messages] == [
        "posts.csv: no post holds any comments",
        "posts.csv: no post holds any image",
    ]
    assert messages[0].endswith("--map comments=COLUMN (columns of the data no mapping reads: img, replies)")
    assert messages[1].endswith("--map image=COLUMN")


def test_metadata_is_warned_of_where_the_column_mapped_to_it_holds_nothing_as_text_is() -> None:
    posts = [Post(str(n), meta={"likes": None}) for n in range(3)] + [Post("t", text=" ", meta={"likes": ""})]
    with pytest.warns(FaimWarning) as said:
        warn_unheld_kinds(posts, ["meta", "text"], "posts.csv")
    assert [str(warning.message).split(",")[0] for warning in said] == [
        "posts.csv: no post holds any metadata",
        "posts.csv: no post holds any text",
    ]


def test_metadata_is_warned_of_where_posts_hold_only_the_fields_faim_gives_them_itself() -> None:
    posts = [Post(str(n), f"post {n}", meta={"source": f"{n}-tweeteval", "lang": "en"}) for n in range(3)]
    with pytest.warns(FaimWarning) as said:
        warn_unheld_kinds(posts, ["meta", "text"], "concat train")
    assert [str(warning.message).split(",")[0] for warning in said] == ["concat train: no post holds any metadata"]


def test_nothing_is_said_where_each_kind_is_held_by_some_post_or_there_are_no_posts() -> None:
    posts = [Post("a", "text"), Post("b", images=["a.png"], comments=["c"])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unheld_kinds(posts, KINDS, "posts.jsonl", columns=lambda: pytest.fail("columns read for nothing"))
        warn_unheld_kinds([], KINDS, "posts.jsonl")

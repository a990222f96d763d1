"""Reading posts one by one: each post read once, in order, a post refused set aside with its error; a post holding
nothing a model reads refused as empty."""

from __future__ import annotations

import pickle
import re
import warnings
from typing import Any

import pytest

from faim.data import post
from faim.data.elements import (
    PostError,
    check_texts,
    leave_out_empty,
    posts_to_read,
    read_each,
    readable_posts,
    reads_nothing,
    warn_overfull_splits,
)
from faim.data.post import Post, checked_fields
from faim.notices import FaimWarning


def text_length(post: Post) -> int:
    if post.text == "refused":
        raise PostError(post, "text", "refused here", kind="test")
    if post.text == "broken":
        raise RuntimeError("not a post's fault")
    return len(post.text or "")


def test_each_post_is_read_once_in_order_and_one_refused_is_set_aside_with_its_error() -> None:
    posts = [Post(id="a", text="one"), Post(id="b", text="refused"), Post(id="c", text="three")]
    kept, errors = read_each(posts, text_length)
    assert [(post.id, length) for post, length in kept] == [("a", 3), ("c", 5)]
    assert [(error.post_id, error.kind) for error in errors] == [("b", "test")]


def test_an_error_that_is_not_the_posts_is_raised() -> None:
    with pytest.raises(RuntimeError, match="not a post's fault"):
        read_each([Post(id="a", text="broken")], text_length)


def test_a_post_holding_nothing_of_the_kinds_read_is_refused_as_empty_before_it_is_read() -> None:
    posts = [Post(id="a", text="one"), Post(id="b", comments=["only a comment"]), Post(id="c", text=" \n")]
    kept, errors = readable_posts(posts, ["text", "image"], text_length)
    assert [post.id for post in kept] == ["a"]
    assert [(error.post_id, error.kind, error.problem) for error in errors] == [
        ("b", "empty", "nothing the model reads (text, image): no text, no image"),
        ("c", "empty", "nothing the model reads (text, image): the text is empty, no image"),
    ]
    (error,) = readable_posts([Post(id="d", meta={})], ["comments", "meta"], text_length)[1]
    assert error.problem == "nothing the model reads (comments, meta): no comments, no metadata"


def test_a_post_holding_nothing_the_model_reads_is_refused_naming_the_posts_fields_and_not_the_kinds() -> None:
    refused = r"^post 1 \(post id='b'\) fields 'text', 'images': nothing the model reads \(text, image\): "
    with pytest.raises(PostError, match=refused) as raised:
        posts_to_read([{"id": "a", "text": "one"}, {"id": "b", "images": []}], ["text", "image"])
    assert raised.value.field == ("text", "images") and raised.value.kind == "empty"
    (error,) = readable_posts([Post(id="c")], ["image", "meta"], text_length)[1]
    assert str(error).startswith("post 0 (post id='c') fields 'images', 'meta': ")


def test_metadata_whose_every_field_is_missing_is_none_and_said_to_be_empty() -> None:
    posts = [Post("a", meta={"likes": None, "shares": float("nan"), "tag": ""}), Post("b", meta={"likes": 0})]
    assert [reads_nothing(post, ["meta"]) for post in posts] == [True, False]
    kept, errors = readable_posts(posts, ["comments", "meta"], text_length)
    assert kept == posts[1:]
    assert [(error.post_id, error.kind, error.problem) for error in errors] == [
        ("a", "empty", "nothing the model reads (comments, meta): no comments, the metadata is empty")
    ]


def test_a_post_holding_only_the_fields_faim_gives_posts_itself_holds_no_metadata_and_is_refused() -> None:
    posts = [Post("a", meta={"source": "1-davidson", "lang": "en"}), Post("b", meta={"source": "0-liar", "likes": 2})]
    kept, errors = readable_posts(posts, ["comments", "meta"], text_length)
    assert kept == posts[1:]
    assert [(error.post_id, error.kind, error.problem) for error in errors] == [
        ("a", "empty", "nothing the model reads (comments, meta): no comments, no metadata")
    ]
    with pytest.warns(FaimWarning, match="1 of 2 posts hold nothing the model reads"):
        assert leave_out_empty(posts, ["comments", "meta"], "train") == posts[1:]


def test_a_post_holding_none_of_several_kinds_read_is_refused_naming_each_of_their_fields() -> None:
    _, errors = readable_posts([Post(id="a", origin="f:2"), Post(id="b")], ["comments", "text"], text_length)
    named = [str(error).split(": nothing the model reads")[0] for error in errors]
    assert named == ["f:2 (post id='a') fields 'comments', 'text'", "post 1 (post id='b') fields 'comments', 'text'"]


def test_posts_holding_nothing_the_model_reads_are_refused_naming_the_first_and_listing_them_all() -> None:
    posts = [{"id": "a", "text": "one"}, *({"id": name, "text": " "} for name in "bcdefgh"), {"id": "i", "text": "x"}]
    first = "post 1 (post id='b') field 'text': nothing the model reads (text): the text is empty"
    listed = ", ".join(f"post {index} (post id={name!r})" for index, name in enumerate("bcdef", 1))
    aside = "leave them out (the model's readable(posts) sets such posts aside)"
    said = f"{first} (7 posts in all: {listed} and 2 more); {aside}"
    with pytest.raises(PostError, match=f"^{re.escape(said)}$") as refused:
        posts_to_read(posts, ["text"])
    assert refused.value.post_id == "b" and refused.value.kind == "empty"
    one = f"{first}; leave it out (the model's readable(posts) sets such posts aside)"
    with pytest.raises(PostError, match=f"^{re.escape(one)}$"):
        posts_to_read(posts[:2], ["text"])


def test_the_field_of_a_post_holding_nothing_read_is_the_one_kind_read_or_the_several() -> None:
    posts = [Post(id="a", text=" ")]
    assert [error.field for error in readable_posts(posts, ["text"], text_length)[1]] == ["text"]
    assert [error.field for error in readable_posts(posts, ["text", "meta"], text_length)[1]] == [("text", "meta")]
    with pytest.raises(PostError) as refused:
        posts_to_read(posts, ["text"])
    assert refused.value.field == "text"


def test_a_post_set_aside_is_named_by_its_origin_or_else_its_index_as_posts_to_read_names_it() -> None:
    posts = [Post(id="a", text="one"), Post(id="b", text="refused"), Post(id="c"), Post("d", "refused", origin="f:4")]
    kept, errors = readable_posts(posts, ["text"], text_length)
    assert kept == [posts[0]] and kept[0] is posts[0]
    assert [str(error) for error in errors] == [
        "post 1 (post id='b') field 'text': refused here",
        "post 2 (post id='c') field 'text': nothing the model reads (text): no text",
        "f:4 (post id='d') field 'text': refused here",
    ]


def test_readable_posts_read_each_post_as_given_copying_none_to_name_it() -> None:
    posts = [Post(id="a", text="one"), Post(id="b", text="refused"), Post(id="c")]
    seen: list[Post] = []
    kept, errors = readable_posts(posts, ["text"], lambda post: seen.append(post) or text_length(post))
    assert len(seen) == 2 and all(read is given for read, given in zip(seen, posts))
    assert kept == [posts[0]] and [error.origin for error in errors] == ["post 1", "post 2"]


def test_readable_posts_set_aside_every_post_given_that_is_none_as_a_row_in_the_order_given() -> None:
    """As ``faim score`` records a row that is no post and scores the rest: a dict ``Post.from_dict`` refuses, what is
    no mapping; each named by its place and its id. A ``Post`` given a field of the wrong type after it was built, by
    code, not data, is refused as scoring refuses it."""
    posts = [{"id": "a", "text": "one"}, {"id": "b", "text": 5}, {"id": "c", "txt": "x"}, {"id": "d"}, "a post"]
    kept, errors = readable_posts([*posts, {"id": [1], "text": "x"}, {"text": "two"}], ["text"], text_length)
    assert [post.id for post in kept] == ["a", "6"]
    assert [(error.post_id, error.kind) for error in errors] == [
        ("b", "row"), ("c", "row"), ("d", "empty"), ("4", "row"), ("5", "row")
    ]  # fmt: skip
    assert [str(error) for error in errors if error.kind == "row"] == [
        "post 1 (post id='b'): field 'text': expected a string, got int",
        "post 2 (post id='c'): field 'txt' (did you mean 'text'?): unknown; valid: "
        "id, text, images, image, comments, labels, meta",
        "post 4 (post id='4'): expected a mapping of fields, got str: give each post as a mapping, its text as "
        "{'text': TEXT}",
        "post 5 (post id='5'): field 'id': expected a string or an integer, got a list ([1])",
    ]
    changed = Post(id="e", text="fine", origin="f:7")
    changed.text = 5
    with pytest.raises(ValueError, match=r"^f:7 \(post id='e'\) field 'text': expected a string, got int$"):
        readable_posts([posts[0], changed], ["text"], text_length)
    with pytest.raises(TypeError, match=r"^expected a list of posts, got one post \(a dict\): pass \[post\]$"):
        readable_posts({"id": "a", "text": "one"}, ["text"], text_length)


def test_posts_holding_nothing_read_are_left_out_with_a_warning_naming_the_first_by_origin_and_id() -> None:
    posts = [Post(id="a", text="one"), Post(id="b", origin="f:2"), Post(id="c", text=" ")]
    with pytest.warns(FaimWarning, match=r"^train: 2 of 3 posts hold nothing .*; the first: f:2 \(post id='b'\)$"):
        assert leave_out_empty(posts, ["text"], "train") == posts[:1]
    with pytest.warns(FaimWarning, match=r"the first: post id='c'$"):
        leave_out_empty(posts[::2], ["text"], "train")


def test_posts_to_read_name_each_post_without_an_origin_by_its_index_and_refuse_the_first_holding_nothing() -> None:
    posts = [{"id": "a", "text": "one"}, Post(id="b", text="refused"), Post("c", "three", origin="f:4"), {"text": "x"}]
    read = posts_to_read(posts, ["text"])
    named = [("a", "post 0"), ("b", "post 1"), ("c", "f:4"), ("3", "post 3")]
    assert [(post.id, post.origin) for post in read] == named
    with pytest.raises(PostError, match=r"^post 1 \(post id='b'\) field 'text': refused here$"):
        text_length(read[1])
    with pytest.raises(PostError, match=r"^post 2 \(post id='c'\) field 'text': nothing the model reads .*; leave"):
        posts_to_read([*posts[:2], Post(id="c", text=" ")], ["text"])


def test_the_first_post_whose_text_or_a_comment_read_holds_half_a_surrogate_pair_is_refused_naming_it() -> None:
    posts = [
        Post(id="a", text="whole \U0001f600", comments=["fine"]),
        Post(id="b", text="fine", comments=["also fine", "cut \udc00"], origin="dump.jsonl:2"),
        Post(id="c", text="cut \ud83d"),
    ]
    comment = r"^dump.jsonl:2 \(post id='b'\) field 'comments': holds half of a UTF-16"
    with pytest.raises(PostError, match=comment) as error:
        check_texts(posts, ["comments", "text"], 8)
    assert error.value.kind == "text_encoding"
    with pytest.raises(PostError, match=r"^post id='c' field 'text'"):
        check_texts(posts, ["image", "text"], 8)  # comments the model does not read are not refused
    check_texts(posts[:2], ["text"], 8)
    check_texts(posts, ["image", "meta"], 8)
    check_texts(posts[:2], ["comments"], 1)  # nor comments past the first limit, which it does not read either


def test_posts_to_read_check_each_post_given_once_a_dict_as_its_post_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    given = [Post(id="a", text="one"), Post(id="b", text="two", origin="f:2")]
    dicts = [{"id": "c", "text": "three", "comments": "four"}]
    checks = []

    def counted(where: str, *fields: Any) -> Any:
        checks.append(where)
        return checked_fields(where, *fields)

    monkeypatch.setattr(post, "checked_fields", counted)
    built = [Post.from_dict(row, 2) for row in dicts]
    building = len(checks)
    checks.clear()
    read = posts_to_read([*given, *dicts], ["text"])
    assert len(checks) == len(given) + building
    assert [(p.id, p.origin, p.comments) for p in read] == [
        ("a", "post 0", []),
        ("b", "f:2", []),
        ("c", "post 2", ["four"]),
    ]
    assert built[0].comments == ["four"] and given[0].origin == ""
    given[1].text = 5  # set after it was built: refused
    with pytest.raises(ValueError, match=r"^f:2 \(post id='b'\) field 'text': expected a string, got int$"):
        posts_to_read(given, ["text"])


def test_posts_holding_more_than_the_model_reads_are_warned_of_once_naming_the_splits_holding_any() -> None:
    def posts(*comments: int) -> list[Post]:
        return [Post(str(n), "text", comments=["ok"] * count) for n, count in enumerate(comments)]

    kinds = ["comments", "text"]
    with pytest.warns(FaimWarning) as said:
        warn_overfull_splits(
            {"train.jsonl": posts(3, 1, 5), "validation.jsonl": posts(4), "test.jsonl": posts(2)}, kinds, 2
        )
        warn_overfull_splits({"train.jsonl": posts(1), "validation.jsonl": posts(3)}, kinds, 2)  # as faim eval names it
    assert [str(warning.message) for warning in said] == [
        "train.jsonl (2 posts), validation.jsonl (1 post): 3 posts hold more comments than the model reads of a post "
        "(up to 5): it reads the first 2 of each alone (the recipe's train.max_elements: 2), the rest unread; a model "
        "trained with a larger train.max_elements reads more",
        "validation.jsonl: 1 post holds more comments than the model reads of a post (up to 3): it reads the first 2 "
        "of each alone (the recipe's train.max_elements: 2), the rest unread; a model trained with a larger "
        "train.max_elements reads more",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)
        warn_overfull_splits({"train.jsonl": posts(3, 4)}, ["text"], 2)  # comments the model does not read


@pytest.mark.parametrize("field", ["images", ("text", "comments"), ()])
def test_a_posts_error_pickled_reads_back_as_it_was(field: str | tuple[str, ...]) -> None:
    error = PostError(Post(id="a", text="x", origin="f.jsonl:3"), field, "image 'p.jpg': not a picture", "image_format")
    read = pickle.loads(pickle.dumps(error))  # as a DataLoader worker process gives it to the process reading it
    assert type(read) is PostError and str(read) == str(error)
    assert (read.post_id, read.origin, read.field, read.problem, read.kind) == (
        "a",
        "f.jsonl:3",
        error.field,
        error.problem,
        "image_format",
    )

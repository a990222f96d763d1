"""Posts: made from plain mappings, their texts as a list, the order they are batched in, and how their rows are put
back."""

from __future__ import annotations

import json
import math
import re
import sys
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field, fields
from decimal import Decimal
from uuid import UUID

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from faim.data import post as post_module
from faim.data.elements import posts_to_read
from faim.data.post import (
    Post,
    as_posts,
    check_labelled,
    is_missing,
    is_null,
    length_batches,
    post_texts,
    shortest_text_first,
)
from faim.data.sources import read_posts
from faim.notices import FaimWarning


def test_shortest_text_first_orders_by_text_length_keeping_ties_in_input_order() -> None:
    posts = [Post("a", "a long text"), Post("b", "mid"), Post("c"), Post("d", "two"), Post("e", "")]
    assert shortest_text_first(posts) == [2, 4, 1, 3, 0]


def test_length_batches_put_the_shortest_together_and_say_where_each_row_lands() -> None:
    posts = [Post("a", "a long text"), Post("b", "mid"), Post("c"), Post("d", "two"), Post("e", "")]
    batches, positions = length_batches(posts, 2)
    assert [[post.id for post in batch] for batch in batches] == [["c", "e"], ["b", "d"], ["a"]]
    laid_out = [post.id for batch in batches for post in batch]
    assert [laid_out[position] for position in positions] == ["a", "b", "c", "d", "e"]


def test_length_batches_refuse_a_batch_size_below_one() -> None:
    with pytest.raises(ValueError, match=r"^batch_size must be at least 1, got 0$"):
        length_batches([Post("a", "text")], 0)


@pytest.mark.parametrize("batch_size", [2.5, "8", None, True])
def test_length_batches_refuse_a_batch_size_that_is_not_a_whole_number_naming_it(batch_size: object) -> None:
    with pytest.raises(TypeError, match=rf"^batch_size must be a whole number, got {re.escape(repr(batch_size))} \("):
        length_batches([Post("a", "text")], batch_size)


def test_post_texts_keeps_the_order_and_reads_a_post_without_text_as_empty() -> None:
    posts = [Post("a", "first"), Post("b"), Post("c", ""), Post("d", "last")]
    assert post_texts(posts) == ["first", "", "", "last"]
    assert post_texts(post for post in posts if post.id != "a") == ["", "", "last"]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "b", "text": 5}, "post 0 (post id='b') field 'text': expected a string, got int"),
        ({"id": "c", "text": "x", "comments": ["ok", 5]}, "post 0 (post id='c') field 'comments': comment 1 is an int"),
        ({"id": "d", "comments": 5}, "post 0 (post id='d') field 'comments': expected a string or a list of strings"),
        ("just a string", "post 0: expected a mapping of fields, got str: give each post as a mapping, its text as "),
        ({"id": "e", "labels": "harmful"}, "post 0 (post id='e') field 'labels': expected a mapping of task name"),
        ({"id": "f", "labels": [1]}, "post 0 (post id='f') field 'labels': expected a mapping of task name to"),
        ({"id": "g", "meta": ["x"]}, "post 0 (post id='g') field 'meta': expected a mapping of field name to value"),
        ({"id": "h", "images": ["a.jpg", 3]}, "post 0 (post id='h') field 'images': image 1: expected a path"),
        ({"id": "i", "image": 3}, "post 0 (post id='i') field 'image': image 0: expected a path or encoded"),
        ({"id": "j", "images": {"a.jpg": 1}}, "post 0 (post id='j') field 'images': expected a path, encoded"),
    ],
)
def test_fields_of_the_wrong_type_are_refused_naming_the_post_and_field(row, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        as_posts([row])


def test_a_picture_given_as_a_bytearray_or_a_memoryview_is_held_as_its_bytes() -> None:
    data = b"\x89PNG encoded"
    for given in (bytearray(data), memoryview(data)):
        assert Post.from_dict({"id": "a", "image": given}).images == [data] == Post("a", images=["", given]).images
        assert type(Post("a", images=given).images[0]) is bytes


def test_a_decoded_picture_given_as_an_image_is_refused_saying_to_give_it_encoded() -> None:
    encode = "give it encoded: buffer = io.BytesIO(); image.save(buffer, 'PNG'); buffer.getvalue()"
    for picture, kind in [(Image.new("RGB", (4, 4)), "Image"), (np.zeros((4, 4, 3), np.uint8), "ndarray")]:
        said = f"post 0 (post id='a') field 'image': image 0: expected a path or encoded bytes, got {kind}, a decoded"
        with pytest.raises(ValueError, match=f"^{re.escape(said)} picture: {re.escape(encode)}"):
            as_posts([{"id": "a", "image": picture}])
    with pytest.raises(ValueError, match=re.escape(f"or a list of them, got Image, a decoded picture: {encode}")):
        Post("a", images=Image.new("RGB", (4, 4)))


def test_an_array_of_pixels_or_of_encoded_bytes_given_as_a_posts_images_is_refused_saying_what_to_give() -> None:
    encode = "a decoded picture: give it encoded: buffer = io.BytesIO(); image.save(buffer, 'PNG'); buffer.getvalue()"
    for pixels in (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8)):  # not read as lists of numbers first
        said = f"field 'images': expected a path, encoded bytes or a list of them, got ndarray, {encode}"
        with pytest.raises(ValueError, match=f"^post 0 \\(post id='a'\\) {re.escape(said)}$"):
            as_posts([{"id": "a", "images": pixels}])
        with pytest.raises(ValueError, match=f"^post id='a' {re.escape(said)}$"):
            Post("a", images=pixels)
    encoded = np.frombuffer(b"\x89PNG encoded", np.uint8)  # as cv2.imencode gives a picture encoded
    tobytes = "an array of bytes (as cv2.imencode gives a picture encoded): give its bytes, array.tobytes()"
    for row, said in [({"image": encoded}, "field 'image': image 0: expected a path or encoded bytes, got ndarray"),
                      ({"images": encoded}, "field 'images': expected a path, encoded bytes or a list of them, got "
                       "ndarray")]:  # fmt: skip
        with pytest.raises(ValueError, match=f"^post 0 \\(post id='a'\\) {re.escape(said)}, {re.escape(tobytes)}$"):
            as_posts([{"id": "a", **row}])
    assert Post("a", images=[encoded.tobytes()]).images == [b"\x89PNG encoded"]


def test_a_tables_rows_given_as_iterated_are_refused_saying_to_give_them_as_mappings() -> None:
    frame = pd.DataFrame({"id": ["a", "b"], "text": ["x", "y"]})
    said = "a table's row: give its rows as mappings (a pandas frame's frame.to_dict('records'))"
    for rows, kind in [(frame.iterrows(), "tuple"), ((row for _, row in frame.iterrows()), "Series"),
                       (frame.itertuples(), "Pandas"), (frame.to_records(), "record")]:  # fmt: skip
        message = f"post 0: expected a mapping of fields, got {kind}, {said}"
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            as_posts(rows)
    values = "a row of values: give each post as a mapping of its fields, {'id': ID, 'text': TEXT}"
    # plain tuples and arrays, each row's values without their columns
    for rows, kind in [(frame.itertuples(name=None), "tuple"), ([("a", "x")], "tuple"), (frame.values, "ndarray"),
                       (frame.to_numpy(dtype=str), "ndarray")]:  # fmt: skip
        with pytest.raises(ValueError, match=f"^post 0: expected a mapping of fields, got {kind}, {re.escape(values)}"):
            as_posts(rows)


@pytest.mark.parametrize("picture", [b"\x89PNG encoded", bytearray(b"\x89PNG encoded")])
def test_a_list_of_pictures_bytes_given_as_posts_is_refused_saying_how_to_give_a_picture(picture) -> None:
    said = f"post 0: expected a mapping of fields, got {type(picture).__name__}: give each post as a mapping, its "
    with pytest.raises(ValueError, match=f"^{re.escape(said)}picture's bytes as {{'images': \\[DATA\\]}}$"):
        as_posts([picture])


def test_blank_comments_are_left_out_and_one_comment_may_be_a_string() -> None:
    (post,) = as_posts([{"text": "x", "comments": ["  ", "kept"]}])
    assert post.comments == ["kept"] and as_posts([{"comments": "alone"}])[0].comments == ["alone"]


def test_null_comments_are_left_out_as_a_files_reader_leaves_them_out(tmp_path) -> None:
    comments = ["a", None, float("nan"), pd.NA, "b"]
    assert Post.from_dict({"text": "x", "comments": comments}).comments == ["a", "b"]
    assert Post("c", comments=np.array(["a", None, "b"], dtype=object)).comments == ["a", "b"]
    dump = tmp_path / "posts.jsonl"
    dump.write_text(json.dumps({"id": "d", "comments": ["a", None, "b"]}) + "\n")
    [read] = read_posts(dump)
    assert read.comments == Post.from_dict({"comments": ["a", None, "b"]}).comments == ["a", "b"]


def test_a_null_label_is_missing_as_an_empty_label_cell_is_and_is_no_post_labelled(tmp_path) -> None:
    labels = {"hate": float("nan"), "spam": pd.NA, "topic": np.float32("nan"), "kept": 1}
    assert Post.from_dict({"labels": labels}).labels == {"hate": None, "spam": None, "topic": None, "kept": 1}
    dump = tmp_path / "posts.jsonl"
    dump.write_text('{"id": "a", "labels": {"hate": NaN}}\n', encoding="utf-8")  # as json.dumps writes a float NaN
    [read] = read_posts(dump)
    assert read.labels == {"hate": None}  # refused at its batch as no label before, its task counted as labelled
    with pytest.raises(ValueError, match=r"^posts: no post carries a label for any task \(hate\)"):
        check_labelled([read], ["hate"], "posts")


def test_posts_none_of_which_is_labelled_for_a_task_are_refused_saying_how_to_map_labels() -> None:
    check_labelled([Post(id="a"), Post(id="b", labels={"hate": 0})], ["hate"], "d.jsonl")  # one is enough
    with pytest.raises(ValueError, match=r"^d\.jsonl: no post carries a label for any task \(hate, spam\); map a col"):
        check_labelled([Post(id="a", labels={"other": 1})], ["hate", "spam"], "d.jsonl")


def test_labels_under_a_name_that_is_no_task_are_warned_of_naming_how_many_posts_and_the_task_meant() -> None:
    # a key misspelt in some rows' labels objects left those posts out of the task's figures without a word
    posts = [
        Post(id="a", labels={"scam": 1}),
        Post(id="b", labels={"Scam": 0}),
        Post(id="c", labels={"Scam": 1, "extra": "x"}),
        Post(id="d", labels={"extra": None}),
    ]
    with pytest.warns(FaimWarning) as caught:
        check_labelled(posts, ["scam", "severity"], "d.jsonl")
    assert [str(warning.message) for warning in caught] == [
        "d.jsonl: labels under a name that is no task of the model (its tasks: scam, severity) are not read: 'Scam' "
        "of 2 posts (did you mean 'scam'?), 'extra' of 1 post"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_labelled(posts[:1], ["scam", "severity"], "d.jsonl")


def test_posts_none_of_which_is_labelled_are_refused_with_what_to_do_where_the_caller_knows_better() -> None:
    with pytest.raises(ValueError, match=r"^split: no post carries a label for any task \(hate\); give a file$"):
        check_labelled([Post(id="a")], ["hate"], "split", "give a file")


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"id": "1", "text": "some post"}, r"one post \(a dict\)"),
        (Post("1", "some post"), r"one post \(a Post\)"),
        (OrderedDict(id="1", text="some post"), r"one post \(an OrderedDict\)"),
        ("some post", r"one string \(a str\)"),
    ],
)
def test_one_post_or_a_string_given_for_a_list_of_posts_is_refused_saying_to_pass_a_list(given, named: str) -> None:
    with pytest.raises(TypeError, match=rf"expected a list of posts, got {named}: pass \[post\]"):
        as_posts(given)


def test_posts_given_by_key_in_a_mapping_are_refused_saying_how_to_list_them_with_their_keys_as_ids() -> None:
    by_id = pd.DataFrame({"text": ["x", "y"]}, index=["a", "b"]).to_dict("index")
    listed = "[{'id': key, **post} for key, post in posts.items()]"
    said = f"expected a list of posts, got posts by key (a dict): pass {listed}"
    extra = pd.DataFrame({"text": ["x"], "lang": ["en"]}, index=["id1"]).to_dict("index")  # a column of no field
    given = (by_id, {"id1": {"text": "a"}, "id2": {"text": "b"}}, {"text1": {"text": "a", "labels": {}}}, extra)
    # ids some or each of which is close to meta or labels, not each close to another of them: no post's fields
    given += ({"alpha": {"text": "a"}, "beta": {"text": "b"}}, {"delta": {"text": "a"}, "gamma": {"text": "b"}})
    given += ({"beta": {"text": "a"}, "zeta": {"text": "b"}}, {"beta": {"text": "a"}}, {"media": {"labels": {}}})
    for posts in (*given, {"text1": {"text": "a", "label": 1}}, {"id1": {"text": "a", "likes": 3}}):
        with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):  # keys like a field misspelt, posts under them
            as_posts(posts)
    with pytest.raises(TypeError, match=r"got one post \(a dict\): pass \[post\]$"):
        as_posts({"id": "a", "labels": {"hate": 1}, "meta": {"x": 1}})  # a post whose fields are mappings
    said = "expected a list of posts, got posts by key (a dict): pass list(posts.values())"
    with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):
        as_posts({"a": Post("a", "x"), "b": Post("b", "y")})
    said = "got one post (a dict): pass [post]; its fields 'lables' (did you mean 'labels'?), 'mta' (did you mean "
    with pytest.raises(TypeError, match=f"{re.escape(said)}'meta'\\?\\): unknown$"):
        as_posts({"lables": {"hate": 1}, "mta": {"x": 1}})  # a post whose fields, misspelt, are mappings
    with pytest.raises(TypeError, match=r"got one post \(a dict\): pass \[post\]; its field 'lables' \(did you"):
        as_posts({"lables": {"hate": 1}})
    said = "got one post (a dict): pass [post]; its field 'metadata' (did you mean 'meta'?): unknown"
    with pytest.raises(TypeError, match=f"{re.escape(said)}$"):  # a post whose meta, misspelt, holds an id
        as_posts({"metadata": {"id": "u42", "lang": "en"}})
    for profile in ({"text": "bio", "image": "avatar.png"}, {"id": "u42", "text": "bio"}):  # its meta a profile's
        with pytest.raises(TypeError, match=f"{re.escape(said)}$"):
            as_posts({"metadata": profile})
    with pytest.raises(TypeError, match=r"got one post \(a dict\): pass \[post\]; its field 'label_map' \(did you"):
        as_posts({"label_map": {"labels": {"hate": 1}}})


@pytest.mark.parametrize("given", [b"abc", bytearray(b"abc"), memoryview(b"abc")])
def test_bytes_given_for_a_list_of_posts_are_refused_saying_what_to_pass(given: object) -> None:
    kind = type(given).__name__
    said = f"expected a list of posts, got {kind}: pass [{{'text': TEXT}}], a picture's bytes as [{{'images': [DATA]}}]"
    with pytest.raises(TypeError, match=f"^{re.escape(said)}$"):
        as_posts(given)


@pytest.mark.parametrize(("given", "named"), [(None, "NoneType"), (3, "int")])
def test_what_is_no_iterable_given_for_a_list_of_posts_is_refused_naming_its_type(given, named: str) -> None:
    with pytest.raises(TypeError, match=rf"^expected a list of posts \(or any iterable of them\), got {named}$"):
        as_posts(given)


def test_a_table_given_for_a_list_of_posts_is_refused_saying_to_pass_its_rows() -> None:
    frame = pd.DataFrame([{"id": "1", "text": "some post"}])
    message = (
        r"^expected a list of posts, got a table \(DataFrame\), which gives its columns, not its rows, when iterated: "
        r"pass its rows as mappings \(a pandas frame's frame.to_dict\('records'\)\)$"
    )
    with pytest.raises(TypeError, match=message):
        as_posts(frame)
    assert as_posts(frame.to_dict("records"))[0].text == "some post"


def test_list_fields_given_as_arrays_read_as_lists_as_pandas_gives_them() -> None:
    row = {"id": "a", "images": np.array(["x.jpg", "y.jpg"]), "comments": np.array(["first", " "])}
    (post,) = as_posts([row])  # pandas.DataFrame.to_dict("records") gives a list column's cells as arrays
    assert post.images == ["x.jpg", "y.jpg"] and post.comments == ["first"]
    assert all(type(image) is str for image in post.images)


@pytest.mark.parametrize(
    ("row", "named"),
    [
        ({"id": "b", "txet": "hi"}, "post 1 (post id='b') field 'txet' (did you mean 'text'?): unknown"),
        ({"lables": {}, 2: "x"}, "post 1 (post id='1') fields 'lables' (did you mean 'labels'?), 2: unknown"),
    ],
)
def test_a_dict_with_an_unknown_field_is_refused_naming_the_post_the_field_and_the_fields(row, named: str) -> None:
    fields = "; valid: id, text, images, image, comments, labels, meta"
    with pytest.raises(ValueError, match=f"^{re.escape(named + fields)}$"):
        as_posts([{"id": "a", "text": "first"}, row])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"text": 5}, "post id='a' field 'text': expected a string, got int"),
        ({"comments": ["ok", 5]}, "post id='a' field 'comments': comment 1 is an int, not a string"),
        ({"images": ["a.jpg", 3]}, "post id='a' field 'images': image 1: expected a path or encoded bytes, got int"),
        ({"labels": "harmful"}, "post id='a' field 'labels': expected a mapping of task name to label, got str"),
        ({"meta": ["x"], "origin": "d.jsonl:3"}, "d.jsonl:3 (post id='a') field 'meta': expected a mapping of field"),
    ],
)
def test_a_post_built_directly_is_checked_as_a_dict_is_naming_the_post_and_field(fields, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Post("a", **fields)


def test_a_post_built_directly_reads_its_fields_as_the_same_post_given_as_a_dict() -> None:
    fields = {"text": "hi", "images": "img/1.png", "comments": np.array(["hello world", " "]), "labels": None}
    assert Post("a", **fields) == Post.from_dict({"id": "a", **fields})
    assert Post("a", **fields).comments == ["hello world"] and Post("a", **fields).images == ["img/1.png"]


@pytest.mark.parametrize("images", [None, "", [], (), np.array([]), float("nan")])
def test_images_absent_null_or_empty_fall_back_to_the_image_field(images) -> None:
    (post,) = as_posts([{"id": "a", "images": images, "image": "one.png"}])
    assert post.images == ["one.png"]
    assert as_posts([{"id": "b", "images": ["two.png"], "image": "one.png"}])[0].images == ["two.png"]


def test_the_empty_cells_of_a_frames_records_read_as_no_text_picture_comments_labels_or_metadata() -> None:
    frame = pd.DataFrame(
        {"id": ["a", "b"], "text": ["a post", None], "image": [None, "b.png"], "comments": [None, ["yes"]],
         "labels": [{"hate": 1}, None], "meta": [None, {"likes": 2}]}
    )  # fmt: skip
    records = frame.to_dict("records")
    assert math.isnan(records[1]["text"]) and math.isnan(records[0]["image"])  # pandas' empty cells: NaN, None
    first, second = as_posts(records)
    assert (first.text, first.images, first.comments, first.labels, first.meta) == ("a post", [], [], {"hate": 1}, {})
    assert (second.text, second.images, second.comments, second.labels) == (None, ["b.png"], ["yes"], {})
    nulls = {"text": pd.NA, "images": [float("nan")], "comments": np.float32("nan"), "labels": pd.NaT, "meta": pd.NA}
    assert Post("c", **nulls) == Post("c")


@pytest.mark.parametrize(
    ("value", "missing"),
    [(None, True), ("", True), ([], True), ((), True), (np.array([]), True), (float("nan"), True), (" ", False),
     (["a.png"], False), (np.array(["a.png"]), False), (b"", False), (0, False), (np.float32("nan"), True),
     (np.float16("nan"), True), (np.float32(0), False), (False, False), (10**400, False), (pd.NA, True),
     (pd.NaT, True), (pd.Timestamp(0), False)],
)  # fmt: skip
def test_missing_is_absent_null_nan_or_an_empty_string_list_or_array(value, missing: bool) -> None:
    assert is_missing(value) is missing


class Text(str):
    """A subclass of ``str``, told by the checks ``is_null`` makes of types it does not know."""


class Number(float):
    """A subclass of ``float``, as ``Text`` is of ``str``."""


class NoPandas:
    """Stands for pandas in ``sys.modules``, refusing every attribute read of it."""

    def __getattr__(self, name: str) -> None:
        raise AssertionError(f"pandas.{name} read")


@pytest.mark.parametrize(
    ("value", "null"),
    [("text", False), (7, False), (10**400, False), (1.5, False), (float("nan"), True), (True, False), ([], False),
     ({}, False), (Text("text"), False), (Number("nan"), True), (Number(1), False), (np.float64("nan"), True),
     (np.int64(3), False), (None, True), (pd.NA, True), (pd.NaT, True), (pd.Timestamp(0), False),
     (Decimal("NaN"), True), (Decimal("sNaN"), True), (Decimal("-NaN"), True), (Decimal("3"), False),
     (Decimal("Infinity"), False)],
)  # fmt: skip
def test_null_is_none_nan_or_pandas_na_or_nat(value, null: bool) -> None:
    assert is_null(value) is null


def test_a_string_number_bool_list_or_dict_is_told_not_null_without_looking_pandas_up(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", NoPandas())  # a field of every post: pandas looked up for none
    assert [is_null(value) for value in ("text", 7, 1.5, True, [], {}, float("nan"), None)] == [False] * 6 + [True] * 2


@pytest.mark.parametrize(
    ("meta", "held"),
    [
        ({"source": "1-davidson", "lang": "en"}, False),
        ({"source": "1-davidson", "likes": 3}, True),
        ({"lang": "en"}, False),
    ],
)
def test_the_fields_faim_gives_posts_itself_are_not_metadata_a_post_holds(meta, held: bool) -> None:
    assert Post("a", meta=meta).has_meta is held


@pytest.mark.parametrize("ident", [None, float("nan"), ""])
def test_a_post_whose_id_is_missing_takes_its_place_as_its_id_as_a_files_row_its_row_number(ident) -> None:
    posts = as_posts([{"id": "a", "text": "first"}, {"id": ident, "text": "second"}, {"text": "third"}])
    assert [post.id for post in posts] == ["a", "1", "2"]


@pytest.mark.parametrize(
    ("ident", "read"),
    [
        ("a", "a"),
        (7, "7"),
        (np.int64(7), "7"),
        (7.0, "7"),
        (np.float64(-3.0), "-3"),
        (2.0**53 - 1, "9007199254740991"),
        (np.float32(2**24 - 1), "16777215"),
        (np.float16(2**11 - 1), "2047"),
        (Decimal("1234567890123456789012"), "1234567890123456789012"),  # a warehouse's decimal(38, 0)
        (Decimal("12.000"), "12"),
        (UUID("12345678-1234-5678-1234-567812345678"), "12345678-1234-5678-1234-567812345678"),
    ],
)
def test_an_id_is_a_string_or_an_integer_a_whole_float_read_as_that_integer(ident, read: str) -> None:
    assert [post.id for post in as_posts([{"id": ident, "text": "x"}])] == [read]
    assert Post(ident, "x").id == read


@pytest.mark.parametrize(
    ("ident", "problem"),
    [
        ({"a": 1}, "got a dict ({'a': 1})"),
        ([1, 2], "got a list ([1, 2])"),
        (True, "got a bool (True)"),
        (np.bool_(False), "got a bool"),
        (b"7", "got a bytes (b'7')"),
        (7.5, "got 7.5, a number that is not whole"),
        (float("inf"), "got inf, a number that is not whole"),
        (1e20, "got the float 1e+20, 2**53 or past it, where a float may not be the integer written"),
        (2.0**53, "got the float 9007199254740992.0, 2**53 or past it"),  # 2**53 + 1 read through a float
        (np.float32(123456789), "got the float 123456792.0, 2**24 or past it, where a float32 may not be the"),
        (np.float16(2049), "got the float 2048.0, 2**11 or past it, where a float16 may not be the integer"),
        (Decimal("7.5"), "got Decimal('7.5'), a number that is not whole"),
    ],
)
def test_an_id_of_another_type_is_refused_naming_the_post_and_field_not_read_as_its_python_text(
    ident, problem: str
) -> None:
    said = f"field 'id': expected a string or an integer, {problem}"
    with pytest.raises(ValueError, match=f"^post 1 {re.escape(said)}"):
        as_posts([{"id": "a"}, {"id": ident, "text": "x"}])
    with pytest.raises(ValueError, match=f"^d.jsonl:3 {re.escape(said)}"):
        Post(ident, "x", origin="d.jsonl:3")


@pytest.mark.parametrize("ident", [None, float("nan"), ""])
@pytest.mark.parametrize(("origin", "named"), [("d.jsonl:3", "d.jsonl:3"), ("", "post")])
def test_a_post_built_directly_without_an_id_is_refused_naming_it_as_other_errors_do(ident, origin, named) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(named)} field 'id': missing; give each post an id"):
        Post(ident, "some text", origin=origin)


@pytest.mark.parametrize(("origin", "named"), [("", "post 1"), ("d.jsonl:3", "d.jsonl:3")])
def test_a_post_whose_id_was_taken_away_is_refused_naming_its_origin_or_its_place_among_the_posts_given(
    origin: str, named: str
) -> None:
    post = Post("b", "some text", origin=origin)
    post.id = None  # scored, its row's id would be None
    with pytest.raises(ValueError, match=rf"^{re.escape(named)} field 'id': missing; give each post an id"):
        posts_to_read([Post("a", "first"), post], ["text"])
    with pytest.raises(ValueError, match=rf"^{re.escape(named)} field 'id': missing; give each post an id"):
        as_posts([Post("a", "first"), post])


@pytest.mark.parametrize(("origin", "named"), [("", "post 1"), ("d.jsonl:3", "d.jsonl:3")])
@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("text", 5, "field 'text': expected a string, got int"),
        ("images", [5], "field 'images': image 0: expected a path or encoded bytes, got int"),
        ("comments", [5], "field 'comments': comment 0 is an int, not a string"),
        ("meta", ["topic"], "field 'meta': expected a mapping of field name to value, got list"),
    ],
)
def test_a_post_whose_field_was_set_to_a_wrong_type_after_it_was_built_is_refused_naming_it_and_the_field(
    origin: str, named: str, field: str, value: object, problem: str
) -> None:
    post = Post("b", "some text", origin=origin)
    setattr(post, field, value)  # read as it is, it would fail deep inside the model, or be read wrong
    with pytest.raises(ValueError, match=rf"^{re.escape(named)} \(post id='b'\) {re.escape(problem)}"):
        as_posts([Post("a", "first"), post])


def test_fields_set_after_a_post_was_built_are_read_as_the_post_reads_them() -> None:
    post = Post("b", "some text", origin="d.jsonl:3")
    post.comments, post.images = "one comment", "a.jpg"  # one of each, not one per character
    [read] = posts_to_read([post], ["text", "comments"])
    assert read.comments == ["one comment"] and read.images == ["a.jpg"]


@pytest.mark.parametrize("origin", ["", "d.jsonl:3"])
def test_a_post_whose_id_was_set_to_a_number_after_it_was_built_has_it_as_text_as_one_built_with_it(
    origin: str,
) -> None:
    post = Post("b", "some text", origin=origin)
    post.id = 7  # scored, its row's id would be the number where every other is text
    assert [post.id for post in as_posts([Post(7, "first"), post])] == ["7", "7"]
    post.id = 7
    assert [post.id for post in posts_to_read([Post("a", "first"), post], ["text"])] == ["a", "7"]


def test_the_fields_of_a_post_given_are_kept_where_they_hold_what_a_post_holds_and_replaced_only_where_not() -> None:
    post = Post("a", "t", images=["a.png"], comments=["one"], labels={"harm": 1}, meta={"x": 1})
    fields = [post.images, post.comments, post.labels, post.meta]
    post.images = ("a.png", None)  # needs converting: a tuple, and an empty picture left out
    [read] = as_posts([post])
    assert read is post and [post.comments, post.labels, post.meta] == fields[1:]
    assert all(kept is given for kept, given in zip([post.comments, post.labels, post.meta], fields[1:]))
    assert post.images == ["a.png"] and post.images is not fields[0]


def test_a_post_built_holds_lists_and_dicts_of_its_own_not_those_given() -> None:
    given = {"images": ["a.png"], "comments": ["one"], "labels": {"harm": 1}, "meta": {"x": 1}}
    for post in (Post("a", "t", **given), Post.from_dict({"id": "b", **given})):
        assert all(getattr(post, name) == value and getattr(post, name) is not value for name, value in given.items())


def test_a_post_given_as_a_dict_has_its_fields_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = []
    check = post_module.checked_fields
    monkeypatch.setattr(post_module, "checked_fields", lambda *given: checks.append(given) or check(*given))
    given = {"id": "b", "text": "t", "image": "a.png", "comments": ["one", " "], "labels": {"harm": 1}, "meta": None}
    post = Post.from_dict(given)
    assert len(checks) == 1
    assert post == Post("b", "t", images=["a.png"], comments=["one"], labels={"harm": 1}) and post.origin == ""


@dataclass
class Tagged(Post):
    """A post of a user's own, with a field of its own and a ``__post_init__`` of its own."""

    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.text = (self.text or "").lower()


def test_a_post_given_as_a_dict_has_every_field_a_post_built_has_a_subclass_its_own_too() -> None:
    row = {"id": "a", "text": "HI", "image": "a.png", "comments": ["one"], "labels": {"harm": 1}, "meta": {"x": 1}}
    post = Post.from_dict(row)
    assert set(vars(post)) == {each.name for each in fields(Post)} and post == Post("a", "HI", images=["a.png"],
        comments=["one"], labels={"harm": 1}, meta={"x": 1})  # fmt: skip
    tagged = Tagged.from_dict(row)
    assert type(tagged) is Tagged and tagged.tags == [] and tagged.text == "hi"
    assert tagged == Tagged("a", "HI", images=["a.png"], comments=["one"], labels={"harm": 1}, meta={"x": 1})
    with pytest.raises(ValueError, match=r"^post 3 \(post id='b'\) field 'image': image 0: expected a path"):
        Tagged.from_dict({"id": "b", "image": 3}, 3)


def test_a_subclass_given_a_dict_takes_its_own_fields_from_it_and_refuses_a_key_of_no_field() -> None:
    tagged = Tagged.from_dict({"id": "a", "text": "HI", "tags": ["x"]})
    assert type(tagged) is Tagged and tagged.tags == ["x"] and tagged.text == "hi"
    valid = "id, text, images, image, comments, labels, meta, tags"
    with pytest.raises(
        ValueError, match=rf"^post 2 \(post id='b'\) field 'tag' \(did you mean 'tags'\?\): unknown; valid: {valid}$"
    ):
        Tagged.from_dict({"id": "b", "tag": ["x"]}, 2)
    with pytest.raises(ValueError, match=r"^post 0 \(post id='c'\) field 'tags' \(did you mean 'images'\?\): unknown"):
        Post.from_dict({"id": "c", "tags": ["x"]})


@pytest.mark.parametrize("missing", [None, float("nan"), ""])
def test_a_subclass_given_a_dict_reads_its_own_field_missing_there_as_absent(missing: object) -> None:
    """As a post's own fields are (``is_missing``): a table's empty cell keeps the field's default."""
    tagged = Tagged.from_dict({"id": "a", "text": "hi", "images": missing, "tags": missing})
    assert tagged.tags == [] and tagged.images == []


def test_a_subclass_given_a_dict_gives_a_field_of_its_own_without_a_default_the_value_given() -> None:
    """A field without a default is given a missing value as it is, as its ``__init__`` reads it (None a source not
    known), not left out for ``__init__`` to refuse as not given."""

    @dataclass(kw_only=True)
    class Sourced(Post):
        source: str | None

    assert Sourced.from_dict({"id": "a", "text": "hi", "source": None}).source is None
    with pytest.raises(ValueError, match=r"^post 3 \(post id='b'\) field 'source': not given, and Sourced has no "):
        Sourced.from_dict({"id": "b", "text": "hi"}, 3)


@pytest.mark.parametrize("null", [float("nan"), np.float32("nan"), Decimal("nan"), pd.NA])
def test_a_subclass_given_a_dict_gives_a_field_of_its_own_without_a_default_a_null_value_as_none(null: object) -> None:
    """As a frame's empty cell gives it (``frame.to_dict('records')``): a post's own fields read a null as none, and
    a NaN, which is true, would read as a source given."""

    @dataclass(kw_only=True)
    class Sourced(Post):
        source: str | None

    assert Sourced.from_dict({"id": "a", "text": "hi", "source": null}).source is None
    assert Sourced.from_dict({"id": "b", "text": "hi", "source": ""}).source == ""  # empty, but no null


def test_a_list_column_pandas_wrote_to_csv_as_python_writes_a_list_is_refused_saying_to_write_json(tmp_path) -> None:
    from faim.data.collate import post_targets
    from faim.data.elements import PostError
    from faim.data.sources import read_posts
    from faim.data.targets import TaskSpec

    frame = pd.DataFrame({"id": ["a", "b"], "text": ["t", "t"], "topics": [["spam", "drugs"], ["émoi"]]})
    frame.to_csv(tmp_path / "posts.csv", index=False)  # each list cell as Python writes it: ['spam', 'drugs']
    topics = TaskSpec("topics", "multilabel", ("spam", "drugs", "émoi"))
    for post, listed in zip(read_posts(tmp_path / "posts.csv", {"labels": {"topics": "topics"}}), frame["topics"]):
        with pytest.raises(PostError) as raised:
            post_targets(post, [topics])
        assert str(raised.value).endswith(
            f"; a list written as text is read as a list of labels only where it is JSON, in a CSV or TSV cell "
            f"({json.dumps(listed, ensure_ascii=False)}); {listed} is a list as Python writes it (pandas' to_csv of "
            "a column of lists): write each cell with json.dumps"
        )


def test_posts_given_without_an_id_taking_another_posts_id_as_theirs_are_warned_of() -> None:
    frame = pd.DataFrame({"id": pd.array([1, None, 3, None, 5], dtype="Int64"), "text": list("abcde")})
    with pytest.warns(FaimWarning) as caught:
        posts = as_posts(frame.to_dict("records"))
    assert [post.id for post in posts] == ["1", "1", "3", "3", "5"]
    assert [str(warning.message) for warning in caught] == [
        "the posts given: 2 posts without an id took an id another post is given as its own (a post without one "
        "takes its place among them as its id): post 1 ('1'), post 3 ('3'); their score rows share ids; give each post "
        "an id of its own, or none"
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [post.id for post in as_posts([{"id": 7, "text": "a"}, {"text": "b"}, {"text": "c"}])] == ["7", "1", "2"]

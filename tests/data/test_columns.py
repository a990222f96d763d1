"""ColumnMap: recipe validation, binding to a file's columns, and row → Post conversion."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faim.data.columns import ColumnMap
from faim.data.post import Post
from faim.data.sources import read_posts


def convert(row: dict, mapping: dict | None = None, index: int = 0):
    columns = ColumnMap.from_recipe(mapping).bind(list(row), "posts.csv")
    return columns.to_post(row, index, f"posts.csv:{index + 2}", Path("/data"), text_cells=True)


def test_identity_mapping_reads_same_named_columns():
    post = convert({"id": 7, "text": "hi", "images": ["a.png"], "comments": ["c"], "extra": 1})
    assert (post.id, post.text, post.images, post.comments) == ("7", "hi", ["a.png"], ["c"])
    assert post.labels == {} and post.meta == {}
    assert post.origin == "posts.csv:2" and post.image_root == Path("/data")


def test_image_column_is_the_default_when_there_is_no_images_column():
    assert convert({"text": "t", "image": "one.png"}).images == ["one.png"]


def test_unmapped_labels_and_meta_columns_holding_mappings_read_as_a_post_given_as_a_dict(tmp_path: Path):
    given = {"id": "b", "text": "hi", "labels": {"harm": 1, "flags": ["spam"]}, "meta": {"likes": 3, "lang": "en"}}
    expected = Post.from_dict(given)
    (tmp_path / "posts.jsonl").write_text(json.dumps(given) + "\n")
    pq.write_table(pa.Table.from_pylist([given]), tmp_path / "structs.parquet")
    maps = pa.map_(pa.string(), pa.int64())
    struct_keys = pa.map_(pa.struct([("k", pa.string())]), pa.int64())
    pq.write_table(
        pa.table({
            "id": ["b"], "text": ["hi"], "meta": pa.array([[("likes", 3)]], type=maps),
            "other": pa.array([[("likes", 3)]], type=maps), "labels": pa.array([[({"k": "x"}, 1)]], type=struct_keys),
        }),
        tmp_path / "maps.parquet",
    )  # fmt: skip
    for name in ("posts.jsonl", "structs.parquet"):
        (post,) = read_posts(tmp_path / name)
        assert (post.labels, post.meta) == (expected.labels, expected.meta), name
    (post,) = read_posts(tmp_path / "maps.parquet")  # only the meta column's map is read, as field names
    assert (post.labels, post.meta) == ({}, {"likes": 3})
    (post,) = read_posts(tmp_path / "maps.parquet", columns={"meta": ["other"], "labels": None})
    assert post.meta == {"other": [("likes", 3)], "likes": 3}  # mapped: a column gives one field its cell
    assert post.labels == {}  # mapped to null: none is read
    csv = tmp_path / "posts.csv"
    csv.write_text('id,text,labels,labels,meta\nb,hi,x,y,"{""likes"": 3}"\n')  # a CSV cell is text: not read
    (post,) = read_posts(csv)
    assert (post.labels, post.meta) == ({}, {})
    read = "(read where it holds an object)"
    assert ColumnMap().unread(["id", "labels", "meta", "other"]) == [f"labels {read}", f"meta {read}", "other"]
    assert ColumnMap().reading(text_cells=True).unread(["id", "labels", "meta"]) == ["labels", "meta"]


@pytest.mark.parametrize("name", ["meta", "labels"])
def test_two_unmapped_meta_or_labels_columns_read_as_objects_are_refused_as_two_mapped_ones_are(tmp_path: Path, name):
    arrays = [pa.array(["a"]), pa.array(["hi"]), pa.array([{"likes": 1}]), pa.array([{"likes": 2}])]
    pq.write_table(pa.Table.from_arrays(arrays, names=["id", "text", name, name]), tmp_path / "two.parquet")
    said = f"2 columns are named {name!r}, read into field {name!r}: which one is meant cannot be told"
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 'two.parquet'}: {said}")):
        list(read_posts(tmp_path / "two.parquet"))
    assert ColumnMap().reading(text_cells=True).mismatch(["id", name, name]) is None  # a CSV's: never read


def test_a_mapping_naming_tasks_or_meta_fields_reads_the_others_from_the_object_column():
    row = {"id": "a", "l": "en", "h": None, "meta": {"lang": "fr", "x": 2}, "labels": {"hate": 0, "spam": 1}}
    post = ColumnMap(meta={"lang": "l"}, labels={"hate": "h"}).to_post(row, 0, "posts.jsonl:1", None)
    assert (post.meta, post.labels) == ({"lang": "en", "x": 2}, {"spam": 1})  # a named one is read from its column
    post = ColumnMap(meta={"lang": "l"}).to_post(row, 0, "posts.jsonl:1", None)
    assert (post.meta, post.labels) == ({"lang": "en", "x": 2}, {"hate": 0, "spam": 1})
    assert ColumnMap(meta={"lang": "l"}) == ColumnMap.from_recipe({"meta": {"lang": "l"}})
    post = ColumnMap.from_recipe({"meta": None, "labels": None}).to_post(row, 0, "posts.jsonl:1", None)
    assert (post.meta, post.labels) == ({}, {})  # mapped to null: none is read
    post = ColumnMap.from_recipe({"meta": ["meta"]}).to_post(row, 0, "posts.jsonl:1", None)
    assert post.meta == {"meta": {"lang": "fr", "x": 2}}  # a column a field is read from gives that field alone


@pytest.mark.parametrize("cell", [None, "", 5, "many", '{"likes": 3}', ["likes"], [["likes", 3]]])
def test_an_unmapped_meta_or_labels_cell_holding_no_mapping_is_not_read(cell):
    columns = ColumnMap().bind(["id", "labels", "meta"], "posts.jsonl")
    post = columns.to_post({"id": "b", "labels": cell, "meta": cell}, 0, "posts.jsonl:1", None)
    assert (post.labels, post.meta) == ({}, {})


def test_an_unmapped_images_field_falls_back_row_by_row_to_the_image_column():
    rows = [{"images": ["a.png"], "image": "b.png"}, {"image": "c.png"}, {"images": None, "image": "d.png"}]
    columns = ColumnMap.from_recipe(None).bind(["images", "image"], "posts.jsonl")
    assert [columns.to_post(row, 0, "posts.jsonl:1", None).images for row in rows] == [["a.png"], ["c.png"], ["d.png"]]
    assert columns.wanted(["id", "image", "images", "other"]) == ["id", "image", "images"]
    mapped = ColumnMap.from_recipe({"images": "images"}).bind(["images", "image"], "posts.jsonl")
    assert [mapped.to_post(row, 0, "posts.jsonl:1", None).images for row in rows] == [["a.png"], [], []]
    with pytest.raises(ValueError, match=r"field 'images' \(column 'image'\): holds 5"):
        convert({"images": None, "image": 5})


def test_the_fields_read_from_a_column_are_named_as_an_error_about_its_cell_names_them():
    columns = ColumnMap.from_recipe({"id": "key", "text": "body", "labels": {"hate": "y"}, "meta": ["y", "body"]})
    assert [columns.cell_name(column) for column in ("key", "image", "y", "body")] == [
        "field 'id' (column 'key')",
        "field 'images' (column 'image')",  # unmapped, images are read from an image column where theirs is empty
        "fields 'labels.hate', 'meta.y' (column 'y')",
        "fields 'text', 'meta.body' (column 'body')",
    ]
    assert "text" not in ColumnMap.from_recipe({"text": None}).wanted(["text"])  # a field mapped to None reads none


def test_renamed_columns_labels_and_meta():
    mapping = {"id": "pid", "text": "tweet", "image": "img", "comments": "replies", "labels": {"hate": "class"}}
    row = {"pid": "x1", "tweet": "t", "img": "p.jpg", "replies": '["a", "b"]', "class": 2, "lang": "en", "src": "tw"}
    post = convert(row, {**mapping, "meta": {"language": "lang", "src": "src"}})
    assert (post.id, post.text, post.images, post.comments) == ("x1", "t", ["p.jpg"], ["a", "b"])
    assert post.labels == {"hate": 2} and post.meta == {"language": "en", "src": "tw"}


def test_label_and_meta_lists_keep_column_names():
    post = convert(
        {"text": "t", "hate": True, "offensive": "yes", "lang": "en"},
        {"labels": ["hate", "offensive"], "meta": ["lang"]},
    )
    assert post.labels == {"hate": True, "offensive": "yes"} and post.meta == {"lang": "en"}


@pytest.mark.parametrize("cell", [None, "", math.nan])
def test_empty_cells_are_masked_not_errors(cell):
    row = {"id": cell, "text": cell, "images": cell, "comments": cell, "y": cell}
    post = convert(row, {"labels": {"y": "y"}}, index=4)
    assert (post.id, post.text, post.images, post.comments, post.labels) == ("4", None, [], [], {})


@pytest.mark.parametrize("cell", [[], "[]"])
def test_empty_lists_mean_no_elements_but_an_empty_multilabel(cell):
    post = convert({"images": cell, "comments": cell, "y": cell}, {"labels": {"y": "y"}})
    assert (post.images, post.comments, post.labels) == ([], [], {"y": []})


def test_json_encoded_lists_and_label_lists():
    row = {"images": '["a.png", "b.png"]', "comments": '["x", "", null, "  "]', "topics": '["spam", "scam"]'}
    post = convert(row, {"labels": {"topics": "topics"}})
    assert post.images == ["a.png", "b.png"] and post.comments == ["x"] and post.labels == {"topics": ["spam", "scam"]}


def test_null_comments_are_left_out_as_in_a_post_given_as_a_dict(tmp_path):
    comments = ["a", None, math.nan, "b"]
    dump = tmp_path / "posts.jsonl"
    dump.write_text(json.dumps({"id": "d", "comments": comments}) + "\n")  # json.dumps writes NaN
    assert "NaN" in dump.read_text()
    [read] = read_posts(dump)
    assert read.comments == Post.from_dict({"comments": comments}).comments == ["a", "b"]
    assert convert({"comments": json.dumps(comments)}).comments == ["a", "b"]  # a CSV cell's JSON list


def test_plain_strings_are_single_items():
    post = convert({"images": "a.png", "comments": "[removed]"})
    assert post.images == ["a.png"] and post.comments == ["[removed]"]


def test_hugging_face_image_structs_and_bytes():
    row = {"images": [{"bytes": b"PNG", "path": "a.png"}, {"bytes": None, "path": "b.png"}, b"JPG", None]}
    assert convert(row).images == [b"PNG", "b.png", b"JPG"]


def test_unknown_key_names_valid_ones_and_suggests():
    with pytest.raises(ValueError, match=r"unknown key 'txt' \(did you mean 'text'\?\); valid: id, text, images"):
        ColumnMap.from_recipe({"txt": "tweet"})
    with pytest.raises(ValueError, match="did you mean 'labels'"):
        ColumnMap.from_recipe({"label": "class"})


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"image": "a", "images": "b"}, "either 'image' or 'images'"),
        ({"text": ["a"]}, "columns.text: expected a column name"),
        ({"labels": "class"}, "columns.labels: expected a dict"),
        ({"meta": {"lang": 3}}, "columns.meta: names and columns are text, got 3"),
    ],
)
def test_bad_mapping_values(mapping, message):
    with pytest.raises(ValueError, match=message):
        ColumnMap.from_recipe(mapping)


def test_missing_mapped_column_names_file_key_and_available_columns():
    with pytest.raises(
        ValueError, match=r"posts.csv: column 'tweets' \(columns.text\) not found \(did you mean 'tweet'\?\)"
    ):
        ColumnMap.from_recipe({"text": "tweets"}).bind(["id", "tweet"], "posts.csv")
    with pytest.raises(ValueError, match=r"columns.labels.hate\) not found; available: id, tweet"):
        ColumnMap.from_recipe({"labels": {"hate": "class"}}).bind(["id", "tweet"], "posts.csv")


def test_a_column_the_file_names_with_spaces_around_it_is_refused_naming_it_as_the_file_does(tmp_path: Path):
    (tmp_path / "posts.csv").write_text("id, text, label\na, hello, 1\n", encoding="utf-8")  # spaces after commas
    as_written = "a name is read as written, the spaces around it too, as pandas and pyarrow read it"
    unmapped = "column 'text', which field 'text' is read from where no mapping names another, not found"
    with pytest.raises(ValueError, match=re.escape(f"posts.csv: {unmapped} (the file names ' text': {as_written})")):
        list(read_posts(tmp_path / "posts.csv"))  # read as posts without text before
    mapped = f"column 'label' (columns.labels.hate) not found (the file names ' label': {as_written}); available"
    with pytest.raises(ValueError, match=re.escape(f"posts.csv: {mapped}")):
        list(read_posts(tmp_path / "posts.csv", columns={"text": " text", "labels": {"hate": "label"}}))
    posts = read_posts(tmp_path / "posts.csv", columns={"text": " text", "labels": {"hate": " label"}})
    assert [(post.text, post.labels) for post in posts] == [(" hello", {"hate": 1})]  # mapped as named: read


def test_a_column_read_that_the_file_names_twice_is_refused_naming_it_and_its_fields():
    mapping = ColumnMap.from_recipe({"labels": {"hate": "y"}, "meta": {"y": "y"}})
    message = "d.csv: 2 columns are named 'y', read into fields 'labels.hate', 'meta.y': which one is meant"
    with pytest.raises(ValueError, match=re.escape(message)):
        mapping.bind(["id", "text", "y", "y"], "d.csv")
    with pytest.raises(ValueError, match="2 columns are named 'text', read into field 'text':"):
        mapping.bind(["id", "text", "text", "y"], "d.csv")
    assert mapping.bind(["id", "text", "y", "notes", "notes"], "d.csv") is mapping  # a column not read may repeat


def test_unmapped_default_columns_may_be_absent():
    post = convert({"body": "x"})
    assert (post.text, post.images, post.comments) == (None, [], [])


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"id": "b", "text": 5},
            r"^posts.csv:2 \(post id='b'\) field 'text' \(column 'text'\): must be a string, got 5",
        ),
        ({"id": 7, "comments": [1]}, r"^posts.csv:2 \(post id='7'\) field 'comments' \(column 'comments'\): holds 1"),
        ({"id": "b", "images": [3.5]}, r"^posts.csv:2 \(post id='b'\) field 'images' \(column 'images'\): holds 3.5"),
        (
            {"image": {"url": "a.png"}},
            r"\(post id='0'\) field 'images' \(column 'image'\): holds \{'url': 'a.png'\}, not an",
        ),
        ({"images": [{"foo": 1}]}, r"\(column 'images'\): holds \{'foo': 1\}, not an image path or bytes"),
    ],
)
def test_wrong_cell_types_name_row_id_and_field(row, message):
    with pytest.raises(ValueError, match=message):
        convert(row)


def test_fingerprint_key_follows_the_mapping():
    assert ColumnMap.from_recipe(None).fingerprint_key() == ColumnMap.from_recipe({}).fingerprint_key()
    assert (
        ColumnMap.from_recipe({"text": "a"}).fingerprint_key() != ColumnMap.from_recipe({"text": "b"}).fingerprint_key()
    )


def test_field_mapped_to_none_is_not_read():
    post = convert({"text": "t", "comments": ["c"], "images": ["a.png"]}, {"comments": None, "images": None})
    assert (post.text, post.comments, post.images) == ("t", [], [])


@pytest.mark.parametrize("images", [None, "", math.nan, [], "[]", " [ ] "])
def test_an_images_cell_absent_null_or_empty_falls_back_to_the_image_cell(images):
    assert convert({"images": images, "image": "one.png"}).images == ["one.png"]


def test_json_list_strings_are_lists_in_text_cells_alone():
    row = {"images": '["a.png", "b.png"]', "comments": "[1, 2]", "image": "c.png", "topics": '["spam", "scam"]'}
    columns = ColumnMap.from_recipe({"labels": ["topics"]}).bind(list(row), "posts.jsonl")
    post = columns.to_post(row, 0, "posts.jsonl:1", None)
    assert post.images == ['["a.png", "b.png"]'] and post.comments == ["[1, 2]"]
    assert post.labels == {"topics": '["spam", "scam"]'}
    empty = {"images": "[]", "comments": "[]", "image": "c.png", "topics": "[]"}
    empty = columns.to_post(empty, 0, "posts.jsonl:1", None)
    assert empty.images == ["[]"] and empty.comments == ["[]"] and empty.labels == {"topics": "[]"}


def test_a_json_list_string_in_a_text_cell_is_decoded_once(monkeypatch):
    decoded = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, **kwargs: decoded.append(text) or loads(text, **kwargs))
    row = {"id": "1", "images": '["a.png", "b.png"]', "comments": '["so", "fake"]', "image": "c.png"}
    assert convert(row).images == ["a.png", "b.png"]
    assert sorted(decoded) == sorted([row["images"], row["comments"]])
    decoded.clear()
    assert convert(row | {"images": " [ ] "}).images == ["c.png"]  # an empty list read, then the image cell
    assert sorted(decoded) == sorted([" [ ] ", row["comments"]])


def test_an_unknown_mapping_key_is_refused_naming_the_post_fields():
    with pytest.raises(ValueError, match="valid: id, text, images, image, comments, labels, meta$"):
        ColumnMap.from_recipe({"txet": "body"})


def test_text_in_a_parquet_binary_column_as_impala_and_hive_write_it_is_read_and_bytes_not_utf8_are_named(
    tmp_path: Path,
) -> None:
    table = pa.table(
        {
            "id": pa.array([b"a1", b"a2"], pa.binary()),
            "text": pa.array(["héllo".encode(), b"x"], pa.large_binary()),
            "comments": pa.array([[b"nice"], []], pa.list_(pa.binary())),
            "hate": pa.array([b"hate", b"not-hate"], pa.binary()),
            "images": pa.array([b"\x89PNG", b""], pa.binary()),
        }
    )
    pq.write_table(table, tmp_path / "posts.parquet")
    posts = list(read_posts(tmp_path / "posts.parquet", {"labels": ["hate"]}))
    assert [(post.id, post.text, post.comments, post.labels) for post in posts] == [
        ("a1", "héllo", ["nice"], {"hate": "hate"}),
        ("a2", "x", [], {"hate": "not-hate"}),
    ]
    assert posts[0].images == [b"\x89PNG"]  # a picture's bytes stay bytes
    table = table.append_column("lang", pa.array([b"en", None], pa.binary()))
    pq.write_table(table, tmp_path / "meta.parquet")
    assert [post.meta for post in read_posts(tmp_path / "meta.parquet", {"meta": ["lang"]})] == [
        {"lang": "en"},  # read as b'en' before, which a language slice named "b'en'"
        {"lang": None},
    ]
    pq.write_table(table.set_column(1, "text", pa.array([b"ok", b"caf\xe9"], pa.binary())), tmp_path / "bad.parquet")
    said = f"{tmp_path / 'bad.parquet'}:1 (post id='a2') field 'text' (column 'text'): not UTF-8 text (byte 4 of "
    said += "the cell)"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        list(read_posts(tmp_path / "bad.parquet"))


def test_meta_bytes_not_utf8_stay_bytes_and_bytes_in_a_meta_or_labels_column_of_objects_are_read_as_text(
    tmp_path: Path,
) -> None:
    digest = bytes(range(200, 216))
    table = pa.table(
        {
            "id": ["a", "b"],
            "digest": pa.array([digest, b"ok"], pa.binary()),
            "marks": pa.array([[b"x", b"\xff"], None], pa.list_(pa.binary())),
            "meta": pa.array(
                [{"lang": b"en", "thumb": b"\x89PNG\xff"}, None],
                pa.struct([("lang", pa.binary()), ("thumb", pa.binary())]),
            ),
            "labels": pa.array(
                [{"hate": b"yes", "tags": [b"spam"]}, None],
                pa.struct([("hate", pa.binary()), ("tags", pa.list_(pa.binary()))]),
            ),
        }
    )
    pq.write_table(table, tmp_path / "posts.parquet")
    posts = list(read_posts(tmp_path / "posts.parquet", {"meta": ["digest", "marks"]}))
    assert [post.meta for post in posts] == [  # a digest refused in every row before; "ok" and ["x", ...] text before
        {"digest": digest, "marks": [b"x", b"\xff"], "lang": "en", "thumb": b"\x89PNG\xff"},
        {"digest": b"ok", "marks": None},
    ]
    assert [post.labels for post in posts] == [{"hate": "yes", "tags": ["spam"]}, {}]  # b'yes', [b'spam'] before
    labels = pa.array([{"hate": b"ok"}, {"hate": b"caf\xe9"}], pa.struct([("hate", pa.binary())]))
    pq.write_table(table.drop_columns(["labels"]).append_column("labels", labels), tmp_path / "bad.parquet")
    said = f"{tmp_path / 'bad.parquet'}:1 (post id='b') field 'labels.hate' (column 'labels'): not UTF-8 text (byte 4 "
    with pytest.raises(ValueError, match=f"^{re.escape(said)}of the cell\\)$"):
        list(read_posts(tmp_path / "bad.parquet"))

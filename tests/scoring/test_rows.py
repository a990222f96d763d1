"""A shard's rows as posts or row errors: the same whichever shards the rows fall in."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faim.data.columns import ColumnMap
from faim.data.post import as_posts
from faim.data.sources import read_posts
from faim.scoring import rows
from faim.scoring.engine import score_dump
from faim.scoring.exported import score_exported
from faim.scoring.inputs import Shard, read_shards
from faim.scoring.report import Held
from faim.scoring.rows import FIRST_SHARDS, ShardRows, shard_posts, warn_unheld_at_first
from tests.scoring.test_shards import write_spanning_csv

KINDS = ["text", "image", "comments"]


def read_in_shards(path: Path, columns: dict | None, shard_rows: int) -> list[tuple]:
    """Each row of the file ``path`` as ``(id, images, comments)`` or ``(id, error kind, message)``,
    read ``shard_rows`` rows to a shard, by id (none last)."""
    read = []
    mapping = ColumnMap.from_recipe(columns)
    for shard in read_shards([path], shard_rows, mapping):
        rows = shard_posts(shard, mapping, None, KINDS)
        read += [(post.id, post.images, post.comments) for _, post in rows.posts]
        read += [(error.post_id, error.kind, error.message) for error in rows.errors]
    return sorted(read, key=lambda row: str(row[0]))


def test_json_lines_rows_read_the_same_in_any_shards_and_as_evaluation_reads_them(tmp_path: Path) -> None:
    rows = [{"id": "0", "text": "t", "images": ["b.jpg"]}] + [
        {"id": str(i), "text": "t", "image": "a.jpg"} for i in (1, 2)
    ]
    rows.append({"id": "3", "text": "t", "image": "a.jpg", "replies": ["a reply"]})
    path = tmp_path / "dump.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    expected = [("0", ["b.jpg"], []), ("1", ["a.jpg"], []), ("2", ["a.jpg"], []), ("3", ["a.jpg"], ["a reply"])]
    for shard_rows in (1, 2, 4):
        assert read_in_shards(path, {"comments": "replies"}, shard_rows) == expected
    evaluated = read_posts(path, {"comments": "replies"})
    assert sorted((post.id, post.images, post.comments) for post in evaluated) == expected


def test_a_column_no_object_of_a_json_lines_file_holds_is_a_schema_error_on_every_row(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    path.write_text('{"id": "0", "text": "t"}\n{"id": "1", "caption": "c"}\nnot json\n', encoding="utf-8")
    message = "column 'replies' (columns.comments) not found; available: id, text, caption"
    assert read_in_shards(path, {"comments": "replies"}, 1) == [
        ("0", "schema", f"{path}:1 (post id='0'): {message}"),
        ("1", "schema", f"{path}:2 (post id='1'): {message}"),
        (None, "schema", f"{path}:3: {message}"),
    ]


def test_a_csv_row_error_names_the_post_id_where_one_is_readable(tmp_path: Path) -> None:
    path = tmp_path / "dump.csv"
    path.write_text("id,body\n7,hello\n8,too,many\n", encoding="utf-8")
    mapping = ColumnMap.from_recipe({"text": "caption"})
    (shard,) = read_shards([path], 10, mapping)
    assert [error.message for error in shard_posts(shard, mapping, None, ["text"]).errors] == [
        f"{path}:3: expected 2 cells (id, body), got 3: '8,too,many'",  # which cell is the id cannot be told
        f"{path}:2 (post id='7'): column 'caption' (columns.text) not found; available: id, body",
    ]
    path.write_text("text\nhello\ntoo,many\n", encoding="utf-8")  # no id column: a row's id is its line
    (shard,) = read_shards([path], 10, ColumnMap())
    (error,) = shard_posts(shard, ColumnMap(), None, ["text"]).errors
    assert error.message == f"{path}:3 (post id='3'): expected 1 cell (text), got 2: 'too,many'"


def test_an_empty_image_cell_of_a_row_with_nothing_else_is_said_to_be_empty(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    path.write_text('{"id": "0", "image": ""}\n', encoding="utf-8")
    (shard,) = read_shards([path], 1, ColumnMap())
    (error,) = shard_posts(shard, ColumnMap(), None, ["text", "image"]).errors
    said = "fields 'text', 'image': nothing the model reads (text, image): no text, the image is empty"
    assert error.message == f"{path}:1 (post id='0') {said}"


def test_a_row_holding_only_a_language_mapped_to_meta_holds_no_metadata_as_evaluation_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    path.write_text('{"id": "0", "lang": "en"}\n{"id": "1", "lang": "en", "likes": 4}\n', encoding="utf-8")
    mapping = ColumnMap.from_recipe({"meta": ["lang", "likes"]})
    (shard,) = read_shards([path], 2, mapping)
    rows = shard_posts(shard, mapping, None, ["meta", "text"])
    (error,) = rows.errors
    assert [post.id for _, post in rows.posts] == ["1"]
    assert (error.post_id, error.kind) == ("0", "empty")
    said = "fields 'meta', 'text': nothing the model reads (meta, text): no metadata, no text"
    assert error.message.startswith(f"{path}:1 (post id='0') {said}")


def test_a_json_lines_file_starting_with_a_byte_order_mark_is_read_from_its_first_row(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "caption": "first"}\n{"id": "b", "caption": "second"}\n')
    read = []
    mapping = ColumnMap.from_recipe({"text": "caption"})
    for shard in read_shards([path], 1, mapping):
        rows = shard_posts(shard, mapping, None, ["text"])
        read += [(post.id, post.text) for _, post in rows.posts] + rows.errors
    assert read == [("a", "first"), ("b", "second")]


JSON_LIST_STRINGS = [
    {"id": "0", "text": "t", "images": "[1].png", "comments": "[1, 2]"},
    {"id": "1", "text": "t", "images": '["a.png", "b.png"]', "comments": "[]"},
    {"id": "2", "text": "t", "comments": '["so", "fake"]'},
]


def test_a_string_like_a_json_list_is_one_picture_or_comment_in_json_lines_and_parquet_as_in_the_python_api(
    tmp_path: Path,
) -> None:
    expected = sorted((post.id, post.images, post.comments) for post in as_posts(JSON_LIST_STRINGS))
    assert expected[1] == ("1", ['["a.png", "b.png"]'], ["[]"])
    jsonl = tmp_path / "dump.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in JSON_LIST_STRINGS), encoding="utf-8")
    parquet = tmp_path / "dump.parquet"
    pq.write_table(pa.Table.from_pylist(JSON_LIST_STRINGS), parquet)
    for path in (jsonl, parquet):
        assert read_in_shards(path, None, 2) == expected
        assert sorted((post.id, post.images, post.comments) for post in read_posts(path)) == expected


def test_a_csv_cell_holding_a_json_list_is_that_list(tmp_path: Path) -> None:
    path = tmp_path / "dump.csv"
    path.write_text('id,text,images,comments\n0,t,"[""a.png"", ""b.png""]","[""so"", ""fake""]"\n1,t,,[]\n')
    expected = [("0", ["a.png", "b.png"], ["so", "fake"]), ("1", [], [])]
    assert read_in_shards(path, None, 1) == expected
    assert [(post.id, post.images, post.comments) for post in read_posts(path)] == expected


def test_what_a_shards_rows_hold_is_the_kinds_no_post_holds_and_the_columns_no_mapping_reads(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    lines = [{"id": "0", "text": "t"}, {"id": "1", "text": "t", "img": "a.png"}, {"id": "2", "likes": 3}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    unheld = ("image", "comments")  # of the rows holding no post, every kind
    for shard_rows, held in ((1, [(1, unheld, ()), (1, unheld, ("img",)), (0, tuple(KINDS), ("likes",))]),
                             (3, [(2, unheld, ("img", "likes"))])):  # fmt: skip
        shards = read_shards([path], shard_rows, ColumnMap())
        assert [shard_posts(shard, ColumnMap(), None, KINDS).held(KINDS, ColumnMap()) for shard in shards] == [
            Held(*part) for part in held
        ]


def test_a_json_lines_line_that_is_not_utf8_is_said_as_reading_posts_says_it_its_row_naming_file_and_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"id": "0", "text": "ok"}\n{"id": "1", "text": "caf\xe9"}\n')
    (shard,) = read_shards([path], 2, ColumnMap())
    (error,) = shard_posts(shard, ColumnMap(), None, KINDS).errors
    said = f"{path}:2: not UTF-8 text (byte 25 of the line)"
    assert (error.source, error.post_id, error.kind, error.message) == (f"{path}:2", "1", "text_encoding", said)
    with pytest.raises(ValueError) as read:
        list(read_posts(path))
    assert str(read.value) == said


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"text": "x",}', "invalid JSON (Expecting property name enclosed in double quotes at column 14)"),
        (b'{"text": "caf\xc3\xa9\tau lait"}', "invalid JSON (Invalid control character at column 15)"),
        (b'{"text": "a\\q"}', "invalid JSON (Invalid \\escape at column 12)"),
        (b'{"text": "x"', "invalid JSON (Expecting ',' delimiter at column 13)"),  # cut short: past its end
        (b"[1, 2]", "expected a JSON object, got list (JSON Lines files, .json ones too, hold one object per line, "
                    "not an array)"),
    ],
)  # fmt: skip
def test_a_json_lines_line_holding_no_json_object_is_said_as_reading_posts_says_it_its_row_naming_file_and_line(
    line: bytes, said: str, tmp_path: Path
) -> None:
    path = tmp_path / "dump.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "0", "text": "ok"}\r\n\n  \r\n' + line + b"\n")
    (shard,) = read_shards([path], 2, ColumnMap())
    (error,) = shard_posts(shard, ColumnMap(), None, KINDS).errors
    assert (error.source, error.kind, error.message) == (f"{path}:4", "json", f"{path}:4: {said}")
    with pytest.raises(ValueError) as read:
        list(read_posts(path))
    assert str(read.value) == f"{path}:4: {said}"


def test_a_json_lines_row_giving_a_key_twice_is_an_error_of_its_id_where_that_is_given_once(tmp_path: Path) -> None:
    path = tmp_path / "dump.jsonl"
    lines = [
        b'{"id": "a", "text": "one", "id": "b"}',
        b'{"id": "c", "text": "two", "text": "three"}',
        b'{"id": "d", "text": "t", "meta": {"x": 1, "x": 2}}',
        b'{"text": "t", "text": "u"}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    (shard,) = read_shards([path], 4, ColumnMap())
    errors = shard_posts(shard, ColumnMap(), None, KINDS).errors
    assert [(error.source, error.post_id, error.kind) for error in errors] == [
        (f"{path}:1", None, "json"),  # the id given last, b, before 89e68d1: which one is meant cannot be told
        (f"{path}:2", "c", "json"),  # none since 89e68d1
        (f"{path}:3", "d", "json"),
        (f"{path}:4", "4", "json"),  # its row number, as a post without an id takes
    ]
    assert (
        errors[0].message
        == f"{path}:1: key 'id' given twice in one object, whose values cannot both be read; give it once"
    )


def test_a_csv_cell_that_is_not_utf8_names_the_fields_it_is_read_into_and_its_column_as_reading_posts_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "dump.csv"
    path.write_bytes(b"id,body,y\n1,caf\xe9,0\n2,fine,\xff1\n")
    mapping = ColumnMap.from_recipe({"text": "body", "labels": {"hate": "y"}, "meta": ["y"]})
    (shard,) = read_shards([path], 2, mapping)
    errors = shard_posts(shard, mapping, None, KINDS).errors
    first = f"{path}:2 (post id='1') field 'text' (column 'body'): not UTF-8 text (byte 4 of the cell)"
    assert [(error.source, error.post_id, error.kind, error.message) for error in errors] == [
        (f"{path}:2", "1", "text_encoding", first),
        (
            f"{path}:3",
            "2",
            "text_encoding",
            f"{path}:3 (post id='2') fields 'labels.hate', 'meta.y' (column 'y'): not UTF-8 text (byte 1 of the cell)",
        ),
    ]
    with pytest.raises(ValueError) as read:
        list(read_posts(path, {"text": "body", "labels": {"hate": "y"}, "meta": ["y"]}))
    assert str(read.value) == first


def warned_at_first(files: list[Path], shard_rows: int) -> list[str]:
    """What ``warn_unheld_at_first`` says of ``files`` read by a model of text and pictures, none of whose rows
    holds a picture."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_unheld_at_first(files, shard_rows, ColumnMap(), None, ["text", "image"])
    return [str(warning.message).split(": no post holds")[0] for warning in caught]


def test_the_first_shard_warned_of_is_the_first_holding_a_post_whatever_rows_that_are_not_posts_come_before(
    tmp_path: Path,
) -> None:
    posts = "".join(json.dumps({"text": f"post {n}"}) + "\n" for n in range(3))
    dump = tmp_path / "dump.jsonl"
    dump.write_text(posts, encoding="utf-8")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n" * 3, encoding="utf-8")
    bare = tmp_path / "bare.jsonl"  # objects holding nothing the model reads
    bare.write_text('{"likes": 3}\n' * 3, encoding="utf-8")
    first = f"{dump} (its first 2 rows, read before scoring)"
    assert warned_at_first([broken, bare, dump], 2) == [first]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(broken.read_text() + posts, encoding="utf-8")
    assert warned_at_first([mixed], 2) == [f"{mixed} (its 2 rows from row 3, read before scoring)"]
    assert warned_at_first([broken, bare], 2) == []


def test_nothing_is_said_before_scoring_where_no_shard_follows_the_first_holding_a_post_whatever_its_lines_count(
    tmp_path: Path,
) -> None:
    sixteen = write_spanning_csv(tmp_path / "sixteen.csv")
    seventeen = tmp_path / "seventeen.csv"
    seventeen.write_text(sixteen.read_text() + "16,last\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    one = tmp_path / "one.jsonl"
    one.write_text('{"text": "t"}\n')
    cases = [([sixteen], False), ([seventeen], True), ([sixteen, empty], False), ([sixteen, empty, one], True),
             ([empty, one, empty], False), ([empty, one, one], True)]  # fmt: skip
    for files, said in cases:
        assert bool(warned_at_first(files, 16)) is said, files


def test_a_dump_none_of_whose_rows_is_a_post_is_read_before_scoring_only_as_far_as_its_first_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = []

    def counted(shard: Shard, *args: Any) -> ShardRows:
        read.append(shard.size)
        return shard_posts(shard, *args)

    monkeypatch.setattr(rows, "shard_posts", counted)
    bare = tmp_path / "bare.jsonl"  # as a mapping naming no column the rows hold reads them: every row empty
    bare.write_text('{"body": "b"}\n' * 2 * (FIRST_SHARDS + 1), encoding="utf-8")
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "t"}\n' * 3, encoding="utf-8")
    assert warned_at_first([bare, dump], 2) == []  # its first post lies past the first shards
    assert read == [2] * FIRST_SHARDS
    bare.write_text('{"body": "b"}\n' * 2 * (FIRST_SHARDS - 1), encoding="utf-8")
    assert warned_at_first([bare, dump], 2) == [f"{dump} (its first 2 rows, read before scoring)"]


def test_the_readme_gives_as_many_shards_read_for_a_post_before_scoring_as_faim_score_reads() -> None:
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert f"none of the dump's first {FIRST_SHARDS} shards holds a post" in readme


def test_a_dump_whose_metadata_holds_none_of_the_fields_the_model_reads_is_warned_of_before_scoring(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    dump = tmp_path / "dump.jsonl"
    lines = [{"id": str(n), "text": f"post {n}", "meta": {"like_count": n, "lang": "en"}} for n in range(3)]
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    remedy = (
        "give each under the name the model reads: a column so named, with --map meta=likes (in Python, any column: "
        "columns: {meta: {likes: COLUMN}}), or a field so named in each post's meta object"
    )
    said = (
        "no post's metadata holds any field the model reads (likes, shares), only like_count: each post is read with "
        "them missing; "
    )

    def warned(score: Any, model: Path, name: str, shard_rows: int | None, **columns: Any) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            score(model, dump, tmp_path / name, shard_rows=shard_rows, workers=1, progress=False, **columns)
        return [str(warning.message) for warning in caught if "metadata holds" in str(warning.message)]

    first = f"{dump} (its first 2 rows, read before scoring): {said}later rows may hold them; if none does, {remedy}"
    assert warned(score_dump, exported[0], "saved", 2) == [first]
    assert warned(score_exported, exported[1], "export", None) == [
        f"{dump} (its first 3 rows, read before scoring): {said}{remedy}"
    ]
    lines[2]["meta"]["shares"] = 4  # one post holding one field the model reads
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert warned(score_dump, exported[0], "held", None) == []
    mapped = {"columns": {"text": "text", "meta": {"likes": "like_count"}}}  # the remedy given in Python
    lines = [{"id": str(n), "text": f"post {n}", "like_count": n} for n in range(3)]
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert warned(score_dump, exported[0], "mapped", None, **mapped) == []

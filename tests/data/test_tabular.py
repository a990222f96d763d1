"""Reading files of posts: which JSON Lines lines are rows, and a Parquet file that cannot be read whole."""

from __future__ import annotations

import csv
import datetime
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import damaged_parquet

from faim.data import tabular
from faim.data.columns import ColumnMap
from faim.data.sources import JsonlSource, input_columns, read_posts
from faim.data.tabular import spread_json_array
from faim.scoring.inputs import read_shards


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2003 \t", "\x1c"])
def test_a_line_of_unicode_whitespace_is_blank_to_read_posts_and_to_scoring_alike(tmp_path: Path, space: str) -> None:
    path = tmp_path / "posts.jsonl"
    path.write_text(f'{{"id": "a", "text": "one"}}\n{space}\n{{"id": "b", "text": "two"}}\n', encoding="utf-8")
    assert [post.id for post in read_posts(path)] == ["a", "b"]
    (shard,) = read_shards([path], 10, ColumnMap.from_recipe(None))
    assert [number for number, _ in shard.rows] == [1, 3] and not shard.errors


@pytest.mark.parametrize("first", ["[\n", ' [{"id": "a", "text": "one"},\n', '[{"id": "a", "text": "one"}\n,'])
def test_a_json_array_spread_over_lines_is_refused_by_name_by_every_reader_of_posts(tmp_path: Path, first: str) -> None:
    path = tmp_path / "posts.json"
    path.write_text(f'\n{first}  {{"id": "b", "text": "two"}}\n]\n', encoding="utf-8")
    refused = rf"^{re.escape(str(path))}: holds a JSON array spread over lines, .* write it one post per line"
    with pytest.raises(ValueError, match=refused):
        list(read_posts(path))
    with pytest.raises(ValueError, match=refused):
        JsonlSource(train=str(tmp_path)).posts("train")
    with pytest.raises(ValueError, match=refused):
        input_columns(path)


@pytest.mark.parametrize("first", ["{\n", '{"id": "a",\n'])
def test_json_objects_spread_over_lines_are_refused_by_name_by_every_reader_of_posts(tmp_path: Path, first: str):
    path = tmp_path / "posts.jsonl"
    path.write_text(f'\n{first}  "text": "one"\n}}\n{{\n  "id": "b"\n}}\n', encoding="utf-8")  # as jq writes them
    refused = rf"^{re.escape(str(path))}: holds JSON objects spread over lines, .* one post per line \(jq -c \.\)$"
    with pytest.raises(ValueError, match=refused):  # line 1: invalid JSON (Expecting property name...) before
        list(read_posts(path))
    with pytest.raises(ValueError, match=refused):
        input_columns(path)


@pytest.mark.parametrize(
    "first",
    [
        b"[export of 2024-05-01]\n",
        b"[2024-05-01] export of 2 posts\n",
        b'["a"] // a note\n',
        b'[{"id": "a", "text": "caf\xe9"}]\n',
        b'[{"id": "a", "text": "' + b"x" * 70000 + b'"},\n',
    ],
)
def test_a_first_line_in_brackets_that_opens_no_spread_array_is_read_as_rows(tmp_path: Path, first: bytes) -> None:
    path = tmp_path / "posts.jsonl"
    path.write_bytes(first + b'{"id": "b", "text": "two"}\n')  # a header line, a one-line array, a line too long
    assert not spread_json_array(path)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:1: "):  # the line's own fault, as a row's
        list(read_posts(path))


@pytest.mark.parametrize("given", ["posts", "posts/*.jsonl"], ids=["folder", "glob"])
def test_a_split_of_a_folder_or_glob_is_listed_once_as_its_posts_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    (tmp_path / "posts").mkdir()
    for name in ("a", "b"):
        (tmp_path / "posts" / f"{name}.jsonl").write_text(f'{{"id": "{name}", "text": "x"}}\n', encoding="utf-8")
    listed = []
    expand = tabular.expand
    monkeypatch.setattr(tabular, "expand", lambda spec: listed.append(spec) or expand(spec))
    source = JsonlSource(train=str(tmp_path / given))
    assert [post.id for post in source.posts("train")] == ["a", "b"]
    assert listed == [tmp_path / given]


def test_a_parquet_row_group_that_cannot_be_read_stops_reading_posts_there_naming_file_row_and_group(
    tmp_path: Path,
) -> None:
    path = damaged_parquet(tmp_path / "damaged.parquet", 12, 4, group=1)
    posts = read_posts(path)
    assert [next(posts).id for _ in range(4)] == ["0", "1", "2", "3"]  # the rows before it
    said = f"{path}:4: row group 1 (rows 4 to 7) of the Parquet file cannot be read (Couldn't deserialize thrift: "
    remedy = "; restore the file from a sound copy"
    with pytest.raises(ValueError, match=rf"^{re.escape(said)}[^\n]*Deserializing page header failed\.\){remedy}$"):
        next(posts)


def test_the_rows_of_a_parquet_row_group_read_up_to_a_damaged_page_are_read_and_the_others_of_it_are_errors(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pages.parquet"
    texts = [f"text number {i} " * 5 for i in range(4000)]
    pq.write_table(pa.table({"text": texts}), path, row_group_size=2000, data_page_size=4096, use_dictionary=False)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    data = bytearray(path.read_bytes())
    at = chunk.data_page_offset + chunk.total_compressed_size * 4 // 5  # in a page after the first
    data[at : at + 40] = bytes(40)
    path.write_bytes(bytes(data))
    records = list(tabular.parquet_records(tabular.open_parquet(path), 100))
    failed = [number for number, row in records if isinstance(row, str)]
    assert [number for number, _ in records] == list(range(4000)) and failed == list(range(failed[0], 2000))
    assert all(row == {"text": texts[number]} for number, row in records if number not in failed)
    said = f"row group 0 (rows 0 to 1999) of the Parquet file cannot be read from row {failed[0]} on ("
    assert 0 < failed[0] and records[failed[0]][1].startswith(said)


def test_the_row_groups_of_a_parquet_file_are_read_by_one_reader_a_damaged_one_costing_its_own_rows_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readers = []
    iter_batches = pq.ParquetFile.iter_batches
    monkeypatch.setattr(
        pq.ParquetFile,
        "iter_batches",
        lambda file, **given: readers.append(given["row_groups"]) or iter_batches(file, **given),
    )
    sound = tmp_path / "sound.parquet"  # 15 row groups, as a streaming writer leaves them
    pq.write_table(pa.table({"id": [str(i) for i in range(60)]}), sound, row_group_size=4)
    records = list(tabular.parquet_records(tabular.open_parquet(sound), 4, skipped=lambda block: block in (3, 4, 9)))
    assert records == [(n, None if n // 4 in (3, 4, 9) else {"id": str(n)}) for n in range(60)]
    assert readers == [range(0, 3), range(5, 9), range(10, 15)]  # the groups between those skipped whole, each once
    damaged = damaged_parquet(tmp_path / "damaged.parquet", 60, 4, group=5)  # rows 20 to 23 cannot be read
    said = "row group 5 (rows 20 to 23) of the Parquet file cannot be read (Couldn't deserialize thrift: "
    for batch_rows in (3, 4, 7, 100):  # batches reaching from sound groups into the damaged one too
        readers.clear()
        records = list(tabular.parquet_records(tabular.open_parquet(damaged), batch_rows))
        assert [number for number, _ in records] == list(range(60)) and len(readers) < 15
        assert all(row.startswith(said) for _, row in records[20:24])
        assert records[:20] + records[24:] == [
            (n, {"id": str(n), "text": f"post {n}", "note": "n"}) for n in range(60) if not 20 <= n < 24
        ]


def test_a_parquet_id_column_of_integers_text_or_whole_floats_reads_each_id_as_its_text(tmp_path: Path) -> None:
    columns = {"int64": pa.array([1, 2], pa.int64()), "string": ["a", "b"], "double": [123.0, None]}
    for name, ids in columns.items():  # a double column: pandas' integers holding a null, as it writes them
        pq.write_table(pa.table({"id": ids, "text": ["x", "y"]}), tmp_path / f"{name}.parquet")
    assert [post.id for post in read_posts(tmp_path / "int64.parquet")] == ["1", "2"]
    assert [post.id for post in read_posts(tmp_path / "string.parquet")] == ["a", "b"]
    assert [post.id for post in read_posts(tmp_path / "double.parquet")] == ["123", "1"]


@pytest.mark.parametrize(("width", "bound", "past"), [("float32", 24, 123456789), ("float16", 11, 2049)])
def test_a_parquet_id_column_of_narrow_floats_reads_only_the_integers_its_width_holds(
    tmp_path: Path, width: str, bound: int, past: int
) -> None:
    small = tmp_path / "small.parquet"
    pd.DataFrame({"id": [2**bound - 1, None, 7]}).astype({"id": width}).to_parquet(small)
    assert [post.id for post in read_posts(small)] == [str(2**bound - 1), "1", "7"]
    ids = tmp_path / "ids.parquet"  # ids the float column rounded to one another
    pd.DataFrame({"id": [7, past, past + 1]}).astype({"id": width}).to_parquet(ids)
    said = f"{ids}:1 field 'id' (column 'id'): expected a string or an integer, got the float"
    with pytest.raises(ValueError, match=f"^{re.escape(said)} {float(np.dtype(width).type(past))}, 2\\*\\*{bound}"):
        list(read_posts(ids))


@pytest.mark.parametrize(
    ("ident", "got"), [('{"a": 1}', "a dict ({'a': 1})"), ("[1, 2]", "a list ([1, 2])"), ("true", "a bool (True)")]
)
def test_an_id_that_is_no_string_or_integer_is_refused_naming_the_line_and_field(
    tmp_path: Path, ident: str, got: str
) -> None:
    path = tmp_path / "posts.jsonl"
    path.write_text(f'{{"id": "a", "text": "one"}}\n{{"id": {ident}, "text": "two"}}\n', encoding="utf-8")
    said = f"{path}:2 field 'id' (column 'id'): expected a string or an integer, got {got}"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        list(read_posts(path))


def test_a_parquet_cell_python_cannot_hold_is_read_as_such_refused_only_by_a_field_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "far.parquet"
    far = pa.array([0, 10**15], pa.timestamp("ms"))  # the year 33658, past Python's datetime
    meta = pa.StructArray.from_arrays([pa.array([1, 2]), far], ["likes", "when"])
    pq.write_table(pa.table({"id": ["a", "b"], "text": ["x", "y"], "when": far, "meta": meta}), path)
    (shard,) = read_shards([path], 10, ColumnMap.from_recipe({"meta": ["when"]}))
    assert [row["id"] for _, row in shard.rows] == ["a", "b"]
    assert repr(shard.rows[1][1]["when"]) == "a timestamp[ms] value Python cannot hold (date value out of range)"
    assert [post.id for post in read_posts(path, columns={"meta": None})] == ["a", "b"]
    posts = read_posts(path)  # its meta read from the struct column, of which the second cannot be
    assert next(posts).meta == {"likes": 1, "when": datetime.datetime(1970, 1, 1)}
    said = f"{path}:1 (post id='b') field 'meta' (column 'meta'): a struct<likes: int64, when: timestamp[ms]> value"
    with pytest.raises(ValueError, match=f"^{re.escape(said)} Python cannot hold \\(date value out of range\\)$"):
        next(posts)


def test_a_meta_field_of_binary_is_text_in_every_row_or_bytes_in_every_row_as_the_whole_file_decides(
    tmp_path: Path,
) -> None:
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "posts.parquet"
    struct = pa.struct([("lang", pa.binary()), ("digest", pa.binary())])
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "text": ["x", "y", "z"],
            "source": pa.array([b"web", b"app", b"\xff\xfe"], pa.binary()),  # mostly text: one cell is not
            "meta": pa.array([{"lang": b"en", "digest": b"ok"}, None, {"lang": b"fr", "digest": b"\x80"}], struct),
        }
    )
    pq.write_table(table, path, row_group_size=1)  # the cell that is not text in a row group of its own, read last
    as_read = [{"source": b"web", "lang": "en", "digest": b"ok"}, {"source": b"app"}]  # 'web', 'app', 'ok' before
    as_read.append({"source": b"\xff\xfe", "lang": "fr", "digest": b"\x80"})
    columns = {"meta": {"source": "source"}}
    assert [post.meta for post in read_posts(path, columns)] == as_read
    (shard,) = read_shards([path], 10, ColumnMap.from_recipe(columns))  # faim score reads them alike
    assert [row["source"] for _, row in shard.rows] == [b"web", b"app", b"\xff\xfe"]
    assert [row["meta"] for _, row in shard.rows][0] == {"lang": "en", "digest": b"ok"}
    datasets.Dataset(table).save_to_disk(tmp_path / "saved")  # as does a saved dataset
    assert [post.meta for post in read_posts(tmp_path / "saved", columns)] == as_read
    (shard,) = read_shards([tmp_path / "saved"], 10, ColumnMap.from_recipe(columns))
    assert [row["source"] for _, row in shard.rows] == [b"web", b"app", b"\xff\xfe"]
    text = table.set_column(2, "source", pa.array([b"web", b"app", b"tv"], pa.binary()))
    pq.write_table(text, path, row_group_size=1)  # every cell text: text in every row
    assert [post.meta["source"] for post in read_posts(path, columns)] == ["web", "app", "tv"]
    lang, code = pa.array([b"en", b"fr"]).dictionary_encode(), pa.array([b"US", b"\xff\xfe"], pa.binary(2))
    pq.write_table(pa.table({"id": ["a", "b"], "lang": lang, "code": code}), path)  # a dictionary's, a fixed width's
    as_read = [{"lang": "en", "code": b"US"}, {"lang": "fr", "code": b"\xff\xfe"}]
    assert [post.meta for post in read_posts(path, {"meta": ["lang", "code"]})] == as_read


def test_a_parquet_page_whose_checksum_does_not_match_is_refused_not_read_as_other_text(tmp_path: Path) -> None:
    path = tmp_path / "checksummed.parquet"
    texts = [f"post number {i} " * 8 for i in range(8)]
    table = pa.table({"id": [str(i) for i in range(8)], "text": texts})
    pq.write_table(table, path, row_group_size=4, compression="none", use_dictionary=False, write_page_checksum=True)
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(1)
    data = bytearray(path.read_bytes())
    middle = chunk.data_page_offset + chunk.total_compressed_size // 2  # in a text, as Spark's writer checksums pages
    data[middle : middle + 4] = bytes(4)  # four NUL bytes where the text was, the page's checksum unchanged
    path.write_bytes(bytes(data))
    posts = read_posts(path)
    assert [next(posts).text for _ in range(4)] == texts[:4]
    said = f"{path}:4: row group 1 (rows 4 to 7) of the Parquet file cannot be read (could not verify page integrity"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}"):
        next(posts)


@pytest.mark.parametrize("name", ["posts.csv", "posts.tsv", "posts.jsonl"])
def test_a_text_file_written_as_utf16_is_refused_by_every_reader_of_posts_naming_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    text = '{"id": "a", "text": "one"}\n' if name.endswith(".jsonl") else "id,text\na,one\n"
    path.write_bytes(text.replace(",", "\t" if name.endswith(".tsv") else ",").encode("utf-16"))  # as Excel saves
    said = f"{path}: holds UTF-16 text (its byte order mark says so), where faim reads UTF-8: save it as UTF-8"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}"):
        list(read_posts(path))
    with pytest.raises(ValueError, match=f"^{re.escape(said)}"):
        input_columns(path)


@pytest.mark.parametrize("name", ["posts.csv", "posts.tsv"])
def test_a_cell_spelling_nan_is_missing_as_an_empty_one_as_python_and_pandas_write_a_missing_number(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file, delimiter="\t" if name.endswith(".tsv") else ",")
        writer.writerow(["id", "text", "lang", "likes", "hate"])
        writer.writerows([["a", "one", float("nan"), 3, 1], ["b", "two", "NaN", 2.5, "nan"], ["c", "x", "", "", ""]])
    posts = list(read_posts(path, columns={"meta": ["lang", "likes"], "labels": ["hate"]}))
    assert [post.meta for post in posts] == [
        {"lang": None, "likes": 3},
        {"lang": None, "likes": 2.5},
        {"lang": None, "likes": None},
    ]
    assert [post.labels for post in posts] == [{"hate": 1}, {}, {}]


def test_a_meta_cell_of_digits_joined_by_underscores_is_that_text_not_the_number_python_reads(tmp_path: Path) -> None:
    path = tmp_path / "posts.csv"
    path.write_text("id,text,thread,score\na,one,20_24,1_0.5\nb,two,2024,1e3\n", encoding="utf-8")
    assert [post.meta for post in read_posts(path, columns={"meta": ["thread", "score"]})] == [
        {"thread": "20_24", "score": "1_0.5"},
        {"thread": 2024, "score": 1000.0},
    ]


def test_a_json_lines_object_giving_a_key_twice_is_refused_naming_the_line_and_key_not_read_as_its_last(
    tmp_path: Path,
) -> None:
    path = tmp_path / "posts.jsonl"
    path.write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "two", "text": "three"}\n', encoding="utf-8")
    said = f"{path}:2: key 'text' given twice in one object, whose values cannot both be read; give it once"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        list(read_posts(path))
    path.write_text('{"id": "a", "labels": {"hate": 1, "hate": 0}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}:1: key 'hate' given twice in one object"):
        list(read_posts(path))

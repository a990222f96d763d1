"""Sharding a dump: deterministic shard keys; raw rows kept raw."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import damaged_parquet

from faim.data import tabular
from faim.data.columns import ColumnMap
from faim.data.sources import READERS, read_posts
from faim.scoring import inputs
from faim.scoring.inputs import count_rows, key_widths, own_shards, read_shards, shard_key


def write_spanning_csv(path: Path) -> Path:
    """A CSV file of 16 rows on 21 lines: four cells span two."""
    path.write_text("id,text\n" + "".join(f'{n},"post {n}' + ("\nmore" * (n % 4 == 0)) + '"\n' for n in range(16)))
    return path


def write_jsonl(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"{path.stem}-{i}", "text": f"post {i}"}) + "\n" for i in range(n)))
    return path


def test_shard_keys_are_stable_and_cover_every_row(tmp_path: Path) -> None:
    files = [write_jsonl(tmp_path / "a.jsonl", 25), write_jsonl(tmp_path / "b.jsonl", 7)]
    shards = list(read_shards(files, 10, ColumnMap()))
    assert [s.key for s in shards] == ["00000-000000", "00000-000001", "00000-000002", "00001-000000"]
    assert sum(s.size for s in shards) == 32 == sum(count_rows(f) for f in files)
    assert [s.key for s in read_shards(files, 10, ColumnMap())] == [s.key for s in shards]
    assert shards[0].rows[0] == (1, (tmp_path / "a.jsonl").read_bytes().splitlines(keepends=True)[0])


def test_shards_are_named_by_their_files_names_where_given_and_read_from_the_files(tmp_path: Path) -> None:
    files = [write_jsonl(tmp_path / "a.jsonl", 3), write_jsonl(tmp_path / "b.jsonl", 2)]
    names = ["dump/a.jsonl", "dump/b.jsonl"]
    for shards in (read_shards(files, 2, ColumnMap(), names), own_shards(files, 2, names)):
        assert [(shard.name, shard.file) for shard in shards] == [
            ("dump/a.jsonl", str(files[0])), ("dump/a.jsonl", str(files[0])), ("dump/b.jsonl", str(files[1]))
        ]  # fmt: skip
    assert [shard.name for shard in read_shards(files, 2, ColumnMap())] == [str(files[0])] * 2 + [str(files[1])]


def test_own_shards_are_keyed_and_cut_as_read_shards_cuts_them_files_holding_no_row_giving_none(
    tmp_path: Path,
) -> None:
    sixteen = write_spanning_csv(tmp_path / "sixteen.csv")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    files = [empty, sixteen, write_jsonl(tmp_path / "a.jsonl", 20), empty]
    read = [(shard.key, shard.file, shard.rows) for shard in read_shards(files, 16, ColumnMap())]
    assert [(shard.key, shard.file, shard.rows) for shard in own_shards(files, 16)] == read
    assert [(key, rows[0][0]) for key, _, rows in read] == [("00001-000000", 2), ("00002-000000", 1),
                                                            ("00002-000001", 17)]  # fmt: skip


def test_json_lines_are_parsed_when_read_only_as_far_as_checking_the_columns_named_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", 25)
    parsed = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, **kwargs: parsed.append(text) or loads(text, **kwargs))
    for mapping, keys_read in ((None, 0), ({"text": "text"}, 1), ({"text": "caption"}, 25)):
        parsed.clear()
        shards = list(read_shards([path], 10, ColumnMap.from_recipe(mapping)))
        assert sum(shard.size for shard in shards) == 25
        assert len(parsed) == keys_read  # the lines are the scorers' to parse, once each
        assert shards[0].header == (["id", "text"] if keys_read else None)


def test_csv_cells_stay_bytes_and_bad_rows_become_errors_numbered_by_the_line_they_start_on(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b'id,text\n1,hello\n2,"two\nlines"\n3,too,many\n\n4,\xff\xfe\n5,"a ""quoted"" word"\n')
    (shard,) = read_shards([path], 100, ColumnMap())
    assert [n for n, _ in shard.rows] == [2, 3, 7, 8]  # the header is line 1; line 6 is blank
    assert shard.rows[1][1] == {"id": b"2", "text": b"two\nlines"}
    assert shard.rows[2][1] == {"id": b"4", "text": b"\xff\xfe"}
    assert shard.rows[3][1] == {"id": b"5", "text": b'a "quoted" word'}
    assert shard.errors == [(5, "csv_row", "expected 2 cells (id, text), got 3: '3,too,many'")]


def test_a_row_of_another_cell_count_is_worded_as_reading_the_posts_words_it(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text("id\ttext\n1\ta\n2\tb\textra\n", encoding="utf-8")
    (shard,) = read_shards([path], 100, ColumnMap())
    ((number, kind, problem),) = shard.errors
    with pytest.raises(ValueError) as raised:
        list(read_posts(path))
    assert str(raised.value) == f"{path}:{number}: {problem}"
    assert problem == "expected 2 cells (id, text), got 3: '2\\tb\\textra'"


def test_a_csv_is_cut_into_shards_of_rows_and_errors_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("id,text\n1,a\n2,b,extra\n3,c\n4,d\n5,e\n")
    shards = list(read_shards([path], 2, ColumnMap()))
    assert [([n for n, _ in s.rows], [n for n, *_ in s.errors]) for s in shards] == [
        ([2], [3]),
        ([4, 5], []),
        ([6], []),
    ]


def test_a_semicolon_separated_csv_is_cut_at_its_semicolons(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(b'\xef\xbb\xbfid;text\n1;hello, world\n2;"a; b"\n')
    (shard,) = read_shards([path], 100, ColumnMap())
    assert shard.header == ["id", "text"] and not shard.errors
    assert [row for _, row in shard.rows] == [{"id": b"1", "text": b"hello, world"}, {"id": b"2", "text": b"a; b"}]


def test_a_shards_cells_are_text_where_the_source_reading_its_format_says_so(tmp_path: Path) -> None:
    rows = [{"id": "1", "text": "t"}]
    paths = [write_jsonl(tmp_path / "d.jsonl", 1), tmp_path / "d.parquet"]
    pq.write_table(pa.Table.from_pylist(rows), paths[1])
    for suffix in ("csv", "tsv"):
        paths.append(tmp_path / f"d.{suffix}")
        paths[-1].write_text("id\ttext\n1\tt\n" if suffix == "tsv" else "id,text\n1,t\n")
    for path, shard in zip(paths, read_shards(paths, 10, ColumnMap()), strict=True):
        assert shard.text_cells is READERS[shard.format].text_cells is (path.suffix in (".csv", ".tsv"))


def test_parquet_rows_are_numbered_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(5)], "text": ["t"] * 5}), path)
    shards = list(read_shards([path], 2, ColumnMap()))
    assert [n for s in shards for n, _ in s.rows] == [0, 1, 2, 3, 4]
    assert count_rows(path) == 5


def test_the_rows_of_a_parquet_row_group_that_cannot_be_read_are_errors_of_their_shards_in_their_places(
    tmp_path: Path,
) -> None:
    path = damaged_parquet(tmp_path / "damaged.parquet", 12, 4, group=1)
    shards = list(read_shards([path], 3, ColumnMap()))
    assert [shard.key for shard in shards] == ["00000-000000", "00000-000001", "00000-000002", "00000-000003"]
    assert [[number for number, _ in shard.rows] for shard in shards] == [[0, 1, 2], [3], [8], [9, 10, 11]]
    assert [[number for number, *_ in shard.errors] for shard in shards] == [[], [4, 5], [6, 7], []]
    (number, kind, said) = shards[2].errors[0]
    assert kind == "row_group" and said.startswith("row group 1 (rows 4 to 7) of the Parquet file cannot be read (")


def test_a_damaged_parquet_column_no_field_reads_costs_no_row_its_name_kept_in_the_header(tmp_path: Path) -> None:
    path = damaged_parquet(tmp_path / "damaged.parquet", 8, 4, group=1, column="note")
    for shards in (read_shards([path], 3, ColumnMap()), own_shards([path], 3, columns=ColumnMap())):
        shards = list(shards)
        assert [number for shard in shards for number, _ in shard.rows] == list(range(8))
        assert not any(shard.errors for shard in shards) and shards[0].header == ["id", "text", "note"]
        assert shards[2].rows[0] == (6, {"id": "6", "text": "post 6"})


def test_a_quote_never_closed_is_an_error_of_its_line_and_the_lines_after_it_are_read_as_rows(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b'id,text\n1,"a"b\n2,5" tall\n3,"two\nlines"\n4,"never closed\n\n5,e\n6,f\n')
    (shard,) = read_shards([path], 100, ColumnMap())
    assert [(n, row["text"]) for n, row in shard.rows] == [(2, b"ab"), (3, b'5" tall'), (4, b"two\nlines"), (8, b"e"),
                                                           (9, b"f")]  # fmt: skip
    assert shard.errors == [(6, "csv_row", "a quote opened in this row is never closed")]


def test_a_csv_header_that_is_not_utf8_names_its_columns_with_escapes(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"id,te\xffxt\n1,a\n")
    (shard,) = read_shards([path], 100, ColumnMap())
    assert shard.header == ["id", "te\\xffxt"] and shard.rows == [(2, {"id": b"1", "te\\xffxt": b"a"})]


def test_a_file_named_parquet_that_is_not_one_is_refused_naming_it(tmp_path: Path) -> None:
    renamed = tmp_path / "renamed.parquet"
    renamed.write_text('{"id": "1", "text": "a"}\n')
    truncated = tmp_path / "truncated.parquet"
    pq.write_table(pa.table({"id": ["1", "2"], "text": ["a", "b"]}), truncated)
    truncated.write_bytes(truncated.read_bytes()[:-20])
    for path in (renamed, truncated):
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: not a Parquet file \(Parquet magic bytes"):
            count_rows(path)
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: not a Parquet file"):
            list(read_shards([path], 10, ColumnMap()))


def write_dataset(path: Path, n: int) -> Path:
    from datasets import Dataset

    Dataset.from_dict({"id": [str(i) for i in range(n)], "text": [f"post {i}" for i in range(n)]}).save_to_disk(path)
    return path


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("d.csv", write_spanning_csv),
        ("d.jsonl", lambda path: write_jsonl(path, 16)),
        ("d", lambda path: write_dataset(path, 16)),
    ],
)
def test_the_shards_done_come_empty_in_their_places_and_the_others_as_reading_every_row_gives_them(
    name: str, write, tmp_path: Path
) -> None:
    path = write(tmp_path / name)
    whole = [(shard.key, shard.rows, shard.errors) for shard in read_shards([path], 3, ColumnMap())]
    done = {"00000-000000", "00000-000002", "00000-000003"}
    read = [(shard.key, shard.rows, shard.errors) for shard in read_shards([path], 3, ColumnMap(), done=done)]
    assert read == [(key, [], []) if key in done else (key, rows, errors) for key, rows, errors in whole]


def test_a_parquet_row_group_of_done_shards_alone_is_not_read_nor_are_done_rows_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = damaged_parquet(tmp_path / "damaged.parquet", 12, 4, group=1)  # rows 4 to 7 cannot be read
    whole = list(read_shards([path], 2, ColumnMap()))
    done = {"00000-000002", "00000-000003"}  # rows 4 to 7
    shards = list(read_shards([path], 2, ColumnMap(), done=done))
    assert [(shard.key, shard.size) for shard in shards] == [
        (shard.key, 0 if shard.key in done else 2) for shard in whole
    ]
    assert not any(shard.errors for shard in shards)
    assert [shard.rows for shard in shards if shard.key not in done] == [s.rows for s in whole if s.key not in done]
    partly = list(read_shards([path], 2, ColumnMap(), done={"00000-000002"}))  # the group read for rows 6 and 7
    assert [number for number, *_ in partly[3].errors] == [6, 7] and partly[2].size == 0
    converted = []
    real = tabular.python_rows
    monkeypatch.setattr(tabular, "python_rows", lambda batch: converted.append(len(batch)) or real(batch))
    one_group = tmp_path / "one.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(12)], "text": ["t"] * 12}), one_group)
    shards = list(read_shards([one_group], 3, ColumnMap(), done={"00000-000000", "00000-000001", "00000-000003"}))
    assert sum(converted) == 3 and [number for number, _ in shards[2].rows] == [6, 7, 8]


def test_a_file_whose_every_shard_is_done_is_not_warned_of_as_holding_no_row(tmp_path: Path) -> None:
    files = [write_jsonl(tmp_path / "a.jsonl", 4), tmp_path / "b.parquet"]
    pq.write_table(pa.table({"id": ["1", "2"], "text": ["t", "u"]}), files[1])
    done = {"00000-000000", "00000-000001", "00001-000000"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [(shard.key, shard.size) for shard in read_shards(files, 2, ColumnMap(), done=done)] == [
            (key, 0) for key in sorted(done)
        ]


def test_shard_keys_have_the_digits_the_dump_takes_so_parts_sort_in_input_order_and_never_fewer_than_before(
    tmp_path: Path,
) -> None:
    assert key_widths([40, 7], 32) == (5, 6)  # the keys every earlier run had
    assert key_widths([10] * 100_001, 32) == (6, 6)
    assert key_widths([32_000_000], 32) == (5, 7) and key_widths([31_999_999], 32) == (5, 6)  # a line counted short
    widths = key_widths([1] * 100_001, 32)
    keys = [shard_key(file, 0, widths) for file in (9_999, 10_000, 99_999, 100_000)]
    assert sorted(keys) == keys and len({len(key) for key in keys}) == 1
    shards = [shard_key(0, shard, key_widths([1_000_001 * 2], 2)) for shard in (10_000, 100_000, 999_999, 1_000_000)]
    assert sorted(shards) == shards
    files = [write_jsonl(tmp_path / "a.jsonl", 5)]
    assert [shard.key for shard in read_shards(files, 2, ColumnMap(), widths=(6, 7))] == [
        "000000-0000000", "000000-0000001", "000000-0000002"
    ]  # fmt: skip


def test_a_json_lines_file_every_shard_of_which_is_done_is_not_parsed_for_the_keys_its_objects_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [write_jsonl(tmp_path / "a.jsonl", 4), write_jsonl(tmp_path / "b.jsonl", 4)]
    parsed = []
    real = inputs._json_object
    monkeypatch.setattr(inputs, "_json_object", lambda line: parsed.append(line) or real(line))
    columns = ColumnMap.from_recipe({"meta": ["likes"]})  # a column no object holds: every line parsed for it
    shards = list(read_shards(files, 2, columns, done={"00000-000000", "00000-000001", "00001-000000"}))
    assert len(parsed) == 4 and all(line.startswith(b'{"id": "b-') for line in parsed)
    assert shards[3].header == ["id", "text"] and shards[3].rows[0][0] == 3

"""JSONL, CSV and Parquet sources on small generated files: round trips, mapping, errors, streaming."""

from __future__ import annotations

import csv
import inspect
import io
import itertools
import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faim.data import tabular
from faim.data.columns import ColumnMap
from faim.data.sources import (
    CsvSource,
    JsonlSource,
    ParquetSource,
    Source,
    check_split,
    holds_objects,
    input_columns,
    read_posts,
)
from faim.data.tabular import csv_records, csv_rows
from faim.registry import SOURCES, build_source_spec

ROWS = [
    {"id": "p1", "text": "hello", "images": ["a.png", "b.png"], "comments": ["nice", "meh"], "hate": 1, "lang": "en"},
    {"id": "p2", "text": "", "images": [], "comments": [], "hate": None, "lang": "fr"},
    {
        "id": "p3",
        "text": 'a "quoted", comma\nand newline',
        "images": ["c.png"],
        "comments": ["x"],
        "hate": 0,
        "lang": "en",
    },
]
COLUMNS = {"labels": {"hate": "hate"}, "meta": ["lang"]}
EXPECTED = [
    ("p1", "hello", ["a.png", "b.png"], ["nice", "meh"], {"hate": 1}, {"lang": "en"}),
    ("p2", None, [], [], {}, {"lang": "fr"}),
    ("p3", 'a "quoted", comma\nand newline', ["c.png"], ["x"], {"hate": 0}, {"lang": "en"}),
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict], delimiter: str = ",") -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})
    return path


def write_parquet(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


FORMATS = {
    "jsonl": (JsonlSource, write_jsonl, {}, [1, 2, 3]),
    "csv": (CsvSource, write_csv, {}, [2, 3, 4]),
    "tsv": (CsvSource, lambda p, rows: write_csv(p, rows, "\t"), {"delimiter": "\t"}, [2, 3, 4]),
    "parquet": (ParquetSource, write_parquet, {}, [0, 1, 2]),
}


def fields(posts):
    return [(p.id, p.text, p.images, p.comments, p.labels, p.meta) for p in posts]


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(tmp_path, fmt):
    cls, write, options, numbers = FORMATS[fmt]
    path = write(tmp_path / f"train.{fmt}", ROWS)
    source = cls(train=str(path), columns=COLUMNS, **options)
    posts = source.posts("train")
    assert source.splits() == ["train"]
    assert fields(posts) == EXPECTED
    assert [p.origin for p in posts] == [f"{path}:{n}" for n in numbers]
    assert all(p.image_root == tmp_path.absolute() for p in posts)
    assert fields(read_posts(path, columns=COLUMNS)) == EXPECTED


@pytest.mark.parametrize("fmt", FORMATS)
def test_renamed_columns_and_single_image_column(tmp_path, fmt):
    cls, write, options, _ = FORMATS[fmt]
    rows = [
        {"pid": 10, "tweet": "t", "img": "x.png", "class": "hate"},
        {"pid": 11, "tweet": "u", "img": "", "class": ""},
    ]
    path = write(tmp_path / f"d.{fmt}", rows)
    mapping = {"id": "pid", "text": "tweet", "image": "img", "labels": {"hate": "class"}}
    posts = cls(test=str(path), columns=mapping, **options).posts("test")
    assert fields(posts) == [("10", "t", ["x.png"], [], {"hate": "hate"}, {}), ("11", "u", [], [], {}, {})]


@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_column_names_file_key_and_available(tmp_path, fmt):
    cls, write, options, _ = FORMATS[fmt]
    path = write(tmp_path / f"d.{fmt}", ROWS)
    source = cls(train=str(path), columns={"text": "tweet"}, **options)
    with pytest.raises(
        ValueError, match=r"d\.\w+: column 'tweet' \(columns.text\) not found.*available: id, text, images"
    ):
        source.posts("train")


def test_missing_id_becomes_row_index(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": "a"}, {"text": "b"}])
    assert [p.id for p in read_posts(path)] == ["0", "1"]


def test_posts_without_an_id_in_a_folder_of_several_files_take_distinct_places(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", [{"text": "a"}, {"text": "b"}])
    write_csv(tmp_path / "b.csv", [{"text": "c"}])
    expected = ["0", "1", "2"]
    assert [p.id for p in read_posts(tmp_path)] == expected
    assert [p.id for p in JsonlSource(train=str(tmp_path / "*.jsonl")).posts("train")] == expected[:2]


def test_a_file_naming_a_column_read_twice_is_refused_rather_than_read_by_its_last_cell(tmp_path):
    (tmp_path / "d.csv").write_text("id,text,text\na,one,two\n", encoding="utf-8")
    names = pa.table([["a"], ["one"], ["two"]], names=["id", "text", "text"])
    pq.write_table(names, tmp_path / "d.parquet")
    for name in ("d.csv", "d.parquet"):
        with pytest.raises(ValueError, match=f"{name}: 2 columns are named 'text', read into field 'text'"):
            list(read_posts(tmp_path / name))


def test_unknown_split_names_configured_ones_in_the_wording_every_source_shares(tmp_path):
    source = JsonlSource(train=str(write_jsonl(tmp_path / "t.jsonl", ROWS)), validation="v.jsonl")
    with pytest.raises(KeyError, match="no split 'test' .*; found: train, validation"):
        source.posts("test")


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_a_split_not_configured_is_named_by_the_recipe_path_and_the_key_that_gives_it(kind, tmp_path):
    source = build_source_spec({"type": kind, "train": str(tmp_path / f"t.{kind}")}, "data.sources[1]")
    expected = "data.sources[1]: no split 'test' (give its file as data.sources[1].test); found: train"
    for read in (check_split, lambda source, split: source.posts(split), lambda source, split: source.describe(split)):
        with pytest.raises(KeyError, match=re.escape(expected)):
            read(source, "test")
    with pytest.raises(KeyError, match=re.escape("data.sources[1]: no split 'tset'; found: train")):
        source.posts("tset")


def test_a_split_file_not_there_is_named_by_check_split_without_reading_a_file_and_not_when_the_source_is_built(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(JsonlSource, "rows", lambda self, path: pytest.fail(f"{path} was read"))
    train = str(write_jsonl(tmp_path / "t.jsonl", ROWS))
    source = JsonlSource(train=str(tmp_path / "gone.jsonl"), validation=str(tmp_path / "valdation.jsonl"), test=train)
    source.check_split("test")
    with pytest.raises(FileNotFoundError, match=r"^data.validation: .*valdation.jsonl does not exist"):
        source.check_split("validation")
    with pytest.raises(FileNotFoundError, match=r"^data.train: .*gone.jsonl does not exist \([^)]*\)$"):
        check_split(source, "train")  # given whole: read from nowhere else
    monkeypatch.chdir(tmp_path)
    relative = JsonlSource(train="data/train.jsonl", validation="data/*.jsonl")  # beside a recipe in another folder
    from_recipe = "; a recipe's data paths are read from the working directory, not its folder$"
    with pytest.raises(FileNotFoundError, match=r"^data.train: data/train.jsonl does not exist \(.*\)" + from_recipe):
        check_split(relative, "train")
    with pytest.raises(FileNotFoundError, match=r"^data.validation: data/\*.jsonl: no input files .*" + from_recipe):
        check_split(relative, "validation")
    (tmp_path / "data").mkdir()  # found here, holding no input: read from where it was meant to be
    with pytest.raises(FileNotFoundError, match=r"^data.validation: data/\*.jsonl: no input files \([^;]*\)$"):
        check_split(relative, "validation")
    here = JsonlSource(train="*.ndjson")  # its folder is the working directory, where none of its files are
    with pytest.raises(FileNotFoundError, match=r"^data.train: \*.ndjson: no input files .*" + from_recipe):
        check_split(here, "train")
    (tmp_path / "folder").mkdir()
    write_csv(tmp_path / "folder" / "a.csv", ROWS)
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(ValueError, match=r"^data.train: .*folder: .*a.csv is not jsonl, which this source reads"):
            read(JsonlSource(train=str(tmp_path / "folder")), "train")


def test_unknown_mapping_key_fails_at_construction():
    with pytest.raises(ValueError, match="did you mean 'comments'"):
        CsvSource(train="x.csv", columns={"coments": "replies"})


def test_bad_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n\n{"text": oops}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path}:3: invalid JSON"):
        list(read_posts(path))


def test_a_json_file_holding_an_array_says_json_lines_hold_one_object_per_line(tmp_path):
    path = tmp_path / "posts.json"
    path.write_text('[{"text": "a"}, {"text": "b"}]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path}:1: expected a JSON object, got list \(JSON Lines files, .json ones"):
        list(read_posts(path))


def test_a_line_that_is_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=rf"{path}:2: not UTF-8 text \(byte 14 of the line\)"):
        list(read_posts(path))


def test_a_json_lines_file_starting_with_a_byte_order_mark_is_read_from_its_first_row(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "caption": "first"}\n{"id": "b", "text": "second"}\n')
    assert [(post.id, post.text) for post in read_posts(path, {"text": "caption"})] == [("a", "first"), ("b", None)]


def test_json_lines_columns_are_the_keys_of_any_object_not_only_the_first(tmp_path):
    rows = [{"id": "a", "text": "unlabelled, no picture"}, {"id": "b", "text": "x", "image": "p.png", "hate": 1}]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    posts = JsonlSource(train=str(path), columns={"labels": {"hate": "hate"}}).posts("train")
    assert [(post.labels, len(post.images)) for post in posts] == [({}, 0), ({"hate": 1}, 1)]


def decoded_lines(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts decoded as JSON from here on, by ``json.loads`` or as a JSON Lines line (``tabular.JSON_OBJECTS``)."""
    parsed: list[str] = []
    loads, decode = json.loads, tabular.JSON_OBJECTS.decode
    monkeypatch.setattr(json, "loads", lambda text, **kwargs: parsed.append(text) or loads(text, **kwargs))
    monkeypatch.setattr(tabular.JSON_OBJECTS, "decode", lambda text: parsed.append(text) or decode(text))
    return parsed


def test_json_lines_lines_are_parsed_for_keys_only_as_far_as_the_columns_named_need(tmp_path, monkeypatch):
    rows = [{"id": str(i), "text": "t", "lang": "en"} for i in range(20)]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    parsed = decoded_lines(monkeypatch)
    for mapping, keys_read in ((None, 0), ({"meta": ["lang"]}, 1)):
        parsed.clear()
        assert len(list(read_posts(path, mapping))) == 20
        assert len(parsed) == 20 + keys_read  # each line once for its post; for keys, up to the one holding them
    parsed.clear()
    with pytest.raises(ValueError, match=r"column 'tweet' \(columns.text\) not found.*available: id, text, lang$"):
        list(read_posts(path, {"text": "tweet"}))
    assert len(parsed) == 20  # a column no object holds: every line's keys, so the error names all


def test_whether_json_lines_hold_a_mapping_is_decoded_only_from_lines_holding_a_brace_beyond_their_own(
    tmp_path, monkeypatch
):
    # every line of a file holding no mapping was decoded, 0.5 s a run of faim score of 200,000 rows mapping labels
    rows = [{"id": str(i), "text": "a {brace} in text" if i == 3 else "t", "label": "yes"} for i in range(20)]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    parsed = decoded_lines(monkeypatch)
    assert not holds_objects(path, ["label", "meta"])
    assert len(parsed) == 1  # the line whose text holds braces, decoded to find it holds no mapping
    write_jsonl(path, rows + [{"id": "x", "label": {"harmful": "yes"}}, {"id": "y", "meta": {"a": 1}}])
    assert holds_objects(path, ["label"]) and holds_objects(path, ["meta"])
    path.write_text('{"id": "z", "label": {"bad json\n' + json.dumps({"id": "w", "label": {"a": 1}}) + "\n")
    assert holds_objects(path, ["label"])  # a line that is no JSON object passed over


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_columns_of_an_input_are_its_fields_mapped_or_not(tmp_path, fmt):
    path = FORMATS[fmt][1](tmp_path / f"d.{fmt}", ROWS)
    assert input_columns(path) == list(ROWS[0])


def test_the_columns_of_json_lines_and_of_a_folder_are_each_key_any_object_holds_once(tmp_path):
    (tmp_path / "in").mkdir()
    write_jsonl(tmp_path / "in" / "a.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "lang": "en"}])
    write_csv(tmp_path / "in" / "b.csv", [{"text": "y", "language": "fr"}])
    assert input_columns(tmp_path / "in") == ["id", "text", "lang", "language"]


def test_a_csv_row_is_named_by_the_line_it_starts_on_and_a_bad_one_stops_the_read_naming_it(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b'id,text,y\n1,"two\nlines",0\n\n2,fine,1\n3,too,many,cells\n')
    rows = csv_rows(path, ColumnMap.from_recipe({"labels": ["y"]}))[1]
    assert [(number, row["text"]) for number, row in itertools.islice(rows, 2)] == [(2, "two\nlines"), (5, "fine")]
    with pytest.raises(ValueError, match=rf"{path}:6: expected 3 cells \(id, text, y\), got 4: '3,too,many,cells'$"):
        next(rows)
    path.write_bytes(b"id,text,y\n1,caf\xe9,0\n")
    with pytest.raises(
        ValueError,
        match=rf"{path}:2 \(post id='1'\) field 'text' \(column 'text'\): not UTF-8 text \(byte 4 of the cell\)",
    ):
        list(read_posts(path, columns={"labels": ["y"]}))
    path.write_bytes(b"id,text,unused\n1,fine,\xff\n")
    assert [p.text for p in read_posts(path)] == ["fine"]  # a column not read is not checked
    path.write_bytes(b'id,text\n1,fine\n2,"never closed\n3,lost\n')
    with pytest.raises(ValueError, match=rf"{path}:3: a quote opened in this row is never closed"):
        list(read_posts(path))


def test_a_csv_cell_that_is_not_utf8_is_refused_naming_its_first_byte_and_one_whose_joined_bytes_are_is_read(
    tmp_path,
) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b'id,text\n1,"caf\xe9"\n')
    refusal = f"{path}:2 (post id='1') field 'text' (column 'text'): not UTF-8 text (byte 4 of the cell)"
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
        list(read_posts(path))
    path.write_bytes(b'id,text\n1,"ab\xe2"\x82\xac\n')  # the bytes after the closing quote complete the character
    assert [post.text for post in read_posts(path)] == ["ab€"]  # as faim score reads it


@pytest.mark.parametrize(
    ("fmt", "rows", "number"),
    [("jsonl", [{"id": "a", "text": "ok"}, {"id": "b", "text": 42}], 2), ("parquet", [{"id": "b", "text": 42}], 0)],
)
def test_non_string_text_names_row_id_and_field(tmp_path, fmt, rows, number):
    path = FORMATS[fmt][1](tmp_path / f"d.{fmt}", rows)
    message = rf"{path}:{number} \(post id='b'\) field 'text' \(column 'text'\): must be a string, got 42"
    with pytest.raises(ValueError, match=message):
        list(read_posts(path))


def test_csv_keeps_text_as_text_and_parses_numeric_labels_per_cell(tmp_path):
    rows = [
        {"id": "001", "text": "123", "y": v, "m": m} for v, m in [("1", "5"), ("", "x"), ("nan", "2.5"), ("hate", "")]
    ]
    posts = list(read_posts(write_csv(tmp_path / "d.csv", rows), columns={"labels": {"y": "y"}, "meta": ["m"]}))
    assert [(p.id, p.text) for p in posts] == [("001", "123")] * 4
    assert [p.labels for p in posts] == [{"y": 1}, {}, {}, {"y": "hate"}]
    assert [p.meta for p in posts] == [{"m": 5}, {"m": "x"}, {"m": 2.5}, {"m": None}]


def test_csv_labels_first_seen_after_many_empty_rows(tmp_path):
    path = tmp_path / "dump.csv"
    pad = "text long enough for several pyarrow blocks"
    lines = [f"{i},{pad} {i},{'' if i < 50_000 else i % 2}\n" for i in range(60_000)]
    path.write_text("id,text,y\n" + "".join(lines), encoding="utf-8")
    labels = [p.labels for p in read_posts(path, columns={"labels": ["y"]})]
    assert len(labels) == 60_000 and labels[49_999] == {} and labels[50_001] == {"y": 1}


def test_csv_without_quoting(tmp_path):
    path = tmp_path / "liar.tsv"
    path.write_text('id\ttext\n1\tsays "hi\n', encoding="utf-8")
    posts = list(CsvSource(delimiter="\t", quote_char=None).iter_posts(path))
    assert [p.text for p in posts] == ['says "hi']


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_a_csv_file_given_without_a_delimiter_is_read_with_the_one_its_header_shows(tmp_path, delimiter):
    path = write_csv(tmp_path / "export.csv", ROWS, delimiter)
    assert fields(read_posts(path, columns=COLUMNS)) == EXPECTED
    assert fields(read_posts(write_csv(tmp_path / "commas.csv", ROWS), columns=COLUMNS)) == EXPECTED


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_a_recipe_csv_source_without_a_delimiter_reads_the_one_the_header_shows(tmp_path, delimiter):
    path = write_csv(tmp_path / "train.csv", ROWS, delimiter)
    assert fields(CsvSource(train=str(path), columns=COLUMNS).posts("train")) == EXPECTED


def test_a_recipe_csv_source_without_a_delimiter_reads_a_tsv_file_at_its_tabs(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("id\ttext, with a comma\n1\thello, world\n", encoding="utf-8")
    assert [p.text for p in CsvSource(train=str(path), columns={"text": "text, with a comma"}).posts("train")] == [
        "hello, world"
    ]


def test_a_recipe_csv_source_reads_a_file_of_another_name_at_the_delimiter_its_header_shows(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("id;text\n1;hello, world\n", encoding="utf-8")
    assert [p.text for p in CsvSource(train=str(path)).posts("train")] == ["hello, world"]


def test_a_delimiter_given_is_kept_even_where_the_header_suggests_another(tmp_path):
    path = tmp_path / "one_column.csv"
    path.write_text("comment;isHate\nfine;0\n", encoding="utf-8")
    source = CsvSource(columns={"text": "comment;isHate"}, delimiter=",")
    assert [p.text for p in source.iter_posts(path)] == ["fine;0"]
    assert [(p.text, p.labels) for p in read_posts(path, columns={"text": "comment", "labels": ["isHate"]})] == [
        ("fine", {"isHate": 0})
    ]


def test_streaming_parquet_in_row_groups(tmp_path):
    path = tmp_path / "dump.parquet"
    ids = [f"post-{i}" for i in range(10_000)]
    pq.write_table(pa.table({"id": ids, "text": [f"text {i}" for i in range(10_000)]}), path, row_group_size=1_000)
    assert pq.ParquetFile(path).num_row_groups == 10
    stream = read_posts(path)
    first = next(stream)
    assert first.id == "post-0" and first.origin == f"{path}:0"
    assert [first.id, *(p.id for p in stream)] == ids


def test_image_root_argument_is_relative_to_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    posts = JsonlSource(train=str(path), image_root="imgs").posts("train")
    assert {p.image_root for p in posts} == {tmp_path / "imgs"}


def test_describe_and_fingerprint(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", ROWS)
    copy = tmp_path / "copy" / "a.jsonl"
    copy.parent.mkdir()
    shutil.copy(path, copy)
    source = JsonlSource(train=str(path), validation=str(copy))
    assert source.describe("train") == str(path)
    assert len(source.fingerprint("train")) == 64
    assert source.fingerprint("train") == source.fingerprint("validation")
    assert JsonlSource(train=str(path), columns={"text": "id"}).fingerprint("train") != source.fingerprint("train")
    write_jsonl(copy, ROWS[:2])
    assert source.fingerprint("train") != source.fingerprint("validation")


def test_a_file_named_parquet_that_is_not_one_is_refused_naming_it(tmp_path):
    folder = tmp_path / "dump"
    folder.mkdir()
    write_parquet(folder / "a.parquet", ROWS)
    write_jsonl(folder / "b.parquet", ROWS)
    message = rf"^{re.escape(str(folder / 'b.parquet'))}: not a Parquet file \(Parquet magic bytes not found"
    with pytest.raises(ValueError, match=message):
        list(read_posts(folder))
    with pytest.raises(ValueError, match=message):
        ParquetSource(train=str(folder), columns=COLUMNS).posts("train")


def test_read_posts_rejects_unknown_extensions(tmp_path):
    with pytest.raises(ValueError, match=r"unknown extension; known: \.jsonl, \.ndjson, \.json, \.csv, \.tsv"):
        read_posts(tmp_path / "posts.xlsx")


def test_sources_are_registered_with_explicit_arguments():
    assert {"jsonl", "csv", "parquet", "hf", "tweeteval"} <= set(SOURCES)
    for cls in SOURCES.values():
        kinds = {p.kind for p in inspect.signature(cls).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, cls
    assert isinstance(JsonlSource(), Source)


def test_a_stray_quote_closed_lines_later_with_text_after_it_is_its_rows_error_and_the_lines_it_took_are_rows(
    tmp_path: Path,
) -> None:
    text = 'id,t\n1,hello\n2,"stray\n3,third\n4,"quoted"\n5,"two\nlines"\n6,"a ""b""\nc"\n7,"x\ny"z\n'
    assert list(csv_records(io.StringIO(text, newline=""), ",")) == [
        (1, ["id", "t"]),
        (2, ["1", "hello"]),
        (3, STRAY_QUOTE.format(line=5)),
        (4, ["3", "third"]),
        (5, ["4", "quoted"]),
        (6, ["5", "two\nlines"]),  # quoted cells over lines, each closed where it ends, are read as they are
        (8, ["6", 'a "b"\nc']),
        (10, STRAY_QUOTE.format(line=11)),
        (11, ['y"z']),
    ]
    path = tmp_path / "d.csv"
    path.write_text(text[: text.index("5,")], encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}:3: {re.escape(STRAY_QUOTE.format(line=5))}$"):
        list(read_posts(path))


STRAY_QUOTE = (
    "a quote opening a cell of this row is closed on line {line} with text after it, taking the lines between into "
    "the cell (a stray quote?): the row is not read, and the lines after its first are read as rows of their own"
)


def test_whitespace_after_a_closing_quote_is_read_and_only_text_after_a_cell_over_lines_is_a_stray_quote(
    tmp_path: Path,
) -> None:
    def records(text: str) -> list:
        return list(csv_records(io.StringIO(text, newline=""), ","))

    assert records('id,t\n1,"multi\nline" \n2,b\n') == [(1, ["id", "t"]), (2, ["1", "multi\nline "]), (4, ["2", "b"])]
    assert records('id,t,x\n1,"a" ,"multi\nline"\n') == [(1, ["id", "t", "x"]), (2, ["1", "a ", "multi\nline"])]
    text = 'id,t,x\n1,"a"  ,b\n2,"x\ny"\t,"a"b\n3,"a"b,"two\nlines"\n4,"two\nlines" z,"c\nd"\n'
    assert records(text) == [
        (1, ["id", "t", "x"]),
        (2, ["1", "a  ", "b"]),  # text after a quote closing a cell of one line joins it, as Python's csv reads it
        (3, ["2", "x\ny\t", "ab"]),
        (5, ["3", "ab", "two\nlines"]),
        (7, STRAY_QUOTE.format(line=8)),  # the cell closed with text after it, not the last one over lines
        (8, ['lines" z', "c\nd"]),
    ]
    path = tmp_path / "d.csv"
    path.write_text('id,text\n1,"multi\nline" \n2,b\n', encoding="utf-8")
    assert [(post.id, post.text) for post in read_posts(path)] == [("1", "multi\nline "), ("2", "b")]


def test_csv_records_report_a_quote_left_open_after_text_after_a_closing_one_and_a_cell_over_the_limit(
    monkeypatch,
) -> None:
    records = csv_records(io.StringIO('id,t,x\n1,"a"b,"never closed\n2,c,d\n', newline=""), ",")
    assert list(records) == [
        (1, ["id", "t", "x"]),
        (2, "a quote opened in this row is never closed"),
        (3, ["2", "c", "d"]),
    ]
    monkeypatch.setattr(tabular, "MAX_CELL", 20)
    limit = csv.field_size_limit()  # one for the whole process, which csv_records sets: put back for other readers
    try:
        records = list(csv_records(io.StringIO('id,t\n1,"' + "x" * 30 + "\n2,b\n", newline=""), ","))
    finally:
        csv.field_size_limit(limit)
    assert records == [(1, ["id", "t"]), (2, "not CSV (field larger than field limit (20))"), (3, ["2", "b"])]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"text,key,y\ncaf\xe9,b,0\n", ":2 (post id='b') field 'text' (column 'text')"),  # the id cell after it
        (b"key,text,y\nb\xe9,fine,0\n", ":2 field 'id' (column 'key')"),  # the id cell is the one refused
        (b"key,text,y\n,caf\xe9,0\n", ":2 field 'text' (column 'text')"),  # no id: the post would take its place
        (b"key,text,y\nb,fine,n\xe9\n", ":2 (post id='b') fields 'labels.hate', 'meta.y' (column 'y')"),
    ],
)
def test_a_cell_that_is_not_utf8_names_the_post_where_its_id_cell_is_readable_and_the_field_it_is_read_into(
    tmp_path, body, named
):
    path = tmp_path / "d.csv"
    path.write_bytes(body)
    with pytest.raises(ValueError, match=rf"^{re.escape(f'{path}{named}')}: not UTF-8 text \(byte \d+ of the cell\)$"):
        list(read_posts(path, columns={"id": "key", "labels": {"hate": "y"}, "meta": ["y"]}))


def test_a_recipe_data_path_beginning_with_a_tilde_is_under_the_home_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # a recipe's path is read by no shell, which would expand it
    write_jsonl(tmp_path / "train.jsonl", ROWS)
    source = build_source_spec({"type": "jsonl", "train": "~/train.jsonl", "image_root": "~/pictures"}, "data")
    assert source.location("train") == tmp_path / "train.jsonl" and source.image_root == tmp_path / "pictures"
    assert len(source.posts("train")) == len(ROWS)

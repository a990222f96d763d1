"""Every input row yields exactly one output row: scored, or with an error naming the problem."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import check_overflowing_rows, damaged_parquet, overflowing_run, tiny_recipe
from PIL import Image

import faim
from faim.data.columns import FIELD_OBJECTS, NAMED_OBJECTS
from faim.notices import FaimWarning
from faim.scoring.engine import score_dump
from faim.scoring.manifest import FIELD_OBJECTS_SETTING
from faim.scoring.options import ScoringOptions


def make_dump(root: Path) -> Path:
    images = root / "images"
    images.mkdir(parents=True)
    Image.new("RGB", (40, 40), (200, 0, 0)).save(images / "good.jpg")
    good = (images / "good.jpg").read_bytes()
    (images / "truncated.jpg").write_bytes(good[: len(good) // 2])
    (images / "garbage.jpg").write_bytes(b"this is not an image at all")
    Image.new("RGB", (300, 300)).save(images / "huge.png")
    lines = [
        json.dumps({"id": "ok", "text": "fine post", "image": "images/good.jpg"}),
        json.dumps({"id": "missing", "text": "x", "image": "images/nowhere.jpg"}),
        json.dumps({"id": "truncated", "text": "x", "image": "images/truncated.jpg"}),
        json.dumps({"id": "garbage", "text": "x", "image": "images/garbage.jpg"}),
        json.dumps({"id": "bomb", "text": "x", "image": "images/huge.png"}),
        json.dumps({"id": "empty", "text": "   "}),
        "{not json",
        json.dumps({"id": "text-only", "text": "no picture"}),
        json.dumps({"id": "badtype", "text": 17}),
    ]
    path = root / "dump.jsonl"
    surrogates = [  # valid JSON for strings that are not text: half of an emoji cut in two, as truncated tweets hold
        json.dumps({"id": "half-emoji", "text": "cut emoji \ud83d"}),
        json.dumps({"id": "half-emoji-comment", "text": "fine", "comments": ["ok", "\udc00 then"]}),
    ]
    path.write_bytes(
        ("\n".join(lines) + "\n").encode()
        + b'{"id": "latin1", "text": "caf\xe9"}\n'
        + ("\n".join(surrogates) + "\n").encode()
    )
    return path


def test_a_model_whose_heads_see_no_picture_does_not_read_pictures(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"] = {"type": "concat", "kinds": ["text"]}  # the picture would only link posts
    faim.build(recipe).save(str(tmp_path / "model"))
    dump = make_dump(tmp_path)
    summary = score_dump(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False)
    rows = {row["source"].rsplit(":", 1)[1]: row for row in pq.read_table(tmp_path / "out").to_pylist()}
    assert summary.rows == 12 and summary.errors == {"empty": 1, "json": 1, "row": 1, "text_encoding": 2}
    scored = ["2", "3", "4", "5", "12"]  # the comment cut in two is not read either
    assert all(rows[line]["error_kind"] is None and rows[line]["harmful"] is not None for line in scored)


def scored_rows(model: Path, dump: Path, content: bytes, columns: dict | None = None) -> list[dict]:
    """The output rows of ``content``, written to ``dump`` and scored with the mapping ``columns`` into a folder
    beside it."""
    dump.write_bytes(content)
    out = dump.with_name(f"{dump.name}-scores")
    score_dump(model, dump, out, columns=columns, workers=1, progress=False)
    return pq.read_table(out).to_pylist()


def test_a_row_holding_only_what_the_model_does_not_read_is_empty(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["fusion"] = {"type": "concat", "kinds": ["text"]}
    faim.build(recipe).save(str(tmp_path / "model"))
    Image.new("RGB", (40, 40)).save(tmp_path / "ok.jpg")
    rows = [{"id": "picture", "image": "ok.jpg"}, {"id": "comment", "comments": ["vile"]}, {"id": "text", "text": "x"}]
    rows.append({"id": "blank", "text": " \t", "image": "ok.jpg", "comments": ["vile"]})
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    score_dump(tmp_path / "model", dump, tmp_path / "out", workers=1, progress=False)
    scored = pq.read_table(tmp_path / "out").to_pylist()
    hint = "(map one with --map FIELD=COLUMN)"
    assert [(row["error_kind"], row["error"]) for row in scored] == [
        ("empty", f"{dump}:1 (post id='picture') field 'text': nothing the model reads (text): no text; "
         f"the row's fields: id, image {hint}"),
        ("empty", f"{dump}:2 (post id='comment') field 'text': nothing the model reads (text): no text; "
         f"the row's fields: id, comments {hint}"),
        (None, None),
        ("empty", f"{dump}:4 (post id='blank') field 'text': nothing the model reads (text): the text is empty"),
    ]  # fmt: skip
    unmapped = scored_rows(tmp_path / "model", tmp_path / "tweets.csv", b"id,tweet\n1,a post\n")
    assert unmapped[0]["error"] == (
        f"{tmp_path / 'tweets.csv'}:2 (post id='1') field 'text': nothing the model reads (text): no text; "
        f"the row's fields: id, tweet {hint}"
    )
    mapped = scored_rows(tmp_path / "model", tmp_path / "captions.csv", b"id,caption\n1, \n", {"text": "caption"})
    said = "(post id='1') field 'text': nothing the model reads (text): the text is empty"  # mapped, blank: no listing
    assert mapped[0]["error"] == f"{tmp_path / 'captions.csv'}:2 {said}"


def test_each_bad_input_kind_is_recorded(tiny_model_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 20_000)  # makes the 300x300 PNG a "bomb"
    dump = make_dump(tmp_path)
    summary = score_dump(
        tiny_model_dir, dump, tmp_path / "out", workers=1, options=ScoringOptions.exact(), progress=False
    )
    rows = {row["source"].rsplit(":", 1)[1]: row for row in pq.read_table(tmp_path / "out").to_pylist()}
    assert len(rows) == 12 == summary.rows
    kinds = {line: row["error_kind"] for line, row in rows.items()}
    assert kinds == {
        "1": None,
        "2": "image_missing",
        "3": "image_truncated",
        "4": "image_unreadable",
        "5": "image_bomb",
        "6": "empty",
        "7": "json",
        "8": None,
        "9": "row",
        "10": "text_encoding",
        "11": "text_encoding",
        "12": "text_encoding",
    }
    assert "nowhere.jpg" in rows["2"]["error"] and "not UTF-8" in rows["10"]["error"]
    assert "field 'text': holds half of a UTF-16 surrogate pair (\\ud83d at character 11)" in rows["11"]["error"]
    assert "field 'comments': holds half of a UTF-16 surrogate pair (\\udc00 at character 1)" in rows["12"]["error"]
    assert rows["1"]["harmful"] is not None and rows["2"]["harmful"] is None
    assert summary.errors["image_missing"] == 1 and sum(summary.errors.values()) == 10
    ids = ["ok", "missing", "truncated", "garbage", "bomb", "empty", None, "text-only", "badtype", "latin1",
           "half-emoji", "half-emoji-comment"]  # fmt: skip
    assert [rows[str(line)]["id"] for line in range(1, 13)] == ids  # only the line that is not JSON has none


def test_a_post_whose_scores_are_not_finite_is_its_rows_error_and_the_others_are_scored(
    overflowing: tuple[Path, Path], tmp_path: Path
) -> None:
    check_overflowing_rows(overflowing_run(overflowing[0], tmp_path), tmp_path / "dump.jsonl")


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_a_post_whose_embedding_is_not_finite_is_its_rows_error_where_no_score_is_written(
    overflowing: tuple[Path, Path], tmp_path: Path, runtime: str
) -> None:
    model = overflowing[0] if runtime == "torch" else overflowing[1]
    rows = overflowing_run(model, tmp_path, "--runtime", runtime, command="embed")
    assert [(row["id"], row["error_kind"]) for row in rows] == [("a", None), ("viral", "scores"), ("b", None)]
    assert rows[1]["error"].endswith(
        "(post id='viral'): the model's embedding of the post is not finite (NaN or infinite)"
    )
    assert rows[1]["embedding"] is None
    assert all(np.isfinite(row["embedding"]).all() and len(row["embedding"]) == 16 for row in (rows[0], rows[2]))


def test_wrong_schema_is_an_error_on_every_row(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump = tmp_path / "dump.csv"
    dump.write_text("pid,body\n1,hello\n2,world\n")
    summary = score_dump(tiny_model_dir, dump, tmp_path / "out", columns={"text": "caption"}, workers=1, progress=False)
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert [row["error_kind"] for row in rows] == ["schema", "schema"]
    assert [row["error"] for row in rows] == [
        f"{dump}:{line} (post id='{line}'): column 'caption' (columns.text) not found; available: pid, body"
        for line in (2, 3)
    ]
    assert summary.errors == {"schema": 2}


def test_json_lines_columns_are_the_keys_of_any_object_of_the_file_not_only_the_first(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    Image.new("RGB", (40, 40), (200, 0, 0)).save(tmp_path / "ok.jpg")
    rows = [
        {"id": "words", "text": "no picture and no caption"},
        {"id": "ok", "text": "x", "image": "ok.jpg", "caption": "a caption"},
        {"id": "lost", "text": "x", "image": "missing.jpg", "caption": "another"},
    ]
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    score_dump(tiny_model_dir, dump, tmp_path / "pictures", workers=1, progress=False)
    assert [row["error_kind"] for row in pq.read_table(tmp_path / "pictures").to_pylist()] == [
        None,
        None,
        "image_missing",
    ]
    score_dump(tiny_model_dir, dump, tmp_path / "captions", columns={"text": "caption"}, workers=1, progress=False)
    captions = pq.read_table(tmp_path / "captions").to_pylist()  # the first row has no caption, so nothing to score
    assert [row["error_kind"] for row in captions] == ["empty", None, "image_missing"]


def test_a_csv_dumps_rows_come_back_in_order_each_named_by_the_line_it_starts_on(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump = tmp_path / "dump.csv"
    dump.write_text('id,text\n1,first\n2,"two\nlines"\n3,too,many\n\n4,fourth\n', encoding="utf-8")
    summary = score_dump(tiny_model_dir, dump, tmp_path / "out", workers=1, progress=False)
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert [(row["source"].rsplit(":", 1)[1], row["id"], row["error_kind"]) for row in rows] == [
        ("2", "1", None),
        ("3", "2", None),
        ("5", None, "csv_row"),
        ("7", "4", None),
    ]
    assert rows[2]["error"] == f"{dump}:5: expected 2 cells (id, text), got 3: '3,too,many'"
    assert summary.rows == 4 and summary.errors == {"csv_row": 1}


def test_a_csv_cell_that_is_not_utf8_is_an_error_of_its_row_naming_the_column_only_where_a_mapping_reads_it(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    rows = scored_rows(tiny_model_dir, tmp_path / "dump.csv", b"id,text,note\n1,caf\xe9,fine\n2,fine,caf\xe9\n")
    assert [(row["id"], row["error_kind"]) for row in rows] == [("1", "text_encoding"), ("2", None)]
    said = "(post id='1') field 'text' (column 'text'): not UTF-8 text (byte 4 of the cell)"
    assert rows[0]["source"] == f"{tmp_path / 'dump.csv'}:2" and rows[0]["error"] == f"{rows[0]['source']} {said}"


def test_a_row_without_an_id_takes_its_row_number_as_source_names_it_scored_or_not(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    jsonl = b'{"text": "first"}\n{"text": 17}\n\n{"text": "caf\xe9"}\n{"text": "fourth"}\n[1]\n'
    rows = scored_rows(tiny_model_dir, tmp_path / "dump.jsonl", jsonl)
    assert [(row["source"].rsplit(":", 1)[1], row["id"], row["error_kind"]) for row in rows] == [
        ("1", "1", None),
        ("2", "2", "row"),
        ("4", "4", "text_encoding"),
        ("5", "5", None),
        ("6", None, "json"),
    ]
    rows = scored_rows(tiny_model_dir, tmp_path / "dump.csv", b"text\nfirst\ncaf\xe9\ntoo,many\n")
    assert [(row["id"], row["error_kind"]) for row in rows] == [("2", None), ("3", "text_encoding"), ("4", "csv_row")]


def test_an_id_that_is_no_string_or_integer_is_an_error_of_its_row_a_whole_float_reading_as_its_integer(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    ids = ['"a"', '{"a": 1}', "[1, 2]", "true", "7.5", "1e20", "7.0", "12"]
    jsonl = "".join(f'{{"id": {ident}, "text": "post"}}\n' for ident in ids).encode()
    rows = scored_rows(tiny_model_dir, tmp_path / "dump.jsonl", jsonl)
    assert [(row["id"], row["error_kind"]) for row in rows] == [
        ("a", None),
        *[(None, "row")] * 5,
        ("7", None),
        ("12", None),
    ]
    said = "field 'id' (column 'id'): expected a string or an integer, got a dict ({'a': 1})"
    assert rows[1]["error"] == f"{tmp_path / 'dump.jsonl'}:2 {said}"


def test_a_parquet_or_saved_dataset_id_past_what_its_float32_column_holds_is_an_error_of_its_row(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    ids = pa.table({"id": pa.array(np.array([7, 123456789, 123456790], np.float32)), "text": ["post"] * 3})
    pq.write_table(ids, tmp_path / "dump.parquet")
    datasets.Dataset(ids).save_to_disk(tmp_path / "saved")
    for dump in (tmp_path / "dump.parquet", tmp_path / "saved"):
        score_dump(tiny_model_dir, dump, tmp_path / f"{dump.name}-scores", workers=1, progress=False)
        rows = pq.read_table(tmp_path / f"{dump.name}-scores").to_pylist()
        assert [(row["id"], row["error_kind"]) for row in rows] == [("7", None), (None, "row"), (None, "row")]
        said = "field 'id' (column 'id'): expected a string or an integer, got the float 123456792.0, 2**24 or past"
        assert rows[1]["error"].startswith(f"{dump}:1 {said}")


def test_a_parquet_row_group_that_cannot_be_read_is_an_error_of_each_of_its_rows_and_every_other_row_is_scored(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    damaged = damaged_parquet(dump / "a.parquet", 12, 4, group=1)
    pq.write_table(pa.table({"id": ["b0", "b1"], "text": ["one", "two"]}), dump / "b.parquet")
    out = tmp_path / "out"

    def run(**options: bool) -> list[tuple[str, str | None, str | None]]:
        summary = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=3, progress=False, **options)
        assert summary.rows == 14 and summary.errors == {"row_group": 4}
        return [(row["source"], row["id"], row["error_kind"]) for row in pq.read_table(out).to_pylist()]

    lost = [(f"{damaged}:{n}", None, "row_group") for n in range(4, 8)]
    scored = [(f"{damaged}:{n}", str(n), None) for n in range(12)]
    expected = scored[:4] + lost + scored[8:] + [(f"{dump / 'b.parquet'}:{n}", f"b{n}", None) for n in range(2)]
    assert run() == expected
    said = f"{damaged}:5: row group 1 (rows 4 to 7) of the Parquet file cannot be read (Couldn't deserialize thrift"
    assert pq.read_table(out).to_pylist()[5]["error"].startswith(said)
    for part in sorted(out.glob("part-*.parquet"))[1:]:  # as a run stopped after its first shard leaves it
        part.unlink()
    assert run() == expected  # resumed: each row once
    good = pa.table({"id": [str(i) for i in range(12)], "text": [f"post {i}" for i in range(12)]})
    pq.write_table(good, damaged, row_group_size=4)  # replaced by a sound copy
    with pytest.raises(ValueError, match="an input has changed since the run began"):
        run()
    summary = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=3, progress=False, overwrite=True)
    assert summary.rows == 14 and not summary.errors
    rows = pq.read_table(out).to_pylist()
    assert [(row["source"], row["id"]) for row in rows] == [row[:2] for row in scored + expected[12:]]


def test_an_unmapped_meta_column_holding_objects_scores_as_the_python_api_reads_them_and_a_value_there_is_unread(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    model = exported[0]
    posts = [{"id": "a", "text": "a post", "meta": {"likes": 30, "shares": 1}}, {"id": "b", "text": "a post"}]
    expected = faim.load(model).score(posts)
    dump = tmp_path / "dump.jsonl"
    lines = [*posts, {"id": "c", "text": "a post", "meta": {"likes": "many"}}]
    rows = scored_rows(model, dump, "".join(json.dumps(post) + "\n" for post in lines).encode())
    assert [row["harm"] for row in rows[:2]] == pytest.approx([score["harm"] for score in expected], abs=1e-5)
    assert f"{dump}:3 (post id='c')" in rows[2]["error"] and "'likes' must be a number" in rows[2]["error"]
    assert rows[2]["error_kind"] == "meta"
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert "`meta` (a metadata field the model reads as a number" in readme  # among the error kinds faim score gives
    assert rows[0]["harm"] != pytest.approx(rows[1]["harm"], abs=1e-5)  # the likes are read
    maps = pa.map_(pa.string(), pa.int64())
    table = pa.table({"id": ["a"], "text": ["a post"], "meta": pa.array([[("likes", 30), ("shares", 1)]], type=maps)})
    pq.write_table(table, tmp_path / "maps.parquet")
    score_dump(model, tmp_path / "maps.parquet", tmp_path / "maps", workers=1, progress=False)
    assert pq.read_table(tmp_path / "maps").column("harm").to_pylist() == pytest.approx([rows[0]["harm"]], abs=1e-5)
    with pytest.warns(FaimWarning) as warned:
        valued = scored_rows(model, tmp_path / "valued.jsonl", b'{"id": "a", "text": "a post", "meta": 30}\n')
    said = " ".join(str(warning.message) for warning in warned)
    assert (
        "no post holds any metadata" in said
        and "(columns of the data no mapping reads: meta (read where it holds an object))" in said
    )
    assert valued[0]["harm"] == pytest.approx(rows[1]["harm"], abs=1e-5)
    with pytest.warns(FaimWarning) as warned:  # a CSV cell is text, never read as an object
        scored_rows(model, tmp_path / "valued.csv", b"id,text,meta\na,a post,30\n")
    assert "(columns of the data no mapping reads: meta)" in " ".join(str(warning.message) for warning in warned)


def test_a_run_begun_before_unmapped_meta_objects_were_read_is_not_resumed(exported: tuple[Path, Path], tmp_path):
    dump = tmp_path / "dump.jsonl"
    dump.write_text(json.dumps({"id": "a", "text": "a post", "meta": {"likes": 30}}) + "\n")
    score_dump(exported[0], dump, tmp_path / "out", workers=1, progress=False)
    record = tmp_path / "out" / "_run.json"
    begun = json.loads(record.read_text())
    assert begun["settings"][FIELD_OBJECTS_SETTING] == FIELD_OBJECTS
    del begun["settings"][FIELD_OBJECTS_SETTING]  # as a faim reading no such column recorded its run
    record.write_text(json.dumps(begun))
    with pytest.raises(ValueError, match=f"settings differ: {FIELD_OBJECTS_SETTING} \\(not set\\) → 1"):
        score_dump(exported[0], dump, tmp_path / "out", workers=1, progress=False)
    named = {"meta": {"lang": "text"}}  # the column's other meta fields are read beside it, where faim before read none
    score_dump(exported[0], dump, tmp_path / "named", named, workers=1, progress=False)
    record = tmp_path / "named" / "_run.json"
    begun = json.loads(record.read_text())
    assert begun["settings"][FIELD_OBJECTS_SETTING] == NAMED_OBJECTS
    record.write_text(json.dumps(begun | {"settings": begun["settings"] | {FIELD_OBJECTS_SETTING: FIELD_OBJECTS}}))
    with pytest.raises(ValueError, match=f"settings differ: {FIELD_OBJECTS_SETTING} 1 → {NAMED_OBJECTS}"):
        score_dump(exported[0], dump, tmp_path / "named", named, workers=1, progress=False)
    csv = tmp_path / "dump.csv"
    csv.write_text('id,text,meta\na,a post,"{""likes"": 30}"\n')
    score_dump(exported[0], csv, tmp_path / "csv", workers=1, progress=False)
    assert FIELD_OBJECTS_SETTING not in json.loads((tmp_path / "csv" / "_run.json").read_text())["settings"]


@pytest.mark.parametrize(
    ("columns", "recorded"),
    [({"meta": {"lang": "text"}}, FIELD_OBJECTS), ({"meta": ["text"], "labels": {"harm": "text"}}, None)],
)
def test_a_run_begun_before_named_fields_objects_were_read_resumes_where_no_input_holds_them(
    exported: tuple[Path, Path], tmp_path, columns, recorded
):
    dump = tmp_path / "dump.jsonl"  # a meta column holding no object, no labels column: read as faim before read it
    dump.write_text("".join(json.dumps({"id": key, "text": "a post", "meta": "x"}) + "\n" for key in "ab"))
    score_dump(exported[0], dump, tmp_path / "out", columns, workers=1, progress=False)
    begun = json.loads((tmp_path / "out" / "_run.json").read_text())
    assert begun["settings"].get(FIELD_OBJECTS_SETTING) == recorded  # as faim before recorded it
    score_dump(exported[0], dump, tmp_path / "out", columns, workers=1, progress=False)  # resumed, not refused

"""``faim eval MODEL [DATA]``: the checks of the posts it makes before the model reads any."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from conftest import tiny_recipe

import faim
from faim.cli.common import parse_columns
from faim.cli.eval_cmd import language_column_notes, slice_remedy
from faim.cli.main import main
from faim.data import preflight
from faim.data.columns import ColumnMap
from faim.data.sources import read_posts
from faim.wording import shell_path


@pytest.mark.parametrize("given", [False, True], ids=["recipe_split", "file"])
def test_eval_checks_once_that_some_posts_carry_a_label(
    given: bool, tiny_model_dir: Path, demo_data, tmp_path: Path, label_checks: list[str]
) -> None:
    data = [str(demo_data["validation"]), "--map", "labels.harmful=label"] if given else []
    assert main(["eval", str(tiny_model_dir), *data, "-o", str(tmp_path / "eval")]) == 0
    assert label_checks == [str(demo_data["validation"])]


def test_eval_of_a_recipes_split_whose_file_is_not_there_names_it_before_the_model_is_loaded(
    demo_data, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = tiny_recipe(demo_data | {"train": tmp_path / "gone.jsonl"}, tmp_path / "run")
    recipe["data"]["test"] = str(tmp_path / "tset.jsonl")
    model = faim.build(recipe).save(str(tmp_path / "model"), faim.Recipe.from_dict(recipe))
    monkeypatch.setattr("faim.cli.eval_cmd.Detector.load", lambda path: pytest.fail("the model was loaded"))
    assert main(["eval", str(model), "--split", "test", "-o", str(tmp_path / "eval")]) == 2
    assert f"faim eval: error: data.test: {tmp_path / 'tset.jsonl'} does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("given", [False, True], ids=["recipe_split", "file"])
def test_eval_of_posts_whose_only_labelled_ones_hold_nothing_read_names_the_rows_and_what_to_do(
    given: bool, demo_data, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [json.loads(line) | {"label": None} for line in demo_data["validation"].read_text().splitlines()]
    rows[0] = {"id": rows[0]["id"], "label": 1}  # the one labelled post holds no text, picture or comment
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    recipe = tiny_recipe(demo_data | {"validation": data}, tmp_path / "run")
    recipe["data"]["image_root"] = str(demo_data["validation"].parent)
    model = faim.build(recipe).save(str(tmp_path / "model"), faim.Recipe.from_dict(recipe))
    given_data = [str(data), "--map", "labels.harmful=label", "--image-root", recipe["data"]["image_root"]]
    monkeypatch.setattr("faim.eval.evaluate.predict", lambda *args, **kwargs: pytest.fail("the model read posts"))
    assert main(["eval", str(model), *(given_data if given else []), "-o", str(tmp_path / "eval")]) == 2
    said = capsys.readouterr().err
    left_out = f"{data}: 1 of {len(rows)} posts hold nothing the model reads (comments, image, text) and are left out"
    assert f"{left_out}; the first: {data}:1 (post id={rows[0]['id']!r})" in said
    refused = f"faim eval: error: {data}: no post carries a label for any task (harmful); "
    remedy = (
        "no post kept holds one in the column mapped to its labels (labels.harmful=label): map a column to a task's "
        "labels with --map labels.TASK=COLUMN"
        if given
        else "the recipe's split has no labels for these tasks, and --map does not reach it"
    )
    assert refused + remedy in said
    assert given or "or evaluate another split with --split" in said


def test_eval_of_a_model_whose_recipe_gives_its_source_an_argument_it_refuses_names_the_recipes_file(
    refused_source_model_dir: Path, tmp_path: Path, capsys
) -> None:
    assert main(["eval", str(refused_source_model_dir), "-o", str(tmp_path / "eval")]) == 2
    refused = f"faim eval: error: {refused_source_model_dir / 'recipe.yaml'}: data: concat: evaluate_on must be one of"
    assert refused in capsys.readouterr().err


def test_eval_of_a_file_whose_column_the_recipe_slices_by_is_not_mapped_says_how_to_map_it(
    tiny_model_dir: Path, demo_data, tmp_path: Path, capsys
) -> None:
    data, out = str(demo_data["validation"]), tmp_path / "the eval"  # its posts' topic column, which the model's
    # recipe slices by (eval.slice)
    assert main(["eval", str(tiny_model_dir), data, "--map", "labels.harmful=label", "-o", str(out)]) == 0
    said = (
        "faim eval: warning: eval.slice: no post has the meta field 'topic' (fields they carry: lang), so the report "
        "has no slices; read its column with --map meta=topic (columns of the data no mapping reads: topic)"
    )
    captured = capsys.readouterr()
    assert said in captured.err
    assert captured.out.endswith(f"report: {shell_path(out)}\n")  # to paste into a shell
    assert "slices" not in json.loads((out / "metrics.json").read_text())["tasks"]["harmful"]


@pytest.mark.parametrize("given", [False, True], ids=["recipe_split", "file"])
def test_eval_of_data_holding_no_post_names_it_before_the_model_is_loaded(
    given: bool, demo_data, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / ("split.csv" if given else "split.jsonl")
    empty.write_text("id,text,label\n" if given else "", encoding="utf-8")  # a header alone, or nothing
    recipe = tiny_recipe(demo_data | {"validation": demo_data["validation"] if given else empty}, tmp_path / "run")
    model = faim.build(recipe).save(str(tmp_path / "model"), faim.Recipe.from_dict(recipe))
    monkeypatch.setattr("faim.cli.eval_cmd.Detector.load", lambda path: pytest.fail("the model was loaded"))
    data = [str(empty), "--map", "labels.harmful=label"] if given else []
    assert main(["eval", str(model), *data, "-o", str(tmp_path / "eval")]) == 2
    assert f"faim eval: error: {empty}: holds no post" in capsys.readouterr().err


def unread(data: Path, columns: dict[str, Any] | None = None) -> Callable[[], list[str] | None]:
    """The columns of ``data`` the mapping ``columns`` leaves unread, as ``faim eval`` asks for them."""
    return partial(preflight.unread_columns, str(data), ColumnMap.from_recipe(columns))


def test_the_slice_remedy_names_a_meta_column_read_as_objects_as_such_and_offers_no_map_turning_it_off(tmp_path):
    data = tmp_path / "p.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "hi", "meta": {"likes": 3}}) + "\n")
    assert slice_remedy("meta", unread(data), None, list(read_posts(data))) == (
        "map one with --map meta=COLUMN (columns of the data no mapping reads: meta (read where it holds an object))"
    )
    (tmp_path / "p.csv").write_text("id,text,meta\na,hi,x\n")
    csv = slice_remedy("meta", unread(tmp_path / "p.csv"), None, list(read_posts(tmp_path / "p.csv")))
    assert csv.startswith("read its column with --map meta=meta (")


def test_the_slice_and_language_remedies_name_a_meta_field_as_the_meta_fields_already_mapped_are(tmp_path):
    data = tmp_path / "p.jsonl"
    data.write_text(json.dumps({"id": "a", "text": "hi", "language": "fr", "topic": "x", "lang": "fr"}) + "\n")
    named, listed = parse_columns(["meta.lang=language"]), parse_columns(["meta=language"])
    posts = list(read_posts(data, named))
    said = " (columns of the data no mapping reads: topic, lang)"
    assert (
        slice_remedy("topic", unread(data, named), named, posts) == f"read its column with --map meta.topic=topic{said}"
    )
    assert slice_remedy("colour", unread(data, named), named, posts) == f"map one with --map meta.colour=COLUMN{said}"
    assert slice_remedy("topic", unread(data, listed), listed, posts).startswith(
        "read its column with --map meta=topic ("
    )
    mapped = parse_columns(["meta.topic=topic"])
    notes = language_column_notes(str(data), unread(data, mapped), mapped)
    assert [note.rsplit(" ", 1)[1] for note in notes] == ["meta.lang=language", "meta.lang=lang"]
    mapped = parse_columns(["meta=topic"])
    notes = language_column_notes(str(data), unread(data, mapped), mapped)
    assert [note.rsplit(" ", 1)[1] for note in notes] == ["meta.lang=language", "meta=lang"]


def test_the_language_note_names_a_column_named_as_a_language_or_locale_column_commonly_is(tmp_path):
    data = tmp_path / "p.csv"
    columns = ["lang_code", "Language-Code", "locale", "LangCode", "language_code", "iso", "slang", "languages"]
    data.write_text(f"id,text,{','.join(columns)}\na,hi,{','.join('x' * len(columns))}\n", encoding="utf-8")
    notes = language_column_notes(str(data), unread(data), None)
    expected = ["lang_code", "Language-Code", "locale", "LangCode", "language_code"]
    assert [note.rsplit(" ", 1)[1] for note in notes] == [f"meta.lang={column}" for column in expected]


def test_eval_sliced_by_a_meta_column_of_plain_values_offers_to_read_it(
    tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    data = tmp_path / "p.jsonl"
    rows = [{"id": f"p{i}", "text": f"post {i}", "label": i % 2, "meta": "en"} for i in range(4)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    given = [str(data), "--map", "labels.harmful=label", "--slice", "meta", "-o", str(tmp_path / "eval")]
    assert main(["eval", str(tiny_model_dir), *given]) == 2
    assert (
        "; read its column with --map meta=meta (columns of the data no mapping reads: meta (read where it holds an "
        "object))"
    ) in capsys.readouterr().err
    assert main(["eval", str(tiny_model_dir), *given, "--map", "meta=meta"]) == 0
    assert set(json.loads((tmp_path / "eval" / "metrics.json").read_text())["tasks"]["harmful"]["slices"]) == {"en"}


def test_eval_into_the_model_or_a_folder_inside_it_is_refused_before_the_posts_are_read(
    tiny_model_dir: Path, demo_data, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("faim.cli.eval_cmd.read_posts", lambda *args: pytest.fail("the posts were read"))
    before = sorted(path.relative_to(tiny_model_dir) for path in tiny_model_dir.rglob("*"))
    for out in (tiny_model_dir / "eval", tiny_model_dir):
        data = [str(demo_data["validation"]), "--map", "labels.harmful=label"]
        assert main(["eval", str(tiny_model_dir), *data, "-o", str(out)]) == 2
        refused = f"-o {out}: that is the model or a folder inside it ({tiny_model_dir}); the report goes elsewhere"
        assert f"faim eval: error: {refused}" in capsys.readouterr().err
    assert sorted(path.relative_to(tiny_model_dir) for path in tiny_model_dir.rglob("*")) == before


@pytest.mark.parametrize("column", ["tone", "mood"])
def test_eval_says_which_tasks_no_post_carries_a_label_for_and_how_to_read_a_column_of_their_name(
    column: str, demo_data, tmp_path: Path, capsys
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["heads"]["tone"] = {"type": "multiclass", "labels": ["calm", "angry"]}
    model = faim.build(recipe).save(str(tmp_path / "model"), faim.Recipe.from_dict(recipe))
    data = tmp_path / "posts.csv"
    rows = "".join(f"p{i},post {i},{i % 2},{['calm', 'angry'][i % 2]}\n" for i in range(6))
    data.write_text(f"id,text,label,{column}\n{rows}", encoding="utf-8")
    out = tmp_path / "eval"
    assert main(["eval", str(model), str(data), "--map", "labels.harmful=label", "-o", str(out)]) == 0
    left_out = f"faim eval: warning: {data}: no post carries a label for task 'tone', which the report leaves out; "
    how = (
        "read its labels from column 'tone' with --map labels.tone=tone"
        if column == "tone"
        else ("map its labels' column with --map labels.tone=COLUMN (columns of the data no mapping reads: mood)")
    )
    assert left_out + how in capsys.readouterr().err
    assert list(json.loads((out / "metrics.json").read_text())["tasks"]) == ["harmful"]
    if column == "tone":  # the labels read as those of the tasks their columns are named as
        data.write_text(data.read_text().replace("label", "harmful", 1), encoding="utf-8")
        assert main(["eval", str(model), str(data), "--map", "labels=harmful", "-o", str(out)]) == 0
        assert (
            left_out + "read its labels from column 'tone' by adding it to --map labels=...,tone"
            in capsys.readouterr().err
        )


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_data_whose_labels_lie_in_columns_named_as_tasks_unmapped_is_told_to_read_them(
    command: str, tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    data = tmp_path / "posts.csv"
    data.write_text("id,text,harmful\na,a post,1\nb,another,0\n", encoding="utf-8")
    assert main([command, str(tiny_model_dir), str(data), "-o", str(tmp_path / "out")]) == 2
    assert (
        f"faim {command}: error: {data}: no post carries a label for any task (harmful); read its columns named as "
        "tasks with --map labels=harmful, or map a column to a task's labels with --map labels.TASK=COLUMN"
    ) in capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_labelled_data_has_its_columns_read_for_no_remedy_or_note_it_does_not_need(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every run read every key of a JSON Lines file twice, for what it would say of labels it found none of, 1 s of
    # 200,000 rows each time
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    heads = {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}}
    model = faim.build({"model": section | {"heads": heads}}).save(str(tmp_path / "model"))
    data = tmp_path / "posts.jsonl"
    rows = [{"text": f"post {i}", "label": i % 2, "lang": "en"} for i in range(40)]  # a language: none detected
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    read = []
    monkeypatch.setattr(preflight, "input_columns", lambda spec: read.append(spec) or pytest.fail("columns read"))
    given = [str(model), str(data), "--map", "labels.harmful=label", "--map", "meta=lang", "-o", str(tmp_path / "out")]
    assert main([command, *given, *(["--sizes", "20", "--draws", "1"] if command == "calibrate" else [])]) == 0
    assert read == []


@pytest.mark.parametrize(
    ("command", "given"),
    [("eval", ["--map", "labels.harmful=label", "--slice", "topic"]), ("eval", []), ("calibrate", [])],
    ids=["eval_labelled", "eval_unlabelled", "calibrate_unlabelled"],
)
def test_the_notes_and_remedies_naming_the_datas_columns_read_them_once(
    command: str, given: list[str], tiny_model_dir: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each read every key of a JSON Lines file on its own: 0.4 s a read of 200,000 rows
    data = tmp_path / "posts.jsonl"
    rows = [{"id": f"p{i}", "text": f"post {i}", "label": i % 2, "harmful": i % 2, "topic": "x"} for i in range(8)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    read, columns = [], preflight.input_columns
    monkeypatch.setattr(preflight, "input_columns", lambda spec: read.append(spec) or columns(spec))
    assert main([command, str(tiny_model_dir), str(data), *given, "-o", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err
    assert "no post holds any comments" in said  # each note of this and below names the columns
    if given:
        assert "--slice: no post has the meta field 'topic'" in said
    else:
        assert "read its columns named as tasks with --map labels=harmful" in said
    assert read == [str(data)]


def test_a_slice_named_as_map_names_a_meta_field_is_told_to_drop_meta(tmp_path: Path, capsys) -> None:
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    heads = {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}}
    model = faim.build({"model": section | {"heads": heads}}).save(str(tmp_path / "model"))
    data = tmp_path / "posts.jsonl"
    rows = [{"text": f"post {i}", "label": i % 2, "topic": "x"} for i in range(8)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    given = [str(model), str(data), "--map", "labels.harmful=label", "-o", str(tmp_path / "out")]
    # it was told to map the field with --map meta.meta.topic=COLUMN, and to map the column it had mapped
    for mapped, how in [
        (["--map", "meta.topic=topic"], ""),
        ([], " and read its column with --map meta=topic (columns of the data no mapping reads: topic)"),
    ]:
        assert main(["eval", *given, *mapped, "--slice", "meta.topic"]) == 2
        assert capsys.readouterr().err.rstrip().endswith(f"; name the field without meta. (topic){how}")
    assert main(["eval", *given, "--map", "meta.topic=topic", "--slice", "meta.lang"]) == 2  # detected, as lang is
    assert capsys.readouterr().err.rstrip().endswith("; name the field without meta. (lang)")


def test_a_slice_named_close_to_a_field_the_posts_carry_is_told_that_fields_name(tmp_path: Path, capsys) -> None:
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    heads = {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}}
    model = faim.build({"model": section | {"heads": heads}}).save(str(tmp_path / "model"))
    data = tmp_path / "posts.jsonl"
    rows = [{"text": f"post {i}", "label": i % 2, "topic": "x", "kind": "y"} for i in range(8)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    given = [str(model), str(data), "--map", "labels.harmful=label", "--map", "meta.topic=topic"]
    # it was told to map a column to meta.Topic, where the posts carried topic
    for field in ("Topic", "topics"):
        assert main(["eval", *given, "--slice", field, "-o", str(tmp_path / "out")]) == 2
        said = f"; name it 'topic', as the posts carry it, or map one with --map meta.{field}=COLUMN (columns of the"
        assert said in capsys.readouterr().err
    assert main(["eval", *given, "--slice", "colour", "-o", str(tmp_path / "out")]) == 2  # close to none
    assert "; map one with --map meta.colour=COLUMN" in capsys.readouterr().err
    # lang, which evaluation gives the posts itself, was not named
    assert main(["eval", *given, "--slice", "Lang", "-o", str(tmp_path / "out")]) == 2
    assert "; name it 'lang', as the posts carry it, or map one with --map meta.Lang=COLUMN" in capsys.readouterr().err


def test_an_empty_slice_is_refused_as_it_is_parsed(tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    # it was taken as no --slice, the recipe's eval.slice sliced by, or none, without a word
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(tiny_model_dir), "--slice", "", "-o", str(tmp_path / "out")])
    assert exited.value.code == 2
    said = "argument --slice: an empty field name (a variable not set?); name the meta field to slice by"
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "calibrate"])
def test_data_whose_mapped_label_column_holds_no_label_is_told_so(
    command: str, tiny_model_dir: Path, tmp_path: Path, capsys
) -> None:
    # it was told to map a column to the task's labels, which it had
    data = tmp_path / "posts.csv"
    data.write_text("id,text,label,class\na,a post,,1\nb,another,,0\n", encoding="utf-8")
    given = [str(tiny_model_dir), str(data), "--map", "labels.harmful=label", "-o", str(tmp_path / "out")]
    assert main([command, *given]) == 2
    assert (
        f"faim {command}: error: {data}: no post carries a label for any task (harmful); no post kept holds one in "
        "the column mapped to its labels (labels.harmful=label): map a column to a task's labels with --map "
        "labels.TASK=COLUMN"
    ) in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "what"),
    [
        ("", "the data, DATA,"),
        ("validation.jsonl", "the folder DATA is read from,"),
        ("*.jsonl", "the folder DATA is read from,"),
    ],
)
def test_eval_refuses_a_report_into_the_data_folder_before_the_model_is_loaded(
    data: str, what: str, tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    # its metrics.json and record were read as posts of the folder by the next command given it; a file or glob's
    # folder was let be written into
    monkeypatch.setattr(faim.Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    posts = tmp_path / "posts"
    posts.mkdir()
    (posts / "validation.jsonl").write_bytes(demo_data["validation"].read_bytes())
    given = ["eval", str(tiny_model_dir), str(posts / data), "--map", "labels.harmful=label", "-o", str(posts)]
    assert main(given) == 2
    said = f"-o {posts}: that is {what} whose posts its files would join; the report goes elsewhere"
    assert said in capsys.readouterr().err
    assert sorted(posts.iterdir()) == [posts / "validation.jsonl"]


def test_eval_refuses_a_report_by_default_into_the_model_it_reads_before_the_model_is_loaded(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch, capsys
) -> None:
    # the report goes by default beside the model, into eval-NAME: here the model read, whose folder it was written into
    monkeypatch.setattr(faim.Detector, "load", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    model = tmp_path / "eval-posts"
    model.mkdir()
    for path in tiny_model_dir.iterdir():
        (model / path.name).write_bytes(path.read_bytes())
    posts = tmp_path / "posts.jsonl"
    posts.write_bytes(demo_data["validation"].read_bytes())
    before = sorted(model.iterdir())
    assert main(["eval", str(model), str(posts), "--map", "labels.harmful=label"]) == 2
    said = (
        f"the report's folder (MODEL/../eval-NAME; -o names another) {model}: that is the model or a folder inside it "
        f"({model}); the report goes elsewhere"
    )
    assert said in capsys.readouterr().err
    assert sorted(model.iterdir()) == before


@pytest.mark.parametrize(("inside", "named"), [(".", "."), ("notes", "..")])
def test_eval_run_inside_the_model_folder_writes_its_report_by_default_beside_the_model(
    inside: str, named: str, tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the folder was named from the model's path as written, . and .. being their own parents: eval-NAME inside the
    # model, refused
    model = tmp_path / "model"
    (model / inside).mkdir(parents=True)
    for path in tiny_model_dir.iterdir():
        (model / path.name).write_bytes(path.read_bytes())
    (tmp_path / "posts.jsonl").write_bytes(demo_data["validation"].read_bytes())
    monkeypatch.chdir(model / inside)
    images = ["--image-root", str(demo_data["validation"].parent)]
    assert main(["eval", named, str(tmp_path / "posts.jsonl"), "--map", "labels.harmful=label", *images]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["eval-posts", "model", "posts.jsonl"]
    assert (tmp_path / "eval-posts" / "metrics.json").is_file()


def test_eval_of_a_model_named_as_written_reports_beside_it_as_written(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "m").symlink_to(tiny_model_dir)  # the report's paths name no folder the user did not
    (tmp_path / "posts.jsonl").write_bytes(demo_data["validation"].read_bytes())
    monkeypatch.chdir(tmp_path)
    images = ["--image-root", str(demo_data["validation"].parent)]
    assert main(["eval", "runs/m", "posts.jsonl", "--map", "labels.harmful=label", *images]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"report: {Path('runs', 'eval-posts')}")
    plots = json.loads((tmp_path / "runs" / "eval-posts" / "metrics.json").read_text())["tasks"]["harmful"]["plots"]
    assert all(not Path(plot).is_absolute() for plot in plots)

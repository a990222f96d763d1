"""Argument helpers shared by the commands: column mappings given with --map, folders, shares."""

from __future__ import annotations

import argparse
import errno
import json
from pathlib import Path

import pytest

import faim.cli.common
from faim.cli.common import (
    check_label_tasks,
    existing_folder,
    output_file,
    output_folder,
    parse_columns,
    share,
)
from faim.cli.main import build_parser, main
from faim.data.sources import read_posts


def test_a_mapping_gives_each_field_its_column_and_meta_every_column_given() -> None:
    items = ["text=tweet", "labels.hate=class", "labels.topic=subject", "meta=lang", "meta=country,region"]
    assert parse_columns(items) == {
        "text": "tweet",
        "labels": {"hate": "class", "topic": "subject"},
        "meta": ["lang", "country", "region"],
    }


def test_labels_mapped_to_columns_read_each_as_the_task_of_its_name(tmp_path: Path) -> None:
    # --map labels=hate,spam was passed on as the text 'hate,spam' and refused with columns.labels: expected a dict of
    # name to column or a list of columns, a form --map does not give
    from faim.data.sources import read_posts

    assert parse_columns(["labels=hate,spam", "text=tweet"]) == {"labels": ["hate", "spam"], "text": "tweet"}
    # the list YAML writes, read before the comma-separated form came, is read as it was; spaces after commas too
    listed = {"labels": ["hate", "spam"]}
    assert parse_columns(["labels=[hate, spam]"]) == parse_columns(["labels=hate, spam"]) == listed
    (tmp_path / "posts.csv").write_text("id,tweet,hate,spam\na,t,1,\nb,u,,0\n", encoding="utf-8")
    posts = read_posts(tmp_path / "posts.csv", parse_columns(["labels=hate,spam", "text=tweet"]))
    assert [post.labels for post in posts] == [{"hate": 1}, {"spam": 0}]
    with pytest.raises(ValueError) as refused:
        check_label_tasks(parse_columns(["labels=hate,sapm"]), ["hate", "spam"])
    assert str(refused.value) == (
        "--map labels=hate,sapm: the model has no task 'sapm' (did you mean 'spam'?); its tasks: hate, spam; it reads "
        "columns named as their tasks: give one of another name as --map labels.TASK=COLUMN"
    )


def test_a_meta_field_is_given_a_column_of_another_name() -> None:
    items = ["meta.country=country", "meta.lang=language"]
    assert parse_columns(items) == {"meta": {"country": "country", "lang": "language"}}


def test_a_map_of_one_meta_field_or_task_leaves_the_others_read_as_without_it(tmp_path: Path) -> None:
    row = {"id": "a", "text": "hi", "language": "fr", "class": 0, "meta": {"topic": "x"}}
    row["labels"] = {"hate": 1, "spam": 0}
    (tmp_path / "posts.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (plain,) = read_posts(tmp_path / "posts.jsonl", parse_columns([]))
    (mapped,) = read_posts(tmp_path / "posts.jsonl", parse_columns(["meta.lang=language", "labels.hate=class"]))
    assert (plain.meta, plain.labels) == ({"topic": "x"}, {"hate": 1, "spam": 0})
    assert (mapped.meta, mapped.labels) == ({"topic": "x", "lang": "fr"}, {"hate": 0, "spam": 0})


@pytest.mark.parametrize(
    ("items", "error"),
    [
        (["text=a", "text=b"], "--map text: given twice (a and b); map it once"),
        (["labels.hate=x", "text=t", "labels.hate=y"], "--map labels.hate: given twice (x and y); map it once"),
        (["labels.hate=x", "labels=y"], "--map labels and --map labels.TASK: give one or the other"),
        (["labels=y", "labels.hate=x"], "--map labels and --map labels.TASK: give one or the other"),
        (["meta.lang=x", "meta.lang=y"], "--map meta.lang: given twice (x and y); map it once"),
        (
            ["meta=lang", "meta.lang=language"],
            "--map meta=lang and --map meta.lang=language: give each meta field as --map meta.FIELD=COLUMN, or all "
            "as --map meta=COLUMN,...",
        ),
        (
            ["meta.lang=language", "text=t", "meta=lang"],
            "--map meta.lang=language and --map meta=lang: give each meta field as --map meta.FIELD=COLUMN, or all "
            "as --map meta=COLUMN,...",
        ),
        (["meta.=x"], "--map 'meta.=x': expected meta.NAME=COLUMN, a name after 'meta.'"),
        (["labels.=x"], "--map 'labels.=x': expected labels.NAME=COLUMN, a name after 'labels.'"),
    ],
)
def test_a_field_mapped_twice_or_without_a_name_is_refused_naming_it(items: list[str], error: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_columns(items)
    assert str(refused.value) == error


def test_a_mapped_list_that_is_not_yaml_is_refused_on_one_line_naming_the_option_and_the_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert parse_columns(["images=[pic, no]"]) == {"images": ["pic", "no"]}  # read as a recipe's columns are
    with pytest.raises(ValueError) as refused:
        parse_columns(["images=[a, b"])
    assert str(refused.value) == (
        "--map images: the value '[a, b' is not YAML at line 1, column 6: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at line 1, column 1)"
    )
    (tmp_path / "posts.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    arguments = [
        "score",
        str(tmp_path / "model"),
        str(tmp_path / "posts.jsonl"),
        "--map",
        "images=[a",
        "-o",
        str(tmp_path / "o"),
    ]
    assert main(arguments) == 2
    assert capsys.readouterr().err.splitlines() == [
        "faim score: error: --map images: the value '[a' is not YAML at line 1, column 3: expected ',' or ']', but "
        "got '<stream end>' (while parsing a flow sequence at line 1, column 1)"
    ]


def test_an_output_folder_the_system_will_not_say_anything_of_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable(path: Path) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path.parent))

    monkeypatch.setattr(faim.cli.common, "check_folder_path", unreadable)
    with pytest.raises(argparse.ArgumentTypeError, match=r"Permission denied: '/locked'"):
        output_folder("/locked/out")


@pytest.mark.parametrize("argument", [output_folder, existing_folder])
def test_an_empty_folder_name_is_refused_not_read_as_the_working_directory(argument) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="^an empty folder name"):
        argument("")
    assert argument(".") == "."


def test_an_empty_output_dir_is_refused_as_it_is_parsed_not_left_to_the_recipes(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser("train").parse_args(["train", "hate_text_frozen", "--output-dir", ""])
    assert "argument --output-dir: an empty folder name" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["eval", "model", ""], "data"),  # left out, it evaluated the recipe's split instead
        (["export", "model", "-o", "out", "--quantize", "int8", "--data", ""], "--data"),
        (["score", "", "dump.jsonl", "-o", "out"], "model"),
        (["embed", "model", "", "-o", "out"], "dump"),
        (["calibrate", "", "data.jsonl", "-o", "out"], "model"),
        (["explain", "model", "", "-o", "out"], "posts"),
    ],
)
def test_an_empty_model_or_data_path_is_refused_as_it_is_parsed_not_read_as_the_working_directory_or_left_out(
    argv: list[str], argument: str, capsys
) -> None:
    with pytest.raises(SystemExit):
        build_parser(argv[0]).parse_args(argv)
    assert f"argument {argument}: an empty path (a variable not set?)" in capsys.readouterr().err


def test_an_output_file_that_is_a_folder_or_lies_inside_a_file_is_refused_an_existing_or_new_one_not(
    tmp_path: Path,
) -> None:
    (tmp_path / "file.md").write_text("earlier", encoding="utf-8")
    assert output_file(str(tmp_path / "file.md")) == tmp_path / "file.md"
    assert output_file(str(tmp_path / "new" / "file.md")) == tmp_path / "new" / "file.md"
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{tmp_path}: is a folder, not a file"):
        output_file(str(tmp_path))
    with pytest.raises(argparse.ArgumentTypeError, match=rf"^{tmp_path / 'file.md'}: is a file, not a folder \(it"):
        output_file(str(tmp_path / "file.md" / "out.md"))
    with pytest.raises(argparse.ArgumentTypeError, match="^an empty file name"):
        output_file("")


@pytest.mark.parametrize("text", ["nan", "-1", "1.5", "inf", "a lot"])
def test_a_share_outside_zero_to_one_is_refused_naming_the_value(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"^expected a number from 0 to 1, got '{text}'$"):
        share(text)
    assert share("0") == 0.0 and share("0.01") == 0.01 and share("1") == 1.0


def test_an_image_root_that_is_no_folder_is_refused_as_it_is_parsed(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": "1", "text": "x", "image": "p.png"}\n', encoding="utf-8")
    assert existing_folder(str(tmp_path)) == str(tmp_path)
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{tmp_path / 'a.jsonl'}: not a folder$"):
        existing_folder(str(tmp_path / "a.jsonl"))
    out = tmp_path / "scores"
    arguments = [
        "score",
        "model",
        str(tmp_path / "a.jsonl"),
        "--image-root",
        str(tmp_path / "pictures"),
        "-o",
        str(out),
    ]
    with pytest.raises(SystemExit) as stop:
        main(arguments)
    assert stop.value.code == 2 and not out.exists()
    assert f"argument --image-root: {tmp_path / 'pictures'}: no such folder" in capsys.readouterr().err

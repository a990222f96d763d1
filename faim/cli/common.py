"""Argument helpers shared by subcommands and the benchmark: recipe overrides, column mappings, counts."""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from faim.data.columns import ColumnMap
from faim.folders import check_folder_path
from faim.registry import suggest
from faim.wording import shell_command
from faim.yaml_reader import parse_yaml, yaml_problem


def deferred(module: str, function: str = "run") -> Callable[[argparse.Namespace], int | None]:
    """A command's handler (``set_defaults(handler=...)``) that imports ``module`` only when the command runs and calls
    its ``function`` on the parsed arguments: a command's arguments, and ``faim --help``, then need none of what
    running it imports (torch, for most)."""

    def handler(args: argparse.Namespace) -> int | None:
        return getattr(importlib.import_module(module), function)(args)

    return handler


def add_overrides(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a recipe value, e.g. --set train.max_epochs=3 (repeatable; VALUE is YAML; null drops a head or "
        "an encoder: --set model.heads.hate=null)",
    )


def add_columns(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--map",
        dest="columns",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="column mapping, e.g. --map text=tweet --map image=img --map labels.hate=class --map meta=lang,country "
        "(repeatable, each field once but meta, which takes every column given; or each meta field from a column of "
        "another name: --map meta.lang=language, one form or the other; --map labels=hate,spam reads columns named "
        "as their tasks; each replaces its own field's column alone; default: columns named id, text, image(s), "
        "comments, and the tasks and meta fields of labels and meta columns holding objects)",
    )
    parser.add_argument(
        "--image-root",
        type=existing_folder,
        default=None,
        help="directory relative image paths resolve against (default: the folder each input file, or saved dataset "
        "folder, lies in)",
    )


def refuse_mapping_without_data(args: argparse.Namespace, name: str) -> None:
    """Refuse ``--map`` or ``--image-root`` where no posts are given (``args.data``, which the command calls ``name``):
    the recipe's split is read instead, with the recipe's own columns and image root."""
    if not args.data and (args.columns or args.image_root):
        raise ValueError(
            f"--map and --image-root read {name}: without it the recipe's split is read with the recipe's own columns "
            "and image root"
        )


def unlabelled_split(data: str) -> str:
    """What to do, as ``check_labelled`` ends its error, about a recipe's split none of whose posts carries a label
    for a model's tasks: ``--map`` does not reach the split (``refuse_mapping_without_data``), so the way out is a
    labelled file given as ``data`` (what the command calls it)."""
    return (
        "the recipe's split has no labels for these tasks, and --map does not reach it (the recipe's data.columns "
        f"maps its columns: labels: {{TASK: COLUMN}}); give a labelled file as {data} with --map labels.TASK=COLUMN"
    )


def parse_columns(items: list[str]) -> dict[str, Any] | None:
    """``["text=tweet", "labels.hate=class", "meta=lang"]`` → a column-mapping dict (``None`` if empty); ``meta`` takes
    every column given, repeated or comma-separated, or ``meta.FIELD=COLUMN`` reads each column into a field of
    another name (``meta.lang=language``), one form or the other; ``labels=hate,spam`` reads each column as the
    labels of the task of its name, as ``labels.TASK=COLUMN`` reads a column of another name, one form or the other.

    Raises:
        ValueError: Naming an item that is not FIELD=COLUMN (nor ``labels.``/``meta.`` without a name), a field mapped
            twice, or both forms of ``labels`` or of ``meta`` given.
    """
    if not items:
        return None
    columns: dict[str, Any] = {}
    given: dict[str, str] = {}  # each field mapped → its column
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"--map {item!r}: expected FIELD=COLUMN")
        if key in ("labels.", "meta."):
            raise ValueError(f"--map {item!r}: expected {key}NAME=COLUMN, a name after {key!r}")
        if key in given and key != "meta":
            raise ValueError(f"--map {key}: given twice ({given[key]} and {value}); map it once")
        fields = (key, *given)
        if "labels" in fields and any(field.startswith("labels.") for field in fields):
            raise ValueError("--map labels and --map labels.TASK: give one or the other")
        if other := mixed_meta(key, given):
            raise ValueError(
                f"--map {other}={given[other]} and --map {key}={value}: give each meta field as --map "
                "meta.FIELD=COLUMN, or all as --map meta=COLUMN,..."
            )
        given[key] = value
        if key.startswith("labels."):
            columns.setdefault("labels", {})[key.removeprefix("labels.")] = value
        elif key == "labels":  # YAML's list, as before the comma-separated form, or columns named as their tasks
            columns["labels"] = (
                column_list(key, value) if value.startswith("[") else [name.strip() for name in value.split(",")]
            )
        elif key == "meta":
            columns.setdefault("meta", []).extend(value.split(","))
        elif key.startswith("meta."):
            columns.setdefault("meta", {})[key.removeprefix("meta.")] = value
        else:
            columns[key] = column_list(key, value) if value.startswith("[") else value
    return columns


def mixed_meta(key: str, given: dict[str, str]) -> str | None:
    """The field of ``given`` (mapped so far) that ``key`` mixes with: ``meta`` for a ``meta.FIELD``, the first
    ``meta.FIELD`` for ``meta``; ``None`` if none. Mixed, a field named both ways would be read from whichever came
    last, so ``parse_columns`` refuses them."""
    if key == "meta":
        return next((field for field in given if field.startswith("meta.")), None)
    return "meta" if key.startswith("meta.") and "meta" in given else None


def column_list(field: str, value: str) -> Any:
    """The columns ``--map FIELD=[a, b]`` gives ``field``: ``value`` read as YAML, as a recipe's ``data.columns`` is.

    Raises:
        ValueError: Naming the option and the value, and on one line where the value is not YAML.
    """
    try:
        return parse_yaml(value)
    except yaml.YAMLError as error:
        raise ValueError(f"--map {field}: the value {value!r} is not YAML {yaml_problem(error, value)}") from None


def check_label_tasks(columns: dict[str, Any] | None, tasks: Sequence[str]) -> None:
    """Refuse a mapping that is not one (``faim.data.columns.ColumnMap.from_recipe``), or labels mapped
    (``--map labels.TASK=COLUMN``, or ``--map labels=COLUMN,...`` naming the tasks by their columns) to a task the
    model lacks, before the model reads a post.

    Args:
        columns: The mapping ``parse_columns`` gives.
        tasks: The model's task names.

    Raises:
        ValueError: Naming the field mapped wrongly, or the first task the model lacks and the model's tasks.
    """
    listed = isinstance((columns or {}).get("labels"), list)  # --map labels=COLUMN,...: columns named as tasks
    for task in ColumnMap.from_recipe(columns).labels:
        if task not in tasks:
            given = f"labels={','.join(columns['labels'])}" if listed else f"labels.{task}"
            named = "; it reads columns named as their tasks: give one of another name as --map labels.TASK=COLUMN"
            raise ValueError(
                f"--map {given}: the model has no task {task!r}{suggest(task, list(tasks))}; "
                f"its tasks: {', '.join(tasks)}{named if listed else ''}"
            )


def resume_command(recipe: str, overrides: list[str], output_dir: str | None = None) -> str:
    """The ``faim train`` command line that resumes a run of ``recipe`` with ``--set`` ``overrides`` (and
    ``--output-dir``), with ``--resume``, quoted for the system's shell (``shell_command``), in backquotes: what a
    run stopped by a signal names."""
    words = ["faim", "train", recipe]
    for override in overrides:
        words += ["--set", override]
    if output_dir:
        words += ["--output-dir", output_dir]
    return f"`{shell_command([*words, '--resume'])}`"


def folder_path(text: str) -> Path:
    """A folder argument as a path, refused where it is empty (a variable not set: ``-o "$OUT"``), which a path
    reads as the working directory."""
    if not text:
        raise argparse.ArgumentTypeError("an empty folder name (a variable not set?); name a folder, . for this one")
    return Path(text)


def check_outside_model(
    model: str | Path, out: str | Path, written: str, option: str = "-o", named: str = "the model"
) -> None:
    """Refuse an output folder ``out`` (given as ``option``) that is the model folder ``model`` (what it is:
    ``named``, "the new model, -o") or lies inside it: ``written`` (what goes there: "the export") would be mixed
    into the model's folder, or replace it.

    Raises:
        ValueError: Naming both folders.
    """
    model, out = Path(model), Path(out)
    if model.resolve() in (out.resolve(), *out.resolve().parents):
        raise ValueError(f"{option} {out}: that is {named} or a folder inside it ({model}); {written} goes elsewhere")


def output_folder(text: str) -> str:
    """An argument naming a folder to write into, refused as it is parsed, before any work, where it is empty
    (``folder_path``), a file or lies inside one (``faim.folders.check_folder_path``), or where the system will not
    say (a folder on the way that this user may not read)."""
    try:
        check_folder_path(folder_path(text))
    except OSError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def path_given(text: str) -> str:
    """An argument naming a model's folder or the posts to read (a file, a folder, a glob), refused as it is parsed
    where it is empty (a variable not set: ``"$DATA"``), which a path reads as the working directory, and an argument
    that may be left out as not given: ``faim eval MODEL "$DATA"`` then evaluated the recipe's split instead."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (a variable not set?); name a file or a folder, . for this one")
    return text


def output_file(text: str) -> Path:
    """An argument naming a file to write, refused as it is parsed, before any work, where it is empty (a variable
    not set), a folder, or where its folder is a file or lies inside one (``faim.folders.check_folder_path``): what
    writing it at the end of the work would otherwise fail on."""
    if not text:
        raise argparse.ArgumentTypeError("an empty file name (a variable not set?); name a file to write")
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, not a file; name a file to write")
    try:
        if not path.is_file():  # else its folder is one
            check_folder_path(path)  # names the file it would lie inside
    except OSError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return path


def existing_folder(text: str) -> str:
    """An argument naming a folder to read from, refused as it is parsed, before any work, where it is empty
    (``folder_path``) or no folder (every relative image path would be its row's error)."""
    path = folder_path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {'not a folder' if path.exists() else 'no such folder'}")
    return text


def positive_integer(text: str) -> int:
    """An argument that must be a whole number of at least 1 (a count of draws, labels or seeds)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def share(text: str) -> float:
    """An argument that must be a number from 0 to 1 (a fall of a macro-F1 accepted); ``nan`` is refused, as no
    figure compares greater than it."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value

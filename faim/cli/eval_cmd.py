"""``faim eval MODEL [DATA]``.

Its arguments are ``faim.cli.eval_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from functools import cache, partial
from pathlib import Path
from typing import Any

from faim.artifact import read_recipe
from faim.cli.common import (
    check_label_tasks,
    check_outside_model,
    parse_columns,
    refuse_mapping_without_data,
    unlabelled_split,
)
from faim.data.columns import ColumnMap, object_read
from faim.data.elements import MAP_ELEMENTS, leave_out_empty
from faim.data.inputs import check_apart_from_data, input_name
from faim.data.post import LANGUAGE, Post, refuse_no_posts
from faim.data.preflight import label_column_hint, labels_remedy, unread_columns, warn_source_split
from faim.data.sources import check_split, read_posts
from faim.data.unheld import warn_unheld_kinds, warn_unread_meta
from faim.detector import Detector
from faim.eval.evaluate import evaluate
from faim.eval.report import format_table
from faim.eval.robustness import REPORT_FILES, format_robustness, robustness_report
from faim.eval.slices import carried_name, slice_problem, without_meta
from faim.folders import as_named
from faim.notices import warn
from faim.wording import shell_path

LANGUAGE_COLUMNS = frozenset({LANGUAGE, "language", "lang_code", "language_code", "langcode", "locale"})
"""The names of a column that a user may expect ``--slice lang`` and the metrics per language to read, as
``language_column`` compares them: the language's code (``lang_code``, ``language_code``, as datasets often name
it), or a locale (``locale``, as Common Voice names it: ``en_US`` is read as its language). Not ``iso``, which names
a country's code or a photo's film speed as often."""

WHOLE_FILE = "(every row)"
"""What the report gives as the split of posts read from a file given as DATA."""

SPLIT_KIND = (
    "the recipe's data.columns maps the split's columns, which --map does not reach: give a file as DATA with --map "
    "{field}=COLUMN"
)
"""What to do about a recipe's split none of whose posts holds a kind the model reads."""


def run(args: argparse.Namespace) -> int:
    refuse_mapping_without_data(args, "DATA")
    if args.data and args.split:
        raise ValueError(
            f"--split names a split of the model's recipe; {args.data} is evaluated whole: give one or the other"
        )
    args.split = args.split or "validation"
    label = input_name(args.data) if args.data else args.split  # what the report's folder is named by default
    out = Path(args.out) if args.out else as_named(Path(args.model)).parent / f"eval-{label}"  # . has a parent
    option = "-o" if args.out else "the report's folder (MODEL/../eval-NAME; -o names another)"
    check_outside_model(args.model, out, "the report", option)
    if args.data:
        check_apart_from_data(args.data, out, "the report", option)
    recipe = read_recipe(args.model)
    columns = parse_columns(args.columns)
    check_label_tasks(columns, list(recipe.model["heads"]))
    source = None if args.data else recipe.data_source()
    if source is not None:
        check_split(source, args.split)  # a file not there is named before another split is read
    # the posts are read, and data that holds none refused, before the model is loaded: reading them does not use it
    if args.data:
        posts = list(read_posts(args.data, columns, args.image_root))
        name, unmapped = args.data, MAP_ELEMENTS
    else:
        posts, name = source.posts(args.split), source.describe(args.split)
        unlabelled = f"{unlabelled_split('DATA')}, or evaluate another split with --split"
        unmapped = "the recipe's data.columns maps them, which --map does not reach: give a file as DATA with --map"
    refuse_no_posts(posts, name)
    # the columns of a file given as DATA no mapping reads, read once where a note needs them
    unread = cache(partial(unread_columns, args.data, ColumnMap.from_recipe(columns))) if args.data else None
    detector = Detector.load(args.model)
    kinds = detector.model.kinds_with(detector.pooling_kind)
    posts = leave_out_empty(posts, kinds, name, unmapped)
    # posts none of which is labelled, pictures that are not there and texts that are not text are refused by
    # evaluate, before the model reads a post
    if args.data:
        tasks = [task.name for task in detector.tasks]
        # what to do where evaluation finds no label: the data's columns are read for it then alone
        unlabelled = partial(labels_remedy, unread, columns, tasks)
        warn_unheld_kinds(posts, kinds, name, columns=unread)
        warn_unread_meta(posts, detector.model.meta_fields, name)
    else:
        warn_source_split(source, args.split, posts, kinds, SPLIT_KIND)
    for note in unlabelled_task_notes([task.name for task in detector.tasks], posts, name, unread, columns):
        warn(note)
    config = replace(recipe.eval, split=WHOLE_FILE if args.data else args.split)  # the report names what it read
    field = args.slice or config.slice
    # evaluation gives each post its language first
    filled = {LANGUAGE} if replace(config, slice=field).detects_languages else set()
    if args.data and filled and not any(LANGUAGE in post.meta for post in posts):
        for note in language_column_notes(args.data, unread, columns):
            warn(note)
    if field and (problem := slice_problem(field, (post.meta for post in posts), filled)):
        how = slice_remedy(field, unread, columns, posts)
        if args.slice:
            raise ValueError(f"--slice: {problem}; {how}")
        warn(f"eval.slice: {problem}, so the report has no slices; {how}")
        field = None  # said here, before the model reads a post, so evaluation does not say it again
    config = replace(config, slice=field)
    also = REPORT_FILES if args.robustness else ()
    report = evaluate(detector, posts, out, name, config, remedy=unlabelled, also=also)
    print(format_table(report))
    if args.robustness:
        print(format_robustness(robustness_report(detector, posts, report, out, name, config)))
    print(f"report: {shell_path(out)}")
    return 0


def slice_remedy(
    field: str, unread: Callable[[], list[str] | None] | None, columns: dict[str, Any] | None, posts: list[Post]
) -> str:
    """How to give ``posts`` the meta field ``field`` to slice by: for a file given as DATA, whose columns the mapping
    ``columns`` leaves unread ``unread`` gives (``faim.data.preflight.unread_columns``), ``--map meta=COLUMN``
    (``--map meta=FIELD`` where the file has a column ``field`` the mapping leaves unread: for the
    ``meta`` column, read where it holds an object, only where none did, no post carrying a meta field, as mapping it
    stops reading its objects; each as ``meta.FIELD=`` where ``columns`` maps meta fields so: ``meta_item``), naming
    the columns of the file no mapping reads; for a recipe's split (``unread`` ``None``), which ``--map`` does not
    reach, the recipe's ``data.columns`` and a file given as DATA. A ``field`` named as ``--map`` names a meta field
    (``meta.topic``) is told to drop ``meta.``, and how to give the posts the field so named where they lack it (as
    slicing by ``lang`` detects it, the posts need not carry that); one close to a field they carry, ``lang`` among
    them (``Topic`` beside ``topic``, ``Lang``: ``faim.eval.slices.carried_name``, as evaluation finds it), is told
    that field's name first."""
    close = carried_name(field, (post.meta for post in posts))
    if said := without_meta(field):
        named = field.removeprefix("meta.")
        return said if close == named else f"{said} and {slice_remedy(named, unread, columns, posts)}"
    named = f"name it {close!r}, as the posts carry it, or " if close else ""
    if unread is None:
        return (
            f"{named}the recipe's data.columns meta lists what its split carries, and --map does not reach it: give a "
            "file as DATA with --map meta=COLUMN"
        )
    unmapped = unread() or []
    # the meta column read where it holds an object, none of whose cells did: mapping it loses no field
    plain = field == "meta" and object_read(field) in unmapped and not any(post.meta for post in posts)
    if field in unmapped or plain:
        how = f"read its column with --map {meta_item(field, field, columns)}"
    else:
        how = f"{named}map one with --map {f'meta.{field}' if names_meta_fields(columns) else 'meta'}=COLUMN"
    return f"{how} (columns of the data no mapping reads: {', '.join(unmapped)})" if unmapped else how


def language_column_notes(
    data: str, unread: Callable[[], list[str] | None], columns: dict[str, Any] | None
) -> list[str]:
    """A note for each column of ``data`` named as a language column is (``language_column``) that the
    mapping ``columns`` leaves unread (``unread`` gives those: ``faim.data.preflight.unread_columns``), as it does
    unless ``--map meta=COLUMN`` or ``--map meta.lang=COLUMN`` names it: evaluation gives each post the language
    detected from its text instead, and the note says how to read the column as each post's language."""
    notes = []
    for column in filter(language_column, unread() or []):
        mapping = meta_item(LANGUAGE, column, columns)
        notes.append(
            f"{data} has a column {column!r} faim eval does not read: each post's language (--slice "
            f"{LANGUAGE}, the metrics per language) is detected from its text; read the column instead with --map "
            f"{mapping}"
        )
    return notes


def language_column(column: str) -> bool:
    """Whether ``column`` is named as a language column is (``LANGUAGE_COLUMNS``), in any case and with a hyphen for an
    underscore (``Language-Code``)."""
    return column.lower().replace("-", "_") in LANGUAGE_COLUMNS


def meta_item(field: str, column: str, columns: dict[str, Any] | None) -> str:
    """The ``--map`` item reading ``column`` into the meta field ``field`` beside the mapping ``columns``:
    ``meta=COLUMN``, which keeps a column under its own name, where they are one name and ``columns`` maps no meta
    field as ``meta.FIELD=COLUMN`` (``names_meta_fields``), beside which ``meta=`` is refused; ``meta.FIELD=COLUMN``
    otherwise."""
    return f"meta={column}" if column == field and not names_meta_fields(columns) else f"meta.{field}={column}"


def names_meta_fields(columns: dict[str, Any] | None) -> bool:
    """Whether the mapping ``columns`` (``faim.cli.common.parse_columns``'s) maps meta fields as ``--map
    meta.FIELD=COLUMN`` does, which ``--map meta=COLUMN`` may not join."""
    return isinstance((columns or {}).get("meta"), dict)


def unlabelled_task_notes(
    tasks: list[str],
    posts: list[Post],
    name: str,
    unread: Callable[[], list[str] | None] | None,
    columns: dict[str, Any] | None,
) -> list[str]:
    """A note for each of ``tasks`` no post carries a label for, where some post carries one for another (none at all
    is refused as evaluation begins): the report leaves it out. For a file given as DATA, the note says how to read
    its labels (``label_column_hint``, of the columns the mapping ``columns`` leaves unread, which ``unread`` gives:
    ``None`` for a recipe's split)."""
    unlabelled = [task for task in tasks if all(post.labels.get(task) is None for post in posts)]
    if len(unlabelled) in (0, len(tasks)):
        return []
    notes = []
    for task in unlabelled:
        hint = "" if unread is None else label_column_hint(task, unread() or [], columns)
        notes.append(f"{name}: no post carries a label for task {task!r}, which the report leaves out{hint}")
    return notes

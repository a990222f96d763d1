"""``faim export MODEL -o OUT [--format onnx|pt2] [--quantize int8]``: write a saved model as ONNX graphs that
``faim.runtime`` scores without torch, or as torch.export programs.

Its arguments are ``faim.cli.export_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from faim.artifact import read_recipe
from faim.artifact_manifest import EXPORT_MANIFEST
from faim.cli.common import (
    check_label_tasks,
    check_outside_model,
    parse_columns,
    refuse_mapping_without_data,
    unlabelled_split,
)
from faim.data.elements import PostError
from faim.data.post import MAP_LABELS, Post, check_labelled, refuse_no_posts
from faim.data.sources import check_split, read_posts
from faim.detector import Detector
from faim.eval.quantization import TIMED_POSTS, QuantizationCheck, check_readable, compare_exports
from faim.export.model import export_model
from faim.export.quantize import MAX_DROP, calibration_sample, quantize_export
from faim.export.staging import EXPORT_STAGING
from faim.folders import check_replaceable, replacing, working_folder, writing_towards
from faim.notices import warn
from faim.recipe import Recipe
from faim.runtime.model import ExportedModel
from faim.wording import plural


def run(args: argparse.Namespace) -> int:
    if args.quantize and args.format != "onnx":
        raise ValueError(f"--quantize quantizes ONNX graphs; it cannot be used with --format {args.format}")
    measuring = {"--data": args.data, "--map": args.columns, "--image-root": args.image_root,
                 "--max-drop": args.max_drop is not None}  # fmt: skip
    if not args.quantize and (given := [flag for flag, value in measuring.items() if value]):
        raise ValueError(f"{', '.join(given)}: only with --quantize, which measures the int8 export on labelled posts")
    refuse_mapping_without_data(args, "--data")
    out = Path(args.out)
    check_outside_model(args.model, out, "the export")
    check_replaceable(out, EXPORT_MANIFEST)  # before any work, as the plain export's staging does again
    columns = parse_columns(args.columns)
    recipe = read_recipe(args.model)
    check_label_tasks(columns, list(recipe.model["heads"]))
    with writing_towards(out):
        if args.quantize:
            quantized_export(args, out, columns, recipe)
        else:
            export_model(Detector.load(args.model), out, args.format)
    summary(args.model, out, args.format)
    return 0


def quantized_export(args: argparse.Namespace, out: Path, columns: dict[str, Any] | None, recipe: Recipe) -> None:
    """Export the model ``args`` names to ``out`` in int8, measured against fp32 on labelled posts (``--data`` read
    with ``columns``, or ``recipe``'s validation split), and smoothed where it loses more than ``--max-drop``; worked
    out in a folder beside ``out``, removed before the int8 export, moved into the folder that replaces ``out``
    (``faim.folders.replacing``), takes its place.

    Raises:
        ValueError: When no post can be read, or int8 loses more than ``--max-drop`` even smoothed.
    """
    posts = labelled_posts(args, columns, recipe)  # before the model is loaded, as reading the posts does not use it
    if not args.data:  # a drop over --max-drop smooths on the training split, after minutes of work: said first
        warn_missing_train_split(recipe)
    detector = Detector.load(args.model)
    check_readable(*until_readable(detector, posts), measured_on(args))
    max_drop = MAX_DROP if args.max_drop is None else args.max_drop
    with replacing(out, EXPORT_STAGING) as staging, working_folder(out, EXPORT_STAGING) as tmp:
        fp32 = export_model(detector, tmp / "fp32")
        int8 = quantize_export(fp32, tmp / "int8")
        check = compare_exports(ExportedModel(fp32), ExportedModel(int8), posts)
        print(report(check))
        if check.drop > max_drop:
            sample = calibration_sample(smoothing_posts(args, posts, recipe))
            print(f"drop {check.drop:.4f} > --max-drop {max_drop}: quantizing again, smoothed on "
                  f"{plural(len(sample), 'post')}")  # fmt: skip
            int8 = quantize_export(fp32, tmp / "int8-smoothed", sample)
            check = compare_exports(ExportedModel(fp32), ExportedModel(int8), posts)
            print(report(check))
        if check.drop > max_drop:
            worst = max(check.macro_f1, key=lambda task: check.macro_f1[task][0] - check.macro_f1[task][1])
            before, after = check.macro_f1[worst]
            raise ValueError(
                f"int8 lowers {worst!r} macro-F1 from {before:.4f} to {after:.4f} on {plural(check.posts, 'post')}, a "
                f"drop of {check.drop:.4f} > --max-drop {max_drop}; nothing was written (export without --quantize)"
            )
        check_replaceable(out, EXPORT_MANIFEST)  # again: the quantization took minutes, and the folder may have changed
        for path in int8.iterdir():
            path.rename(staging / path.name)


def smoothing_posts(args: argparse.Namespace, labelled: list[Post], recipe: Recipe) -> list[Post]:
    """The posts int8 smoothing is fitted on, unlabelled: the training split of the model's recipe, or with
    ``--data``, the posts given there (``labelled``)."""
    return labelled if args.data else recipe_split(recipe, "train")


def until_readable(detector: Detector, posts: list[Post]) -> tuple[list[Post], list[PostError]]:
    """``posts`` read in order up to the first ``detector`` can read, as ``Detector.readable`` splits them: whether
    any can be read, without reading every picture of the posts."""
    errors: list[PostError] = []
    for post in posts:
        readable, unread = detector.readable([post])
        if readable:
            return readable, errors
        errors += unread
    return [], errors


def labelled_posts(args: argparse.Namespace, columns: dict[str, Any] | None, recipe: Recipe) -> list[Post]:
    """The posts ``--quantize`` measures on: ``--data`` read with ``columns`` (``--map``), or the validation split of
    the model's recipe; read from the recipe alone, before the model is loaded.

    Raises:
        ValueError: Naming them (``measured_on``) where they hold no post, or none carries a label for any of the
            recipe's tasks.
    """
    where = measured_on(args)
    if args.data:
        posts, remedy = list(read_posts(args.data, columns, args.image_root)), MAP_LABELS
    else:
        posts, remedy = recipe_split(recipe, "validation"), unlabelled_split("--data")
    refuse_no_posts(posts, where)
    check_labelled(posts, list(recipe.model["heads"]), where, remedy)
    return posts


def recipe_split(recipe: Recipe, split: str) -> list[Post]:
    """The posts of the model's recipe's ``split`` (validation, measured on; train, smoothed on), which ``--quantize``
    reads without ``--data``.

    Raises:
        FileNotFoundError: As ``split_not_here``.
    """
    with split_not_here(split):
        return recipe.data_source().posts(split)


def warn_missing_train_split(recipe: Recipe) -> None:
    """Warn (``FaimWarning``) where the files of the model's recipe's training split are not here (found reading no
    post, ``faim.data.sources.check_split``), naming the recipe key and the file as ``split_not_here`` does: an int8
    export losing more than ``--max-drop`` is smoothed on that split, minutes into the work, and one that loses less
    never reads it."""
    try:
        with split_not_here("train"):
            check_split(recipe.data_source(), "train")
    except FileNotFoundError as error:
        needed = "only where int8 loses more than --max-drop, found once the int8 export is measured"
        warn(f"{error} ({needed})")


@contextmanager
def split_not_here(split: str) -> Iterator[None]:
    """Turn the FileNotFoundError of reading the recipe's ``split``, naming the recipe key and the file not found,
    into one saying what ``--quantize`` reads it for and to give the posts with ``--data``: a model copied to where it
    is exported leaves its recipe's data behind."""
    try:
        yield
    except FileNotFoundError as error:
        use = "measures the int8 export on" if split == "validation" else "smooths the int8 export on"
        raise FileNotFoundError(
            f"{error}; --quantize {use} the recipe's {split} split: give labelled posts with --data"
        ) from None


def measured_on(args: argparse.Namespace) -> str:
    """The posts ``--quantize`` measures on, as errors name them: ``--data``, or the recipe's validation split."""
    return args.data or "the recipe's validation split"


def report(check: QuantizationCheck) -> str:
    """The int8 check as lines of text: each task's macro-F1, the tasks not measured, and the speed where enough posts
    were timed."""
    lines = [
        f"int8 against fp32 on {plural(check.posts, 'post')} ({check.unreadable} unreadable left out), each task's "
        "macro-F1 on those labelled for it:"
    ]
    lines += [f"  {task}: macro-F1 {fp32:.4f} -> {int8:.4f}" for task, (fp32, int8) in check.macro_f1.items()]
    if check.unmeasured:
        lines.append(f"  {', '.join(check.unmeasured)}: not measured (no post is labelled for them)")
    fp32_rate, int8_rate = check.posts_per_second
    if check.timed:
        lines.append(f"  posts/s: {fp32_rate:.1f} -> {int8_rate:.1f} ({check.speedup:.2f}x)")
    else:
        lines.append(f"  posts/s: not timed on {plural(check.posts, 'post')} (too few: the first runs of each export "
                     f"would weigh most; {TIMED_POSTS} or more are timed)")  # fmt: skip
    return "\n".join(lines)


def summary(model: str, out: Path, graph_format: str) -> None:
    files = [path for path in out.rglob("*") if path.is_file()]
    graphs = [path for path in files if path.suffix == f".{graph_format}"]
    size = sum(path.stat().st_size for path in files) / 2**20
    counts = f"{plural(len(graphs), f'{graph_format} graph')}, {plural(len(files), 'file')}"
    print(f"exported {model} to {out}: {counts}, {size:.1f} MiB")
    if graph_format == "onnx":
        print(f"score it without torch: faim.runtime.load({str(out)!r}).score(posts)")
    else:
        print(f"score it with torch: faim.export.programs.load_export({str(out)!r}).score(posts)")

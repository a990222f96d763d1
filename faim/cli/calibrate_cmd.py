"""``faim calibrate MODEL DATA -o NEW_MODEL``: fit a saved model's calibration to posts of a new platform.

Its arguments are ``faim.cli.calibrate_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

from faim.artifact import MANIFEST, read_recipe
from faim.calibration.fit import Calibration
from faim.calibration.head_correction import FOLDS
from faim.calibration.prior import WIDE_INTERVAL, edge_shares
from faim.calibration.scaling import temperature_edge
from faim.cli.common import check_label_tasks, check_outside_model, parse_columns
from faim.data.columns import ColumnMap
from faim.data.elements import leave_out_empty
from faim.data.inputs import check_apart_from_data
from faim.data.post import check_labelled, post_texts, refuse_no_posts
from faim.data.preflight import label_column_hint, labels_remedy, refuse_unreadable, unread_columns
from faim.data.sources import read_posts
from faim.data.targets import TaskSpec
from faim.data.unheld import warn_unheld_kinds, warn_unread_meta
from faim.detector import Detector, check_recipe_correctable
from faim.eval.evaluate import check_finite
from faim.eval.plots import model_plot_names
from faim.eval.recalibration import (
    SIZES,
    as_is,
    calibrated_range,
    curve_rows,
    labelled,
    learning_curve,
    left_out_sizes,
    pooling_note,
    prior_adaptation,
    refit_settings,
    remove_report,
    task_notes,
    term_disagreement,
    uncorrectable_sizes,
    write_report,
)
from faim.eval.tables import format_value, text_table
from faim.folders import as_named, check_replaceable, writing_towards
from faim.inference import predict
from faim.pooling import picture_groups
from faim.recipe.sections import EvalConfig
from faim.training.loaders import make_loader
from faim.wording import plural, shell_path


def run(args: argparse.Namespace) -> int:
    model, out = Path(args.model), Path(args.out)
    check_outside_model(model, out, "the calibrated model")
    check_replaceable(out, MANIFEST)
    named = as_named(out)  # the folder replaced: . and x/.. have no name of their own
    directory = Path(args.report) if args.report else named.parent / f"{named.name}-calibration"
    option = "--report" if args.report else "the report's folder (NEW_MODEL-calibration; --report names another)"
    check_outside_model(model, directory, "the report", option)
    check_outside_model(out, directory, "the report", option, "the new model, -o,")
    check_apart_from_data(args.data, directory, "the report", option)
    if args.head and args.unlabelled:
        raise ValueError("--head corrects heads on labelled posts; it cannot go with --unlabelled")
    recipe, columns = read_recipe(model), parse_columns(args.columns)
    check_label_tasks(columns, list(recipe.model["heads"]))
    if args.head:
        check_recipe_correctable(recipe, str(model))
    with writing_towards(out):  # stopped before the new model is written, says so
        posts = list(read_posts(args.data, columns, args.image_root))
        refuse_no_posts(posts, args.data)  # before the model is loaded, as reading the posts does not use it
        detector = Detector.load(model)
        if args.head:
            detector.check_correctable()  # the pooling the manifest records, which the recipe may not say
        kinds = detector.model.kinds_with(detector.pooling_kind)
        posts = leave_out_empty(posts, kinds, args.data)
        # the columns of the data no mapping reads, read where a note needs them
        unread = cache(partial(unread_columns, args.data, ColumnMap.from_recipe(columns)))
        warn_unheld_kinds(posts, kinds, args.data, columns=unread)
        warn_unread_meta(posts, detector.model.meta_fields, args.data)
        if not args.unlabelled:
            names = [task.name for task in detector.tasks]

            def remedy() -> str:
                return f"{labels_remedy(unread, columns, names)}, or estimate the share of positives with --unlabelled"

            check_labelled(posts, names, args.data, remedy)
        refuse_unreadable(
            posts, detector.model.kinds, detector.max_elements, args.data, fused=detector.model.fused_kinds
        )
        collator = detector.collator(with_targets=True)
        loader = make_loader(detector.model, collator, posts, recipe.eval.batch_size, shuffle=False)
        predictions = predict(
            detector.model,
            loader,
            desc="predicting",
            link_kind=detector.pooling_kind,
            embeddings=args.head,
            source=detector.source,
        )
        check_finite(detector, predictions, args.data)
        with_labels = [
            t for t in detector.tasks if t.name in predictions.targets and t.labelled(predictions.targets[t.name]).any()
        ]
        one_class = {}  # binary task → the one label all its labelled posts carry
        for task in (t for t in with_labels if t.type == "binary"):
            if (label := task.sole_label(labelled(task, predictions)[1])) is not None:
                one_class[task.name] = label
        for name, label in one_class.items():
            print(one_class_note(name, label, args.unlabelled))

        def hint(task: str) -> str:
            return label_column_hint(task, unread() or [], columns)

        for note in kept_notes(detector.tasks, with_labels, args.unlabelled, args.head, hint):
            print(note)
        config = refit_settings(recipe.eval)
        sizes = SIZES if args.sizes is None else args.sizes
        texts = post_texts(posts)
        # the posts evaluation draws together for a calibrated model's ECE (its without_pooling row, which this
        # measures)
        groups = picture_groups(predictions, detector.pool_by_image) if detector.pooling_kind else None
        report: dict[str, Any] = {
            "model": str(model),
            "data": str(args.data),
            "unlabelled": args.unlabelled,
            "pooled_by_image": detector.pool_by_image,
            "tasks": {},
        }
        for task in (t for t in with_labels if t.type in ("binary", "multiclass") and t.name not in one_class):
            measured = as_is(task, detector.calibration, predictions, config)
            report["tasks"][task.name] = {
                "as_is": measured,
                "learning_curve": learning_curve(
                    task, detector.calibration, predictions, config, sizes, args.draws, args.seed, groups=groups
                ),
                "sizes_left_out": left_out_sizes(sizes, measured["posts"]),
                "unlabelled": prior_adaptation(task, detector.calibration, predictions, config),
                "terms": term_disagreement(task, detector.calibration, predictions, texts),
            }
            if args.head and task.type == "binary":
                report["tasks"][task.name]["head_curve"] = learning_curve(
                    task, detector.calibration, predictions, config, sizes, args.draws, args.seed, head=True
                )
                report["tasks"][task.name]["head_sizes_left_out"] = uncorrectable_sizes(sizes, measured["posts"])
        if args.unlabelled:
            for task, (old, new, interval) in detector.adapt_to_prior(predictions).items():
                print(prior_note(task, old, new, interval, len(posts)))
        else:
            corrected = []
            if args.head:
                corrected = detector.correct_heads(predictions, config, args.seed)
            else:
                detector.calibrate_predictions(predictions, config)
            for task in (t for t in with_labels if t.type in ("binary", "multiclass") and t.name not in one_class):
                posts_read = int(task.labelled(predictions.targets[task.name]).sum())
                head = head_said(task, task.name in corrected, posts_read) if args.head else ""
                print(f"{task.name}: {head}{fitted(task, detector.calibration, config)}")
        detector.save(out, recipe)
    if report["tasks"]:
        print(summary(report))
        print(f"report: {shell_path(write_report(report, directory, model_plot_names(detector.tasks)))}")
    elif remove_report(directory):
        print(f"{directory}: the report of an earlier calibration is removed (this one measured no task)")
    print(f"model:  {shell_path(out)}")
    return 0


def one_class_note(task: str, label: str, unlabelled: bool) -> str:
    """What becomes of a binary task whose labelled posts are all ``label``: its calibration is kept as it was, or,
    with ``unlabelled`` (EM moves it all the same), its labels are left out of the report."""
    what = "the report leaves them out" if unlabelled else "its calibration is kept as it was"
    need = "measuring a calibration" if unlabelled else "a refit"
    return f"{task}: every labelled post is {label!r}; {what} ({need} needs posts of both classes)"


def prior_note(task: str, old: float, new: float, interval: tuple[float, float], posts: int) -> str:
    """What ``--unlabelled`` did to ``task``: its share of positives moved from ``old`` to the ``new`` EM estimated
    over ``posts`` posts, with its 95% ``interval`` (``prior_interval``), warning where that is wider than
    ``WIDE_INTERVAL``; saying so where EM found no post of one class (``edge_shares``)."""
    said = f"{task}: share of positives {old:.3f} when calibrated, {new:.3f} estimated here (EM)"
    if new not in edge_shares(posts):
        low, high = interval
        said += f", 95% interval {low:.3f} to {high:.3f} over {plural(posts, 'post')}"
        if high - low <= WIDE_INTERVAL:
            return said
        return (
            f"{said}: too wide to rely on (the posts are too few, or the scores barely tell the classes apart), yet "
            "the probabilities are moved to it; give more posts, or label a sample and calibrate without --unlabelled"
        )
    return (
        f"{said}: the model's scores of these posts show none of one class (the posts are too few, here "
        f"{plural(posts, 'post')}, or the scores barely tell the classes apart), so the share is taken half a post "
        "from 0 or 1, not at it, which would move every probability there; give more posts, or label a sample and "
        "calibrate without --unlabelled"
    )


def kept_notes(
    tasks: list[TaskSpec],
    with_labels: list[TaskSpec],
    unlabelled: bool,
    head: bool,
    hint: Callable[[str], str] = lambda task: "",
) -> list[str]:
    """What is said of the other tasks calibrate leaves as they were (beside ``one_class_note``'s): a multilabel task,
    whose probabilities are not calibrated (and, with ``head``, whose head is kept: ``head_said``); with
    ``unlabelled``, a multiclass task (EM moves each binary task's share of positives only); else a task no post
    carries a label of (``with_labels``: those some post does), with what ``hint`` says of how to read its labels
    (``faim.data.preflight.label_column_hint``)."""
    labelled_names = {task.name for task in with_labels}
    notes = []
    for task in tasks:
        if task.type == "multilabel":
            kept = head_said(task, False, 0) if head else ""
            notes.append(f"{task.name}: {kept}a multilabel task's probabilities are not calibrated; kept as they were")
        elif unlabelled and task.type != "binary":
            notes.append(f"{task.name}: --unlabelled moves a binary task's share of positives only; kept as it was")
        elif not unlabelled and task.name not in labelled_names:
            notes.append(f"{task.name}: no post carries its label; its calibration is kept as it was{hint(task.name)}")
    return notes


def head_said(task: TaskSpec, corrected: bool, posts: int) -> str:
    """What ``--head`` did to ``task``'s head, whose labelled posts (``posts`` of them) are of more than one class:
    corrected, or kept, as a binary head with fewer labelled posts than the correction's folds is and a multiclass or
    multilabel head always is (only binary heads are corrected)."""
    if corrected:
        return f"head corrected on {plural(posts, 'labelled post')}; "
    if task.type == "binary":
        return f"head kept ({plural(posts, 'labelled post')}: a correction needs {FOLDS} at least); "
    return f"head kept (--head corrects binary heads alone, not a {task.type} one); "


def fitted(task: TaskSpec, calibration: Calibration, config: EvalConfig) -> str:
    """What was refitted for ``task``: its temperature (and whether it lies at an edge of its range:
    ``temperature_edge``) and, for a binary task, its logit shift (or that the labels show none at
    ``eval.logit_shift_level``) and decision threshold."""
    temperature = calibration.temperatures[task.name]
    parts = [f"temperature {temperature:.3f}"]
    if edge := temperature_edge(temperature):
        parts[0] += f" ({edge})"
    if task.type == "binary":
        shift = calibration.logit_shifts[task.name]
        level = config.logit_shift_level
        none = f"no logit shift (the labels show none at {level:.0%})" if level else "no logit shift"
        parts.append(f"logit shift {shift:+.3f}" if shift else none)
        parts.append(f"threshold {calibration.thresholds[task.name]:.3f}")
    return "refitted " + ", ".join(parts)


def summary(report: dict[str, Any]) -> str:
    """A console table per task: ECE and macro-F1 as it was, after fitting on each number of labels, and moved to
    the EM prior; then ``task_notes``."""
    blocks = []
    for name, task in report["tasks"].items():
        rows = [["as it was", format_value(task["as_is"]["ece"]), "", format_value(task["as_is"]["macro_f1"])]]
        rows += [
            [f"{row['labels']} labels{how}", f"{row['ece_mean']:.4f} ± {row['ece_sd']:.4f}", calibrated_range(row),
             f"{row['macro_f1_mean']:.4f} ± {row['macro_f1_sd']:.4f}"]
            for how, row in curve_rows(task)
        ]  # fmt: skip
        if task["unlabelled"]["ece"] is not None:
            rows.append(
                [
                    "unlabelled (EM)",
                    format_value(task["unlabelled"]["ece"]),
                    "",
                    format_value(task["unlabelled"]["macro_f1"]),
                ]
            )
        header = ["calibration", "ECE", "a calibrated model's ECE", "macro-F1"]
        blocks.append("\n".join([name, text_table(header, rows), *task_notes(task)]))
    return "\n\n".join([note for note in (pooling_note(report),) if note] + blocks)

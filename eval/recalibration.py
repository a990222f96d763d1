"""How much a calibration fitted on a platform's own posts is worth, and how many labels it needs.

``learning_curve`` draws ``n`` labelled posts at random, fits the calibration on them as ``faim calibrate`` does
(``faim.calibration.fit``), and measures ECE and macro-F1 on the posts not drawn, next to the range of ECE a
perfectly calibrated model would show on those posts (on a few hundred posts that range lies far above 0, so an
ECE reads against it); repeated over draws, per ``n``.
``prior_adaptation`` measures the calibration moved to the prior EM estimates from the same posts, unlabelled.
Both start from the detector's calibration as it is, which ``as_is`` measures on every post.
``term_disagreement`` finds the words the model's decisions under it and the labels read the opposite way: no
calibration mends those.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from faim.calibration.fit import Calibration, TargetUnreachableWarning, fit_calibration
from faim.calibration.head_correction import FOLDS, fit_head_correction
from faim.data.targets import TaskSpec
from faim.eval.calibration import ece_if_calibrated
from faim.eval.evaluate import metric_function, opposite_words
from faim.eval.label_conflicts import decision_conflicts_note
from faim.eval.metrics import auroc_interval
from faim.eval.plots import plot_learning_curve, plot_names
from faim.eval.report import WRITTEN, json_text, recorded, replace_written
from faim.eval.tables import (
    code_span,
    format_value,
    heading_text,
    left_to_right,
    markdown_image,
    markdown_name,
    markdown_table,
)
from faim.folders import write_text_whole
from faim.inference import Predictions
from faim.recipe.sections import EvalConfig

MEASURED = ("ece", "macro_f1")
CALIBRATED_RANGE = ("ece_if_calibrated_low", "ece_if_calibrated_high")
"""The central 95 % of the ECEs a calibrated model would show on the measured posts."""
SIMULATED = 200
"""Samples drawn from the fitted probabilities per labelled draw, for ``CALIBRATED_RANGE``."""
SIZES = (50, 100, 200, 500)
"""Numbers of labelled posts ``learning_curve`` fits on by default (``faim calibrate --sizes``); a number that leaves
no post to measure on is left out."""


def measure(task: TaskSpec, calibration: Calibration, prob: np.ndarray, y: np.ndarray, config: EvalConfig) -> dict:
    """ECE and macro-F1 of one task's labelled posts, given their probabilities under ``calibration`` (whose
    threshold decides)."""
    metrics = metric_function(task, calibration, config)(y, prob)
    return {name: float(metrics[name]) for name in MEASURED}


def labelled(task: TaskSpec, predictions: Predictions) -> tuple[np.ndarray, np.ndarray]:
    """``(logits, targets)`` of the posts labelled for ``task``."""
    target = predictions.targets[task.name]
    keep = task.labelled(target)
    return predictions.logits[task.name][keep], target[keep].astype(np.int64)


def learning_curve(
    task: TaskSpec,
    start: Calibration,
    predictions: Predictions,
    config: EvalConfig,
    sizes: Sequence[int] = SIZES,
    draws: int = 20,
    seed: int = 0,
    head: bool = False,
    groups: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """Per number of labels (those of ``sizes`` that leave posts to measure on), the mean and standard deviation
    over ``draws`` of ECE and macro-F1 on the posts not drawn, after fitting on the drawn ones from ``start``
    (with ``head``, a binary task's head correction first, ``faim.calibration.head_correction``, and the calibration
    on its cross-fitted logits, as ``Detector.correct_heads`` fits them, for sizes of at least its ``FOLDS``: the
    others are ``uncorrectable_sizes``; the
    predictions must hold whole-post embeddings; the draws are those made without ``head`` for the same seed), and
    the mean over draws of ``CALIBRATED_RANGE`` on those posts under the fitted probabilities; ``unreachable``
    counts the draws whose labels held no threshold with the precision ``recall@precision`` asks for (their most
    precise cut was chosen, ``faim.calibration.fit.chosen_threshold``); for a binary task, ``shift_kept`` counts the
    draws whose labels showed a logit shift at ``REFIT_SHIFT_LEVEL`` (``None`` for a multiclass task).

    ``groups`` (one id per predicted post), when given, are the posts that show one picture, as a model pooling by
    picture shares one verdict among them (``faim.pooling.picture_groups``): ``CALIBRATED_RANGE`` draws their
    outcomes together, as evaluation's does (``faim.eval.evaluate.Evaluated``).

    Raises:
        ValueError: For a task that is not binary or multiclass.
    """
    if task.type not in ("binary", "multiclass"):
        raise ValueError(f"task {task.name!r}: a {task.type} task has no calibration to refit")
    logits, y = labelled(task, predictions)
    if head and (task.type != "binary" or predictions.embeddings is None):
        raise ValueError(f"task {task.name!r}: a head correction needs a binary task and whole-post embeddings")
    keep = task.labelled(predictions.targets[task.name])
    embeddings = predictions.embeddings[keep] if head else None
    groups = None if groups is None else groups[keep]
    rng = np.random.default_rng(seed)
    rows, left_out = [], set(left_out_sizes(sizes, len(y)))
    uncorrectable = set(uncorrectable_sizes(sizes, len(y))) if head else set()
    for size in (n for n in sizes if n not in left_out):
        masks = [np.isin(np.arange(len(y)), rng.choice(len(y), size, replace=False)) for _ in range(draws)]
        if size in uncorrectable:
            continue  # drawn all the same, so that every size's draws are those made without head
        values: dict[str, list[float]] = {name: [] for name in MEASURED}
        ranges, unreachable, shift_kept = [], 0, 0
        for draw, drawn in enumerate(masks):
            refitted = len(np.unique(y[drawn])) == 2  # one class drawn: the task kept its calibration
            fit_on, measured = logits[drawn], logits[~drawn]
            if embeddings is not None and refitted:
                correction, fit_on = fit_head_correction(embeddings[drawn], logits[drawn], y[drawn], seed=draw)
                measured = correction.logits(embeddings[~drawn], logits[~drawn])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TargetUnreachableWarning)  # counted in the row, not said per draw
                fitted, reached = refit(task, start, fit_on, y[drawn], config)
            unreachable += not reached
            shift_kept += refitted and task.type == "binary" and fitted.logit_shifts[task.name] != 0.0
            prob = fitted.probabilities(task, measured)
            for name, value in measure(task, fitted, prob, y[~drawn], config).items():
                values[name].append(value)
            undrawn = None if groups is None else groups[~drawn]
            ranges.append(ece_if_calibrated(prob, undrawn, bins=config.calibration_bins, draws=SIMULATED, seed=draw))
        rows.append(
            {"labels": size, "draws": draws, "unreachable": unreachable}
            | {"shift_kept": shift_kept if task.type == "binary" else None}
            | {f"{name}_mean": float(np.nanmean(v)) for name, v in values.items()}
            | {f"{name}_sd": float(np.nanstd(v)) for name, v in values.items()}
            | dict(zip(CALIBRATED_RANGE, np.mean(ranges, axis=0).tolist()))
        )
    return rows


def left_out_sizes(sizes: Sequence[int], posts: int) -> list[int]:
    """The numbers of labels of ``sizes`` a learning curve over ``posts`` labelled posts leaves out: those that leave
    no post to measure on (``posts`` or more)."""
    return [n for n in sizes if not 0 < n < posts]


def uncorrectable_sizes(sizes: Sequence[int], posts: int) -> list[int]:
    """The numbers of labels of ``sizes`` the head-corrected learning curve over ``posts`` labelled posts leaves out
    beside ``left_out_sizes``'s: those too few for a head correction (under ``FOLDS``)."""
    left_out = set(left_out_sizes(sizes, posts))
    return [n for n in sizes if n not in left_out and n < FOLDS]


def left_out_note(task_report: dict[str, Any]) -> str | None:
    """A sentence on the numbers of labels the learning curve left out (``sizes_left_out``, ``left_out_sizes``) and
    why, then one on those the head-corrected curve left out besides (``head_sizes_left_out``,
    ``uncorrectable_sizes``), or ``None`` where neither left any out."""
    posts = task_report["as_is"]["posts"]
    notes = []
    if left_out := task_report.get("sizes_left_out"):
        notes.append(
            f"Left out of the learning curve: {', '.join(map(str, left_out))} labels, as fitting on that many would "
            f"leave none of the {posts} labelled posts to measure on; label more posts, or give smaller --sizes."
        )
    if too_few := task_report.get("head_sizes_left_out"):
        notes.append(
            f"Left out of the head-corrected learning curve: {', '.join(map(str, too_few))} labels, as a head "
            f"correction needs {FOLDS} labelled posts at least; give larger --sizes."
        )
    return " ".join(notes) or None


REFIT_SHIFT_LEVEL = 0.05
"""Significance level at which a refit keeps a binary task's logit shift (``eval.logit_shift_level``)."""


def refit_settings(config: EvalConfig) -> EvalConfig:
    """``config`` as a calibration is refitted on a platform's own posts: always a temperature, and for a binary
    task a logit shift (a new platform's share of positives is what it is for) where the labels show one at
    ``REFIT_SHIFT_LEVEL``. Measured with ``learning_curve`` (100 draws) on ``hate_text_stacked`` (then named
    ``hate_text_general``) held out from each English hate dataset here: the test keeps the shift on every Davidson
    draw (its share of hate moved from 0.43 to 0.06: ECE unchanged) and mostly drops it on ETHOS and TweetEval; mean
    ECE over the three after 50, 100, 200 and 500 labels 0.054, 0.044, 0.036, 0.035 against 0.063, 0.049, 0.037,
    0.034 always fitting it, the worst of the three lower at every size (0.061 against 0.075 after 50 labels, 0.055
    against 0.057 after 200)."""
    return replace(config, logit_shift=True, temperature=True, logit_shift_level=REFIT_SHIFT_LEVEL)


def refit(
    task: TaskSpec, start: Calibration, logits: np.ndarray, y: np.ndarray, config: EvalConfig
) -> tuple[Calibration, bool]:
    """A copy of ``start`` with ``task`` fitted on labelled logits under ``refit_settings``, when both classes are
    among a binary task's labels (otherwise ``task`` keeps ``start``'s calibration), and whether its threshold
    meets the objective's target (``fit_calibration``)."""
    fitted = start.copy()
    unreachable = fit_calibration([task], {task.name: logits}, {task.name: y}, refit_settings(config), fitted)
    return fitted, not unreachable


def prior_adaptation(task: TaskSpec, start: Calibration, predictions: Predictions, config: EvalConfig) -> dict:
    """The prior EM estimates from every predicted post (labels unread), its 95% interval (``prior_interval``, as
    ``[low, high]``), and ECE and macro-F1 on the labelled ones once the calibration is moved to it; ``None`` values
    when ``start`` records no prior for the task."""
    if task.type != "binary" or task.name not in start.priors:
        return {"prior": None, "estimated_prior": None, "prior_interval": None, "ece": None, "macro_f1": None}
    moved = start.copy()
    old, new, interval = moved.adapt_to_prior(task, predictions.logits[task.name])
    logits, y = labelled(task, predictions)
    estimated = {"prior": old, "estimated_prior": new, "prior_interval": list(interval)}
    return estimated | measure(task, moved, moved.probabilities(task, logits), y, config)


def as_is(task: TaskSpec, calibration: Calibration, predictions: Predictions, config: EvalConfig) -> dict:
    """ECE and macro-F1 of the calibration as it is, over every labelled post, their share of positives, for a
    multiclass task the labels none of them is of (``absent``) and, for a binary task, how the model ranks them
    (``ranking``)."""
    logits, y = labelled(task, predictions)
    positives = float(y.mean()) if task.type == "binary" else None
    absent = task.absent_labels(y) if task.type == "multiclass" else []
    return (
        {"posts": len(y), "positives": positives, "absent": absent}
        | measure(task, calibration, calibration.probabilities(task, logits), y, config)
        | {"ranking": ranking(logits, y) if task.type == "binary" else None}
    )


def term_disagreement(
    task: TaskSpec, calibration: Calibration, predictions: Predictions, texts: Sequence[str]
) -> dict[str, Any] | None:
    """For a binary task, the words the model's decisions under ``calibration`` and the labels read the opposite
    way on the labelled posts (``texts``: each predicted post's text, in the predictions' order), as
    ``faim.eval.label_conflicts.decision_conflicts`` keeps them; ``None`` for another task.

    Raises:
        ValueError: When ``texts`` and the predictions differ in length.
    """
    if task.type != "binary":
        return None
    if len(texts) != len(predictions.ids):
        raise ValueError(f"{len(texts)} texts for {len(predictions.ids)} predicted posts")
    logits, y = labelled(task, predictions)
    keep = task.labelled(predictions.targets[task.name])
    prob = calibration.probabilities(task, logits)
    return opposite_words(task, texts, keep, y, prob, calibration.thresholds[task.name])


RANKING_LEVEL = 0.95
"""Coverage of the AUROC interval ``ranking`` reports."""


def ranking(logits: np.ndarray, y: np.ndarray) -> dict[str, float | None] | None:
    """A binary task's AUROC over its labelled posts with its ``RANKING_LEVEL`` interval (``auroc``,
    ``auroc_low``, ``auroc_high``; ``faim.eval.metrics.auroc_interval``), or ``None`` with fewer than two posts of
    a class. The bounds are ``None`` where the scores part the classes completely or tie them all, which leaves
    DeLong's interval no width to tell. Any calibration keeps it: temperature and shift move probabilities, not the
    order of posts."""
    if min(int(y.sum()), int(len(y) - y.sum())) < 2:
        return None
    auroc, low, high = auroc_interval(y, logits, RANKING_LEVEL)
    if np.isnan(low):
        return {"auroc": auroc, "auroc_low": None, "auroc_high": None}
    return {"auroc": auroc, "auroc_low": low, "auroc_high": high}


def rarer_by_chance(posts: int, positives: int, tail: float) -> bool:
    """Whether chance orders ``posts`` of which ``positives`` are positive into a complete parting of the classes (one
    ordering of ``comb(posts, positives)``) less often than ``tail``: the count of orderings is built up one factor at
    a time, exactly, and left once past ``1 / tail``, where the whole of it (of half a million positives among a
    million posts) would take seconds."""
    ways = 1
    for taken in range(min(positives, posts - positives)):
        ways = ways * (posts - taken) // (taken + 1)  # comb(posts, taken + 1), a whole number at every step
        if ways * tail > 1:
            return True
    return ways * tail > 1


def absent_note(as_is_row: dict[str, Any], name: Callable[[str], str] = str) -> str | None:
    """A sentence on the classes of a multiclass task no labelled post is of (``absent``, each written as ``name``
    gives it): each macro-F1 counts their F1 as 0, and the temperature is fitted without them; ``None`` where there
    are none."""
    absent = as_is_row.get("absent")
    if not absent:
        return None
    names = " or ".join(f"'{name(label)}'" for label in absent)
    its = "its" if len(absent) == 1 else "their"
    return (
        f"No labelled post is {names} ({as_is_row['posts']} posts): each macro-F1 here counts {its} F1 as 0, and the "
        "temperature is fitted on the other classes' posts alone."
    )


def ranking_note(as_is_row: dict[str, Any]) -> str | None:
    """A sentence on how the model ranks the labelled posts, which no calibration changes, and a warning where its
    interval reaches chance (0.5), saying whether it lies below chance or cannot be told from it on so few posts:
    recalibrating cannot make such a model tell the posts' classes apart, only labels used for training can;
    ``None`` without a ranking.

    Without an interval (``ranking``), a complete parting of the classes tells from chance when chance parts them
    so (one ordering of ``comb(posts, positives)``) less often than the interval's either tail; posts all tied
    cannot."""
    rank = as_is_row.get("ranking")
    if not rank:
        return None
    posts = as_is_row["posts"]
    said = f"Ranking of the posts one by one, which a calibration keeps: AUROC {rank['auroc']:.3f} "
    if rank["auroc_low"] is None:
        parted = rank["auroc"] in (0.0, 1.0)
        said += (
            f"on these {posts:,} labelled posts, with no interval: their scores "
            f"{'part the classes completely' if parted else 'are all one'}, which leaves DeLong's variance nil, and "
            f"an interval of no width would claim a certainty {posts:,} posts cannot give."
        )
        told = parted and rarer_by_chance(posts, round(as_is_row["positives"] * posts), (1 - RANKING_LEVEL) / 2)
        better, worse = told and rank["auroc"] == 1.0, told and rank["auroc"] == 0.0
    else:
        said += (
            f"({RANKING_LEVEL:.0%} interval {rank['auroc_low']:.3f}–{rank['auroc_high']:.3f}) on these {posts:,} "
            "labelled posts."
        )
        better, worse = rank["auroc_low"] > 0.5, rank["auroc_high"] < 0.5
    if better:
        return said
    how = "worse than chance" if worse else f"in a way these {posts:,} posts cannot tell from chance"
    return (
        f"{said} Warning: by these labels the model ranks the posts {how}, so what your labels call positive may "
        "not be what it learnt to find; a calibration moves its probabilities and threshold, not that. Correct the "
        "head on your labelled posts (`faim calibrate --head`), or train one on them (`faim train`); with few labels, "
        "label more first."
    )


def unreachable_note(curve: Sequence[dict[str, Any]]) -> str | None:
    """A sentence on the learning-curve draws whose labels held no threshold with the precision the objective asks
    for, or ``None`` where there were none."""
    counts = [f"{row['unreachable']} of {row['draws']} at {row['labels']}" for row in curve if row.get("unreachable")]
    if not counts:
        return None
    return (
        f"Draws whose labels held no threshold with the precision eval.threshold_target asks for: {', '.join(counts)} "
        "labels; the most precise cut was chosen in those."
    )


def shift_note(curve: Sequence[dict[str, Any]]) -> str | None:
    """A sentence on how many learning-curve draws kept a logit shift, or ``None`` for a multiclass task's curve."""
    counts = [f"{r['shift_kept']} of {r['draws']} at {r['labels']}" for r in curve if r["shift_kept"] is not None]
    if not counts:
        return None
    return (
        f"Draws whose labels showed a logit shift (likelihood-ratio test at {REFIT_SHIFT_LEVEL:.0%}): "
        f"{', '.join(counts)} labels; the others were fitted a temperature alone."
    )


def task_notes(task_report: dict[str, Any], name: Callable[[str], str] = str) -> list[str]:
    """What a task's report table leaves unsaid, those that apply: the classes no labelled post is of
    (``absent_note``), how the model ranks the labelled posts (``ranking_note``), the words it and the labels read the
    opposite way (``decision_conflicts_note``), each note's words and labels written as ``name`` gives them, then the
    learning curve's ``left_out_note``, ``shift_note`` and ``unreachable_note``."""
    curve = task_report["learning_curve"]
    notes = (
        absent_note(task_report["as_is"], name),
        ranking_note(task_report["as_is"]),
        decision_conflicts_note(task_report.get("terms"), name),
        left_out_note(task_report),
        shift_note(curve),
        unreachable_note(curve),
    )
    return [note for note in notes if note]


def curve_rows(task_report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A task report's learning-curve rows, each with what its label adds: its calibration-only rows, then those
    of its ``head_curve`` (``", head corrected"``) where the head was corrected, by number of labels."""
    head = [(", head corrected", row) for row in task_report.get("head_curve", [])]
    rows = [("", row) for row in task_report["learning_curve"]] + head
    return sorted(rows, key=lambda pair: pair[1]["labels"])


def calibrated_range(row: dict[str, Any]) -> str:
    """A learning-curve row's ``CALIBRATED_RANGE`` as ``low–high``."""
    low, high = (row[name] for name in CALIBRATED_RANGE)
    return f"{low:.3f}–{high:.3f}"


WRITER = "faim calibrate"
"""What the record of a calibration's report folder (``written.json``) names as its writer: the files of another's
record (an evaluation's report, written into the same folder) are never removed by a calibration."""


def pooling_note(report: dict[str, Any]) -> str | None:
    """For a model that pools posts by shared picture (the report's ``pooled_by_image``, its cosine), a sentence
    saying the report's figures are of each post on its own, not of the pooled posts ``faim eval`` measures;
    ``None`` for a model that scores each post on its own."""
    min_cosine = report.get("pooled_by_image")
    if min_cosine is None:
        return None
    return (
        f"Measured on each post on its own: this model pools posts by shared picture (eval.pool_by_image "
        f"{min_cosine}), and faim eval measures the pooled posts, under the calibration of pooled logits fitted here "
        "as well; its without_pooling row is what this report measures."
    )


def write_report(report: dict[str, Any], out_dir: Path, names: Mapping[str, str] | None = None) -> Path:
    """Write ``calibration.json``, ``calibration.md`` and, per task with a learning curve (labels enough for one of
    its sizes), a plot of ECE and macro-F1 against the number of labels (``calibration_<task>.png``, ``<task>`` as
    ``names`` gives it: ``faim.eval.plots.model_plot_names`` of the model's tasks, so that a task's plot keeps its
    name whichever of them the data labels; by default ``plot_names`` of the report's tasks; no two tasks' one file)
    into ``out_dir`` (the JSON as ``json_text`` writes it: an undefined
    figure as ``null``), and record them there, removing what an earlier report wrote and this one did not (a plot
    of a task no longer measured; ``faim.eval.report.replace_written``); returns the Markdown file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_whole(out_dir / "calibration.json", json_text(report))
    model, data = (left_to_right(code_span(str(report[key]))) for key in ("model", "data"))  # right to left apart
    parts, plots = [f"# Calibration of {model} on {data}"], []
    parts += [note for note in (pooling_note(report),) if note]
    names = plot_names(report["tasks"]) if names is None else names
    for name, task in report["tasks"].items():
        rows = [["as it was", "all", format_value(task["as_is"]["ece"]), "", format_value(task["as_is"]["macro_f1"])]]
        rows += [
            [f"fitted on {row['labels']} labels{how}", f"{row['draws']} draws",
             f"{row['ece_mean']:.4f} ± {row['ece_sd']:.4f}", calibrated_range(row),
             f"{row['macro_f1_mean']:.4f} ± {row['macro_f1_sd']:.4f}"]
            for how, row in curve_rows(task)
        ]  # fmt: skip
        if task.get("unlabelled", {}).get("ece") is not None:
            unlabelled = task["unlabelled"]
            low, high = unlabelled["prior_interval"]
            prior = (
                f"prior {unlabelled['prior']:.3f} → {unlabelled['estimated_prior']:.3f} (EM, unlabelled; 95% interval "
                f"{low:.3f}–{high:.3f})"
            )
            rows.append([prior, "all", format_value(unlabelled["ece"]), "", format_value(unlabelled["macro_f1"])])
        parts += [
            f"## {heading_text(name)}",
            markdown_table(["calibration", "posts", "ECE", "a calibrated model's ECE there", "macro-F1"], rows),
        ]
        parts += map(left_to_right, task_notes(task, markdown_name))  # naming the task's labels as written
        if task["learning_curve"]:
            plot = plot_learning_curve(
                name, task["learning_curve"], task["as_is"], out_dir, task.get("head_curve", ()), names[name]
            )
            plots.append(plot.name)
            parts.append(markdown_image(name, plot.name))
        else:
            parts.append(f"No learning curve: {task['as_is']['posts']} labelled posts leave none to measure on.")
    path = out_dir / "calibration.md"
    write_text_whole(path, "\n\n".join(parts) + "\n")
    replace_written(out_dir, ["calibration.json", path.name, *plots, WRITTEN], WRITER)
    return path


def remove_report(out_dir: Path) -> bool:
    """Remove the report an earlier calibration wrote into ``out_dir`` (the files its record lists, and
    ``out_dir`` where nothing else is left in it), as a calibration that measures no task writes none and the earlier
    one would describe a calibration the new model no longer has. Returns whether there was such a report (a record
    naming ``WRITER`` as its writer)."""
    if not recorded(out_dir, WRITER):
        return False
    replace_written(out_dir, [], WRITER)
    with contextlib.suppress(OSError):  # not empty: files of another's
        out_dir.rmdir()
    return True

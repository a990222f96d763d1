"""Evaluate a detector on labelled posts: metrics, slices, unimodal ablations, plots, reports.

This module connects detectors to the pure metric functions of ``faim.eval``; the results dictionary it
builds is the one ``faim.eval.report`` documents. What to measure comes from a recipe's ``eval:`` section
(``EvalConfig``); the calibration evaluated is the detector's own (``Detector.calibrate`` fits it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import DataLoader

from faim.calibration.fit import Calibration
from faim.data.language import UNDETERMINED, with_languages
from faim.data.post import LANGUAGE, MAP_LABELS, Post, Remedy, check_labelled, post_texts, unlabelled_error
from faim.data.targets import TaskSpec
from faim.decisions import decide
from faim.detector import Detector
from faim.eval.label_conflicts import decision_conflicts
from faim.eval.metrics import binary_metrics, ece_range, multiclass_metrics, multilabel_metrics
from faim.eval.plots import model_plot_names, plot_binary, plot_multiclass
from faim.eval.report import replace_written, write_report, written_files
from faim.eval.slices import slice_hint, slice_key, slice_metrics, slice_problem
from faim.inference import Predictions, predict
from faim.notices import warn
from faim.pooling import picture_groups, pooled
from faim.recipe.sections import EvalConfig
from faim.training.loaders import loader_posts, make_loader
from faim.wording import plural


def metric_function(
    task: TaskSpec, calibration: Calibration, config: EvalConfig
) -> Callable[[np.ndarray, np.ndarray], dict[str, float]]:
    """``(y_true, prob) -> metrics`` for one task, with the threshold of ``calibration`` and the eval settings."""
    if task.type == "binary":
        return partial(
            binary_metrics,
            threshold=calibration.thresholds[task.name],
            fixed_recall=config.fixed_recall,
            fixed_precision=config.fixed_precision,
            bins=config.calibration_bins,
        )
    if task.type == "multiclass":
        return partial(multiclass_metrics, labels=task.labels, bins=config.calibration_bins)
    return partial(multilabel_metrics, labels=task.labels, thresholds=[0.5] * len(task.labels))


def probabilities(calibration: Calibration, predictions: Predictions, task: TaskSpec) -> np.ndarray:
    """One task's calibrated probabilities over the predicted posts."""
    return calibration.probabilities(task, predictions.logits[task.name])


@dataclass
class Evaluated:
    """Predictions over the evaluated posts and the calibration that turns them into probabilities.

    ``groups`` (one id per post), when set, are the posts that show one picture: they share one verdict, so the ECE
    range a calibrated model would show draws their outcomes together (see ``ece_if_calibrated``).
    """

    predictions: Predictions
    calibration: Calibration
    groups: np.ndarray | None = None

    @classmethod
    def of(cls, detector: Detector, predictions: Predictions) -> Evaluated:
        """``predictions`` as ``detector``'s evaluation reads them: pooled by shared picture under its pooled
        calibration where it pools (as per post, uncalibrated, before it has one), per post under its calibration
        otherwise."""
        if detector.pooling_kind is None:
            return cls(predictions, detector.calibration)
        return cls.pooled(detector, predictions, detector.pooled or Calibration.identity(detector.tasks))

    @classmethod
    def pooled(
        cls, detector: Detector, predictions: Predictions, calibration: Calibration, corrections: bool = True
    ) -> Evaluated:
        """The predictions pooled by shared picture, with the calibration of pooled logits (and its weights of the
        crowd's corrections unless ``corrections`` is False)."""
        groups = picture_groups(predictions, detector.pool_by_image)
        weights = calibration.correction_weights if corrections else {}
        return cls(pooled(predictions, groups, weights), calibration, groups)


def check_finite(detector: Detector, predictions: Predictions, data_name: str, masked: str | None = None) -> None:
    """Refuse predictions of ``data_name``'s posts holding a NaN or infinite logit (with the element kind ``masked``
    masked out, where given): the model's own output, which no calibration or metric can read.

    Raises:
        ValueError: Naming the model, the task, how many posts and the first post's id.
    """
    for task in detector.tasks:
        logits = predictions.logits[task.name]
        broken = ~np.isfinite(logits.reshape(len(logits), -1)).all(axis=1)
        if broken.any():
            first = predictions.ids[int(np.argmax(broken))]
            how = f" with the {masked} masked out" if masked else ""
            raise ValueError(
                f"{detector.source}: the model itself scored {int(broken.sum())} of {plural(len(broken), 'post')} of "
                f"{data_name} NaN or infinite for the task {task.name!r}{how} (the first: post id={first!r}); its "
                "weights are broken, not the posts: train it again"
            )


def labelled(task: TaskSpec, evaluated: Evaluated, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(targets, calibrated probabilities)`` of one task over the labelled posts ``keep``."""
    target = evaluated.predictions.targets[task.name][keep]
    y = target if task.type == "multilabel" else target.astype(np.int64)
    return y, probabilities(evaluated.calibration, evaluated.predictions, task)[keep]


def task_metrics(task: TaskSpec, evaluated: Evaluated, keep: np.ndarray, config: EvalConfig) -> dict[str, float]:
    """One task's metrics over the labelled posts ``keep``; binary and multiclass tasks also get the ECE range a
    calibrated model would show on them (``faim.eval.metrics.ece_range``)."""
    y, prob = labelled(task, evaluated, keep)
    metrics = metric_function(task, evaluated.calibration, config)(y, prob)
    if task.type != "multilabel":
        groups = None if evaluated.groups is None else evaluated.groups[keep]
        metrics.update(ece_range(prob, groups, bins=config.calibration_bins))
    return metrics


def opposite_words(
    task: TaskSpec, texts: Sequence[str], keep: np.ndarray, y: np.ndarray, prob: np.ndarray, threshold: float
) -> dict[str, Any]:
    """The words a binary task's decisions at ``threshold`` and its labels read the opposite way
    (``faim.eval.label_conflicts.decision_conflicts``) over the labelled posts ``keep``: ``texts`` holds every
    post's text, ``y`` and ``prob`` the labelled posts' targets and probabilities."""
    read = [text for text, kept in zip(texts, keep) if kept]
    flagged = decide(task.type, prob, threshold)
    return decision_conflicts(read, flagged.tolist(), y.tolist(), task.labels[1])


def task_results(
    task: TaskSpec,
    main: Evaluated,
    ablations: dict[str, Evaluated],
    out_dir: Path,
    plot_name: str,
    config: EvalConfig,
    texts: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Metrics, slices, ablations and plots of one task, its plots' file names beginning ``plot_name``
    (``faim.eval.plots.plot_names``), and of a binary task whose labelled posts are all of one class, that class's
    label (``one_class``), of a multiclass task's classes, those no labelled post is of (``absent``); with ``texts``
    (each predicted post's text, in order), a binary task's words the model's decisions and the labels read the
    opposite way (``faim.eval.label_conflicts.decision_conflicts``)."""
    keep = task.labelled(main.predictions.targets[task.name])
    y, prob = labelled(task, main, keep)
    metric = metric_function(task, main.calibration, config)
    result: dict[str, Any] = {"type": task.type, "metrics": task_metrics(task, main, keep, config)}
    if task.type == "binary" and (label := task.sole_label(y)) is not None:  # AUROC and AP unmeasured
        result["one_class"] = label
    if task.type == "multiclass" and (absent := task.absent_labels(y)):
        result["absent"] = absent  # macro AUROC unmeasured
    if texts is not None and task.type == "binary":
        result["terms"] = opposite_words(task, texts, keep, y, prob, main.calibration.thresholds[task.name])
    field = config.slice
    if field:
        values = [slice_key(m.get(field)) for m, k in zip(main.predictions.meta, keep) if k]
        result["slices"] = slice_metrics(y, prob, values, metric)
    languages = [slice_key(m.get(LANGUAGE)) for m, k in zip(main.predictions.meta, keep) if k]
    if config.languages and len(set(languages) - {UNDETERMINED, None}) > 1:
        result["languages"] = slice_metrics(y, prob, languages, metric)
    if ablations:
        result["ablations"] = {name: task_metrics(task, ablated, keep, config) for name, ablated in ablations.items()}
    groups = None if main.groups is None else main.groups[keep]
    bins = config.calibration_bins
    if task.type == "binary":
        result["plots"] = [str(p) for p in plot_binary(y, prob, out_dir, plot_name, bins, groups)]
    elif task.type == "multiclass":
        result["plots"] = [str(p) for p in plot_multiclass(y, prob, task.labels, out_dir, plot_name, bins, groups)]
    return result


def evaluate_loader(
    detector: Detector,
    loader: DataLoader,
    out_dir: str | Path,
    data_name: str,
    config: EvalConfig | None = None,
    ablations: bool = True,
    texts: Sequence[str] | None = None,
    checked: bool = False,
    desc: str = "evaluating",
    also: Sequence[str] = (),
) -> dict[str, Any]:
    """Evaluate on every labelled post the loader yields; writes metrics.json, metrics.md and plots. The loader's
    posts are refused before the model reads one where they are known (``loader_posts``: one ``make_loader`` made)
    and none carries a label for any task (``check_labelled``); with ``checked``, they were refused already where
    that is so (as ``faim.data.preflight.refuse_unevaluable`` does) and are not checked again.

    ``config`` (default ``EvalConfig()``) is the recipe's ``eval:`` section: metrics at fixed recall and
    precision, calibration bins, the slice field, the modality ablations. A detector that pools by picture is
    measured on pooled logits under the pooled calibration, and its per-post figures are the ``without_pooling``
    ablation; where the pooled calibration weighs the crowd's corrections, ``without_crowd_corrections`` pools
    without them (under the same calibration). ``ablations=False`` skips the modality ablations
    (``eval.ablations``), one more pass over the posts each; the other two stay. ``texts``: each post's text, in
    the loader's order, for the words each binary task's decisions and its labels read the opposite way
    (``task_results``). ``desc`` names the progress bar of the pass over the posts (an ablation's bar names the kind
    it drops).

    Once the report is written, the files an earlier run recorded writing into ``out_dir`` that this one did not
    write again (the plots of a task it no longer reports) are removed and this run's recorded instead
    (``faim.eval.report.replace_written``); ``also`` names the files the caller writes there after (relative to
    ``out_dir``, with ``/``: ``faim.eval.robustness.REPORT_FILES``), which are kept and recorded too.

    Raises:
        ValueError: Before the model reads a post, when none carries a label for any task and the loader's posts are
            known, or when ``texts`` and the posts differ in number; when the model scores a post NaN or infinite
            (``check_finite``); once it has read them all, when none carries a label for any task (``unlabelled_error``,
            as ``check_labelled`` says it: a loader whose posts are known only from its batches).
    """
    posts = None if checked else loader_posts(loader)
    if posts is not None:
        check_labelled(posts, [task.name for task in detector.tasks], data_name)
    config = config or EvalConfig()
    if texts is not None and len(texts) != len(loader.dataset):
        raise ValueError(f"{data_name}: {len(texts)} texts for {len(loader.dataset)} evaluated posts")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    link = detector.pooling_kind
    predictions = predict(detector.model, loader, desc=desc, link_kind=link, source=detector.source)
    check_finite(detector, predictions, data_name)
    ablated = {}
    kinds = detector.model.kinds_with(link)  # a kind embedded but neither fused nor pooled by changes no score
    if ablations and config.ablations and len(kinds) > 1:
        for kind in kinds:
            ablated[f"without_{kind}"] = predict(
                detector.model, loader, drop=[kind], desc=f"without {kind}", link_kind=link
            )
            check_finite(detector, ablated[f"without_{kind}"], data_name, masked=kind)
    main = Evaluated.of(detector, predictions)
    ablations = {name: Evaluated.of(detector, p) for name, p in ablated.items()}
    if link is not None:
        ablations["without_pooling"] = Evaluated(predictions, detector.calibration, main.groups)
        if any(main.calibration.correction_weights.values()):
            ablations["without_crowd_corrections"] = Evaluated.pooled(detector, predictions, main.calibration, False)
    results: dict[str, Any] = {
        "model": detector.source,
        "data": data_name,
        "split": config.split,
        "pooled_by_image": detector.pool_by_image,
        "tasks": {},
    }
    field = config.slice
    if field and (problem := slice_problem(field, predictions.meta)):  # said once, whatever the tasks
        how = slice_hint(field, predictions.meta)
        warn(f"eval.slice: {problem}, so the report has no slices" + (f"; {how}" if how else ""))
        config = replace(config, slice=None)
    names = model_plot_names(detector.tasks)  # of every task plotted, as the same model names them each run
    for task in detector.tasks:
        if task.name in predictions.targets and task.labelled(predictions.targets[task.name]).any():
            plot_name = names.get(task.name, task.name)  # a multilabel task's: it has no plots
            results["tasks"][task.name] = task_results(task, main, ablations, out, plot_name, config, texts)
    if not results["tasks"]:  # a loader whose posts were not known before its batches were read
        raise unlabelled_error(data_name, [task.name for task in detector.tasks])
    write_report(results, out)
    replace_written(out, [*written_files(results, out), *also])
    return results


def evaluate(
    detector: Detector,
    posts: list[Post],
    out_dir: str | Path,
    data_name: str,
    config: EvalConfig | None = None,
    ablations: bool = True,
    words: bool = True,
    remedy: Remedy = MAP_LABELS,
    checked: bool = False,
    desc: str = "evaluating",
    also: Sequence[str] = (),
) -> dict[str, Any]:
    """Evaluate on a list of labelled posts (see ``evaluate_loader``, whose progress bar ``desc`` names and which keeps
    ``also`` in the folder's record), with the words each binary task's decisions and its labels read the opposite way
    unless ``words`` is False; with ``eval.languages`` (or ``eval.slice: lang``), posts without ``meta.lang`` are
    given the language they are written in first (``faim.data.language``). ``remedy`` ends the error where no post
    carries a label: by default how a file's labels are mapped to tasks, which a caller reading posts no mapping
    reaches (a recipe's split) replaces. With ``checked``, the posts were refused already where their evaluation
    could not finish (``Detector.refuse_unevaluable``) and are checked no further: copies of checked posts that change
    only their texts' letters or their pictures' pixels (``faim.perturb.perturb_posts``).

    Raises:
        ValueError: Before the model reads a post, when none carries a label for any task (ending in ``remedy``), or
            when some name a picture the model would read that is not there (``Detector.refuse_unevaluable``: how
            many, and the first by origin and id).
        PostError: Before the model reads a post, naming the first whose text or a comment the model reads holds
            half of a UTF-16 surrogate pair (``Detector.refuse_unevaluable``).
        ValueError: When the model scores a post NaN or infinite (``evaluate_loader``).
    """
    if not checked:
        detector.refuse_unevaluable(posts, data_name, remedy)
    config = config or EvalConfig()
    posts = with_languages(posts) if config.detects_languages else posts
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, config.batch_size, shuffle=False)
    texts = post_texts(posts) if words else None
    return evaluate_loader(
        detector, loader, out_dir, data_name, config, ablations, texts, checked=True, desc=desc, also=also
    )

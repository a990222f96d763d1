"""Calibrate a detector on validation data, and evaluate it: metrics, slices, unimodal ablations, plots.

This module connects models to the pure metric functions of ``faim.eval``; the results dictionary it
builds is the one ``faim.eval.report`` documents.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import DataLoader

from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.detector import Calibration, Detector
from faim.eval.calibration import apply_temperature, fit_scaling
from faim.eval.metrics import binary_metrics, ece_range, multiclass_metrics, multilabel_metrics
from faim.eval.plots import plot_binary, plot_multiclass
from faim.eval.report import write_report
from faim.eval.robustness import perturb_posts, perturbations_of, robustness_table
from faim.eval.slices import slice_metrics
from faim.eval.thresholds import choose_threshold
from faim.pooling import picture_groups, pooled
from faim.training.loaders import make_loader
from faim.training.predict import Predictions, predict

CONSTRAINED = ("precision@recall", "recall@precision")


def fit_calibration(detector: Detector, predictions: Predictions, calibration: Calibration) -> None:
    """Fit each task's temperature (and a binary task's logit shift with ``eval.logit_shift``) and binary decision
    threshold on validation predictions, into ``calibration``."""
    config = detector.eval_config
    for task in detector.tasks:
        target, logits = predictions.targets[task.name], predictions.logits[task.name]
        keep = task.labelled(target)
        target, logits = target[keep], logits[keep]
        if config.temperature and task.type != "multilabel" and len(target):
            calibration.temperatures[task.name], calibration.logit_shifts[task.name] = fit_scaling(
                logits, target.astype(np.int64), logit_shift=config.logit_shift
            )
        if task.type == "binary" and len(np.unique(target)) == 2:
            prob = apply_temperature(
                logits, calibration.temperatures[task.name], shift=calibration.logit_shifts[task.name]
            )
            goal = config.threshold_target if config.threshold_objective in CONSTRAINED else None
            calibration.thresholds[task.name] = choose_threshold(
                target.astype(np.int64), prob, config.threshold_objective, goal
            )


def calibrate(detector: Detector, loader: DataLoader) -> None:
    """Fit the detector's calibration on the validation loader, in place (see ``fit_calibration``); with
    ``eval.pool_by_image``, also the calibration of pooled logits (``detector.pooled``)."""
    link = detector.pooling_kind
    predictions = predict(detector.model, loader, desc="calibrating", link_kind=link)
    fit_calibration(detector, predictions, detector.calibration)
    if link:
        detector.pooled = Calibration.identity(detector.tasks)
        fit_calibration(detector, pooled(predictions, picture_groups(detector, predictions)), detector.pooled)


def metric_function(
    detector: Detector, task: TaskSpec, calibration: Calibration | None = None
) -> Callable[[np.ndarray, np.ndarray], dict[str, float]]:
    """``(y_true, prob) -> metrics`` for one task, with the threshold of ``calibration`` (default: the detector's
    per-post one) and the eval settings."""
    config = detector.eval_config
    calibration = calibration or detector.calibration
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
    logits = predictions.logits[task.name]
    if task.type == "multilabel":
        return 1.0 / (1.0 + np.exp(-logits))
    return apply_temperature(logits, calibration.temperatures[task.name], shift=calibration.logit_shifts[task.name])


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
    def pooled(cls, detector: Detector, predictions: Predictions, calibration: Calibration) -> Evaluated:
        """The predictions pooled by shared picture, with the calibration of pooled logits."""
        groups = picture_groups(detector, predictions)
        return cls(pooled(predictions, groups), calibration, groups)


def labelled(task: TaskSpec, evaluated: Evaluated, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(targets, calibrated probabilities)`` of one task over the labelled posts ``keep``."""
    target = evaluated.predictions.targets[task.name][keep]
    y = target if task.type == "multilabel" else target.astype(np.int64)
    return y, probabilities(evaluated.calibration, evaluated.predictions, task)[keep]


def task_metrics(detector: Detector, task: TaskSpec, evaluated: Evaluated, keep: np.ndarray) -> dict[str, float]:
    """One task's metrics over the labelled posts ``keep``; binary and multiclass tasks also get the ECE range a
    calibrated model would show on them (``faim.eval.metrics.ece_range``)."""
    y, prob = labelled(task, evaluated, keep)
    metrics = metric_function(detector, task, evaluated.calibration)(y, prob)
    if task.type != "multilabel":
        groups = None if evaluated.groups is None else evaluated.groups[keep]
        metrics.update(ece_range(prob, groups, bins=detector.eval_config.calibration_bins))
    return metrics


def task_results(
    detector: Detector, task: TaskSpec, main: Evaluated, ablations: dict[str, Evaluated], out_dir: Path
) -> dict[str, Any]:
    """Metrics, slices, ablations and plots of one task."""
    keep = task.labelled(main.predictions.targets[task.name])
    y, prob = labelled(task, main, keep)
    metric = metric_function(detector, task, main.calibration)
    result: dict[str, Any] = {"type": task.type, "metrics": task_metrics(detector, task, main, keep)}
    field = detector.eval_config.slice
    if field:
        values = np.array([str(m.get(field)) for m, k in zip(main.predictions.meta, keep) if k])
        result["slices"] = slice_metrics(y, prob, values, metric)
    if ablations:
        result["ablations"] = {name: task_metrics(detector, task, ablated, keep) for name, ablated in ablations.items()}
    groups = None if main.groups is None else main.groups[keep]
    bins = detector.eval_config.calibration_bins
    if task.type == "binary":
        result["plots"] = [str(p) for p in plot_binary(y, prob, out_dir, task.name, bins, groups)]
    elif task.type == "multiclass":
        result["plots"] = [str(p) for p in plot_multiclass(y, prob, task.labels, out_dir, task.name, bins, groups)]
    return result


def evaluate_loader(
    detector: Detector, loader: DataLoader, out_dir: str | Path, data_name: str, ablations: bool = True
) -> dict[str, Any]:
    """Evaluate on every labelled post the loader yields; writes metrics.json, metrics.md and plots.

    With ``eval.pool_by_image`` the figures are those of pooled logits under the pooled calibration, and the
    per-post figures are the ``without_pooling`` ablation. ``ablations=False`` skips the modality ablations
    (``eval.ablations``), one more pass over the posts each; ``without_pooling`` stays.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    link = detector.pooling_kind
    predictions = predict(detector.model, loader, desc="evaluating", link_kind=link)
    ablated = {}
    kinds = detector.model.kinds
    if ablations and detector.eval_config.ablations and len(kinds) > 1:
        ablated = {
            f"without_{kind}": predict(detector.model, loader, drop=[kind], desc=f"without {kind}", link_kind=link)
            for kind in kinds
        }
    if link is None:
        main = Evaluated(predictions, detector.calibration)
        ablations = {name: Evaluated(p, detector.calibration) for name, p in ablated.items()}
    else:
        calibration = detector.pooled or Calibration.identity(detector.tasks)  # not calibrated yet: as per post
        main = Evaluated.pooled(detector, predictions, calibration)
        ablations = {name: Evaluated.pooled(detector, p, calibration) for name, p in ablated.items()}
        ablations["without_pooling"] = Evaluated(predictions, detector.calibration, main.groups)
    results: dict[str, Any] = {
        "model": detector.source,
        "data": data_name,
        "split": detector.eval_config.split,
        "tasks": {},
    }
    for task in detector.tasks:
        if task.name in predictions.targets and task.labelled(predictions.targets[task.name]).any():
            results["tasks"][task.name] = task_results(detector, task, main, ablations, out)
    if not results["tasks"]:
        raise ValueError(
            f"{data_name}: no post carries a label for any task ({', '.join(t.name for t in detector.tasks)})"
        )
    write_report(results, out)
    return results


def evaluate(
    detector: Detector, posts: list[Post], out_dir: str | Path, data_name: str, ablations: bool = True
) -> dict[str, Any]:
    """Evaluate on a list of labelled posts (see ``evaluate_loader``)."""
    loader = make_loader(
        detector.model, detector.collator(with_targets=True), posts, detector.eval_config.batch_size, shuffle=False
    )
    return evaluate_loader(detector, loader, out_dir, data_name, ablations)


def perturbed_reports(
    detector: Detector, posts: list[Post], out_dir: str | Path, data_name: str, log: Callable[[str], None] | None = None
) -> dict[str, dict[str, Any]]:
    """Perturbation name → evaluation report of ``posts`` under it (``faim.eval.robustness.PERTURBATIONS``), for
    every perturbation of a modality one of the model's encoders reads; each report (without the modality
    ablations) is written to ``out_dir/robustness/<name>``. ``log`` is told each perturbation as it starts."""
    modalities = {detector.model.encoder_for(kind).modality for kind in detector.model.kinds}
    reports = {}
    for name in perturbations_of(modalities):
        if log is not None:
            log(f"evaluating under {name}")
        out = Path(out_dir) / "robustness" / name
        reports[name] = evaluate(detector, perturb_posts(posts, name), out, data_name, ablations=False)
    return reports


def robustness_report(
    detector: Detector, posts: list[Post], clean: dict[str, Any], out_dir: str | Path, data_name: str
) -> dict[str, dict[str, dict[str, float]]]:
    """Evaluate every perturbation that applies to the model's modalities (``perturbed_reports``); per task, each
    metric's drop from ``clean`` (the report of the same posts unperturbed).

    Writes ``robustness.json`` in ``out_dir`` (each perturbation's full report goes to a subfolder).
    """
    reports = perturbed_reports(detector, posts, out_dir, data_name)
    tables: dict[str, dict[str, dict[str, float]]] = {}
    for task, result in clean["tasks"].items():
        base = result["metrics"]
        metrics = ("auroc", "macro_f1", "accuracy") if result["type"] == "binary" else ("macro_f1", "accuracy")
        by_name = {name: report["tasks"][task]["metrics"] for name, report in reports.items()}
        tables[task] = robustness_table(base, by_name, metrics)
    (Path(out_dir) / "robustness.json").write_text(json.dumps(tables, indent=2, default=str), encoding="utf-8")
    return tables


def format_robustness(tables: dict[str, dict[str, dict[str, float]]]) -> str:
    """A console table of each perturbation's metrics and drops, per task."""
    lines = []
    for task, table in tables.items():
        lines.append(f"\n{task}: metric under perturbation (drop from clean)")
        for name, values in table.items():
            cells = [f"{k} {v:.4f} ({values[k + '_drop']:+.4f})" for k, v in values.items() if not k.endswith("_drop")]
            lines.append(f"  {name:18s} " + "  ".join(cells))
    return "\n".join(lines)

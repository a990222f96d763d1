"""Robustness reports: evaluate a detector on its posts perturbed the way evaders do (``faim.perturb``), and each
metric's drop from the clean posts.

Typical use::

    clean = evaluate(detector, posts, "out", "dev", config)
    tables = robustness_report(detector, posts, clean, "out", "dev", config)   # per task: metrics and drops
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from faim.data.language import with_languages
from faim.data.post import Post
from faim.detector import Detector
from faim.eval.evaluate import evaluate
from faim.eval.report import WRITTEN, json_text, replace_written, written_files
from faim.eval.tables import format_value, with_change
from faim.folders import write_text_whole
from faim.notices import warn
from faim.perturb import perturb_posts, perturbations_of
from faim.recipe.sections import EvalConfig
from faim.wording import plural

REPORT_FILES = ("robustness.json", f"robustness/{WRITTEN}")
"""What ``robustness_report`` writes into an evaluation's folder: its tables, and the record of the reports it writes
into ``robustness/`` (``perturbed_reports``), which stands for them in the folder's record."""

METRICS: dict[str, tuple[str, ...]] = {
    "binary": ("auroc", "macro_f1", "accuracy"),
    "multiclass": ("accuracy", "macro_f1", "macro_auroc"),
    "multilabel": ("macro_auroc", "macro_average_precision", "macro_f1"),
}
"""The metrics ``robustness_report`` gives under each perturbation, per task type (those its metrics function
reports: a multilabel task has no accuracy)."""


def robustness_table(
    base: dict[str, float], perturbed: dict[str, dict[str, float]], metrics: Sequence[str] = ("auroc", "macro_f1")
) -> dict[str, dict[str, float]]:
    """Per perturbation, each metric's value and its drop from the clean data.

    Args:
        base: Metrics on the clean posts (e.g. ``results["tasks"][task]["metrics"]``).
        perturbed: Perturbation name to its metrics on the perturbed posts.
        metrics: Metric names to report; one missing from either dict is NaN.

    Returns:
        ``{name: {metric: value, f"{metric}_drop": base - value, ...}}``: a positive drop means the perturbation
        hurt (for metrics where higher is better).
    """
    table: dict[str, dict[str, float]] = {}
    for name, values in perturbed.items():
        row: dict[str, float] = {}
        for metric in metrics:
            value = float(values.get(metric, math.nan))
            row[metric] = value
            row[f"{metric}_drop"] = float(base.get(metric, math.nan)) - value
        table[name] = row
    return table


def perturbed_reports(
    detector: Detector,
    posts: list[Post],
    out_dir: str | Path,
    data_name: str,
    config: EvalConfig | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Perturbation name → evaluation report of ``posts`` under it (``faim.perturb.PERTURBATIONS``), for every
    perturbation of a modality the model's heads read (an encoder's of a fused kind, or of the kind posts are pooled
    by: ``WholePostModel.kinds_with``, as the modality ablations mask); each report (without the modality ablations)
    is written to ``out_dir/robustness/<name>``, naming its data ``"<data_name>, perturbed by <name>"``, without the
    words the model and the labels read the opposite way (a perturbation changes the words themselves). With
    ``eval.languages`` (or ``eval.slice: lang``), each post is given the language it is written in before it is
    perturbed, so its perturbed forms are counted under that language (swapped letters or digits would read as
    another). Each evaluation's progress bar names its perturbation; ``log`` is told each as it starts. A perturbation
    that changes none of the posts (the letters leetspeak and homoglyphs replace are Latin, which posts of other
    scripts do not hold) is warned of, as its figures are the clean posts' and no measure of how the model withstands
    it.

    Once every report is written, the files an earlier run recorded writing into ``robustness/`` (``WRITTEN``) that
    this run did not write again (a perturbation it no longer applies) are removed (``replace_written``), and this
    run's files are recorded instead; a file no run of faim wrote there stays, and a run that fails removes nothing.

    The posts are refused once, before any is perturbed, where their evaluation could not finish
    (``Detector.refuse_unevaluable``): a perturbation keeps their ids and labels, a text that is text stays text, and
    a picture that is there stays there (as its perturbed bytes, or as it was where it does not decode).

    Raises:
        ValueError, PostError: As ``faim.eval.evaluate.evaluate`` refuses the posts, before the model reads any.

    Warns:
        FaimWarning: Naming the data and each perturbation that changes none of the posts.
    """
    detector.refuse_unevaluable(posts, data_name)
    kinds = detector.model.kinds_with(detector.pooling_kind)  # a kind neither fused nor pooled by changes no score
    modalities = {detector.model.encoder_for(kind).modality for kind in kinds}
    posts = with_languages(posts) if (config or EvalConfig()).detects_languages else posts
    folder = Path(out_dir) / "robustness"
    reports, written = {}, []
    for name in perturbations_of(modalities):
        if log is not None:
            log(f"evaluating under {name}")
        perturbed = perturb_posts(posts, name)
        if perturbed == posts:
            warn(
                f"{data_name}: {name} changes none of the {plural(len(posts), 'post')} (it edits what none of them "
                "holds, as the Latin letters leetspeak and homoglyphs replace in posts of other scripts): its figures "
                "are the clean posts', no measure of how the model withstands it"
            )
        data, desc = f"{data_name}, perturbed by {name}", f"evaluating under {name}"
        reports[name] = evaluate(
            detector, perturbed, folder / name, data, config, ablations=False, words=False, checked=True, desc=desc
        )
        written += [f"{name}/{file}" for file in written_files(reports[name], folder / name)]
    replace_written(folder, written)
    return reports


def robustness_report(
    detector: Detector,
    posts: list[Post],
    clean: dict[str, Any],
    out_dir: str | Path,
    data_name: str,
    config: EvalConfig | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """Evaluate every perturbation that applies to the model's modalities (``perturbed_reports``); per task, each
    metric of its type (``METRICS``) and its drop from ``clean`` (the report of the same posts unperturbed).

    Writes ``robustness.json`` in ``out_dir``, an undefined figure (NaN) as ``null`` as ``metrics.json`` writes it
    (each perturbation's full report goes to a subfolder).
    """
    reports = perturbed_reports(detector, posts, out_dir, data_name, config)
    tables: dict[str, dict[str, dict[str, float]]] = {}
    for task, result in clean["tasks"].items():
        base = result["metrics"]
        by_name = {name: report["tasks"][task]["metrics"] for name, report in reports.items()}
        tables[task] = robustness_table(base, by_name, METRICS[result["type"]])
    write_text_whole(Path(out_dir) / REPORT_FILES[0], json_text(tables))
    return tables


def format_robustness(tables: dict[str, dict[str, dict[str, float]]]) -> str:
    """A console table of each perturbation's metrics and drops, per task; an undefined figure is ``n/a`` and its drop
    left out, as the evaluation's tables show it."""
    lines = []
    for task, table in tables.items():
        lines.append(f"\n{task}: metric under perturbation (drop from clean)")
        for name, values in table.items():
            cells = [
                f"{k} {with_change(format_value(v), values[k + '_drop'])}"
                for k, v in values.items()
                if not k.endswith("_drop")
            ]
            lines.append(f"  {name:18s} " + "  ".join(cells))
    return "\n".join(lines)

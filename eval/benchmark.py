"""The benchmark harness: every shipped recipe on its validation split, next to reference baselines.

    python -m faim.eval.benchmark [--only NAME ...] [--reuse] [--merge] [--out eval/RESULTS.md] [--workers N]
                                  [--seeds N]

For each recipe (default: every shipped recipe whose data source is a benchmark dataset, see
``faim.eval.benchmark_datasets.DATASETS``): train it with ``faim train`` (``--reuse``: take the recorded run of the
same resolved recipe instead and evaluate its saved model again), take the validation metrics of its evaluation
report and the training wall time, and measure posts/s scoring the validation posts through ``faim score``'s engine.
Once per distinct dataset + label view: majority class, TF-IDF + logistic regression and frozen all-MiniLM-L6-v2 +
logistic regression on the same train/validation posts. A hate recipe validating on several datasets at once
(``hate_text_general``) is measured by transfer (``faim.eval.benchmark_transfer``; each fold trained with
``--seeds`` seeds), and its saved model on the
validation posts of each of those datasets the benchmark knows, in that dataset's tables (its calibration and
threshold stay those it chose on all of them). For a dataset whose validation split holds out groups
(``Dataset.holdout_by``: VMU's events), each recipe is also trained without each group in turn and measured on it
(``faim.eval.trained_holdout``), and its frozen embeddings probed the same way (``faim.eval.group_holdout``). For a
dataset with shifts (``Dataset.shifts``: TweetEval's ETHOS), each recipe and baseline is also measured, as trained,
on every post of the other dataset. Writes the Markdown tables (``--out``)
and the same figures as ``results.json`` next to it, with published test-split figures in their own tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

import faim
from faim.assembly import build_source, task_specs
from faim.cli.common import output_file, positive_integer
from faim.data.post import Post
from faim.eval.benchmark_baselines import Embedder, run_baselines
from faim.eval.benchmark_datasets import (
    DATASETS,
    Dataset,
    View,
    benchmark_type,
    dataset_for,
    member_views,
    published_applies,
    recipe_views,
)
from faim.eval.benchmark_languages import run_languages
from faim.eval.benchmark_merge import merge_results, read_results
from faim.eval.benchmark_report import render
from faim.eval.benchmark_runs import (
    RecipeRun,
    perturbed_evaluations,
    scoring_throughput,
    shifted_evaluations,
    train_or_reuse,
)
from faim.eval.benchmark_transfer import SEEDS, check_seeds, is_hate_recipe, run_transfer
from faim.eval.group_holdout import probe_recipe
from faim.eval.report import json_text
from faim.eval.trained_holdout import plan_folds, trained_holdout
from faim.folders import write_text_whole
from faim.perturb import perturbations_of
from faim.recipe import Recipe
from faim.recipe.compare import plain
from faim.recipe.loader import shipped_recipes
from faim.scoring.runner import available_cores
from faim.wording import plural

Log = Callable[[str], None]

TEXT_PERTURBATIONS = perturbations_of({"text"})
"""The perturbations the text baselines are measured under."""


def log_line(message: str) -> None:
    print(message, flush=True)


def select(names: Sequence[str] | None, log: Log) -> tuple[list[Recipe], list[Recipe], list[dict[str, str]]]:
    """The recipes to benchmark on their validation split, the hate recipes validating on several datasets at once
    (measured by transfer, and on the validation posts of each of those datasets the benchmark knows), and the
    shipped ones left out (they validate on no benchmark dataset).

    Raises:
        ValueError: When a recipe named in ``names`` (a shipped name or a file) is neither.
    """
    recipes, several, skipped = [], [], []
    for name in names or shipped_recipes():
        recipe = Recipe.load(name)
        if benchmark_type(recipe.data) is None and is_hate_recipe(recipe):
            log(f"{name}: validates on several hate datasets at once; measured by transfer and on each one's posts")
            several.append(recipe)
        elif names or benchmark_type(recipe.data) is not None:
            dataset_for(recipe)
            recipes.append(recipe)
        else:
            reason = (
                f"data source {recipe.data['type']!r} validates on no benchmark dataset (known: {', '.join(DATASETS)})"
            )
            log(f"skipping {name}: {reason}")
            skipped.append({"recipe": name, "reason": reason})
    return recipes, several, skipped


class Posts:
    """The train and validation posts of each data section, read once through the recipe's own source."""

    def __init__(self) -> None:
        self.loaded: dict[tuple[str, str], tuple[list[Post], str]] = {}

    def get(self, data: dict[str, Any], split: str) -> tuple[list[Post], str]:
        """``(posts, description of the split)``."""
        key = (json.dumps(data, sort_keys=True), split)
        if key not in self.loaded:
            source = build_source(data)
            self.loaded[key] = (source.posts(split), source.describe(split))
        return self.loaded[key]

    def every(self, data: dict[str, Any]) -> tuple[list[Post], str]:
        """``(posts of every split, descriptions of the splits)``."""
        splits = build_source(data).splits()
        parts = [self.get(data, split) for split in splits]
        return [post for posts, _ in parts for post in posts], "; ".join(description for _, description in parts)

    def shifted(self, dataset: Dataset, task: str) -> dict[str, tuple[list[Post], str]]:
        """Shift name → ``(posts, description)`` of each of the dataset's shifts, labelled under ``task``."""
        return {shift.name: self.every(shift.data | {"task": task}) for shift in dataset.shifts}


def recipe_rows(
    recipe: Recipe,
    dataset: Dataset,
    run: RecipeRun,
    rates: dict[bool, list[float]],
    data: str,
    perturbed: dict[str, dict[str, Any]] | None = None,
    shifted: dict[str, dict[str, dict[str, Any]]] | None = None,
    views: list[View] | None = None,
) -> list[dict[str, Any]]:
    """One row per task of a trained recipe, from its evaluation report; a recipe that pools across posts sharing
    a picture (``eval.pool_by_image``) gets a second row per task, its per-post figures (``pooled`` tells them apart).
    ``rates``: posts per second of each timed scoring run per post (``False``) and, for a pooling recipe, pooled
    (``True``); a row's ``posts_per_second`` is the fastest, ``posts_per_second_runs`` lists them all.
    ``perturbed``: perturbation name → the report of the same model on the perturbed validation posts; each row's
    ``robustness`` holds its metrics under each. ``shifted``: task name → shift name → the report of the same model
    on that other dataset (``Dataset.shifts``); each row's ``shifted`` holds its metrics there. ``views``: the
    views the rows stand for (default: ``recipe_views``; a recipe validating on several datasets, its
    ``member_views``).

    Raises:
        ValueError: When a report lacks a task or the dataset's headline metric.
    """
    rows = []
    for view in recipe_views(recipe) if views is None else views:
        under = {name: report_variants(recipe, dataset, view, report) for name, report in (perturbed or {}).items()}
        elsewhere = {
            name: report_variants(recipe, dataset, view, report)
            for name, report in (shifted or {}).get(view.task.name, {}).items()
        }
        for number, (label, metrics, pooled) in enumerate(report_variants(recipe, dataset, view, run.report)):
            rows.append(
                {
                    "name": Path(recipe.source).stem,
                    "kind": "recipe",
                    "view": label,
                    "task": view.task.name,
                    "data": data,
                    "split": "validation",
                    "n": metrics["n"],
                    "value": metrics[dataset.metric],
                    "ece": metrics.get("ece"),
                    "train_seconds": run.train_seconds,
                    "posts_encoded": run.posts_encoded,
                    "posts_per_second": max(rates[pooled]),
                    "posts_per_second_runs": rates[pooled],
                    "reused": run.reused,
                    "trained_at": run.trained_at,
                    "pooled": pooled,
                    "metrics": metrics,
                    "robustness": {name: variants[number][1] for name, variants in under.items()},
                    "shifted": {name: variants[number][1] for name, variants in elsewhere.items()},
                    "ablations": {} if recipe.eval.pool_by_image else modality_ablations(run.report, view.task.name),
                }
            )
    return rows


def modality_ablations(report: dict[str, Any], task: str) -> dict[str, dict[str, Any]]:
    """A task's figures with each element kind masked out (``without_<kind>``) in an evaluation report."""
    ablations = report["tasks"][task].get("ablations", {})
    return {
        name: metrics
        for name, metrics in ablations.items()
        if name.startswith("without_") and name not in ("without_pooling", "without_crowd_corrections")
    }


def report_variants(
    recipe: Recipe, dataset: Dataset, view: View, report: dict[str, Any]
) -> list[tuple[str, dict[str, Any], bool]]:
    """``(data view label, metrics, pooled)`` of one view's task in an evaluation report: its metrics, or for a
    recipe that pools by picture, the pooled metrics and then the per-post ones (``without_pooling``).

    Raises:
        ValueError: When the report lacks the task or the dataset's headline metric.
    """
    task = report["tasks"].get(view.task.name)
    if task is None or dataset.metric not in task["metrics"]:
        raise ValueError(f"{report.get('model')}: the evaluation report has no {dataset.metric} for {view.task.name!r}")
    if recipe.eval.pool_by_image is None:
        return [(view.label, task["metrics"], False)]
    return [
        (f"{view.label}; pooled by shared picture", task["metrics"], True),
        (f"{view.label}; per post, no pooling", task["ablations"]["without_pooling"], False),
    ]


def run_benchmark(
    names: Sequence[str] | None,
    reuse: bool = False,
    workers: int | None = None,
    embedder: Embedder | None = None,
    command: str = "",
    log: Log = log_line,
    robustness: bool = True,
    transfer: bool = True,
    seeds: int = SEEDS,
) -> dict[str, Any]:
    """Benchmark the named recipes (default: the shipped ones) and the baselines of their views.

    Args:
        names: Shipped recipe names or recipe files; ``None``: every shipped recipe of a benchmark dataset.
        reuse: Reuse recorded runs of the same resolved recipes instead of training again.
        workers: Scoring worker processes (``None``: all cores; 1: this process only).
        embedder: The frozen text encoder of the embedding baseline (default: all-MiniLM-L6-v2).
        command: The command line, recorded in the results.
        log: Told each step as it starts or ends.
        robustness: Also measure each recipe under every evasion-style perturbation of a modality it reads, and
            the text-reading baselines under the text ones (``faim.perturb.PERTURBATIONS``).
        transfer: Also train the hate recipes on each dataset of the task alone and on all but one, and measure
            them on the datasets they left out (``faim.eval.benchmark_transfer``), and measure them as shipped on
            labelled posts no recipe trains on, in other languages and from other sources
            (``faim.eval.benchmark_languages``).
        seeds: Seeds each transfer fold of a recipe is trained with (the tables give their mean and range).

    Returns:
        The results dict ``faim.eval.benchmark_report`` documents.

    Raises:
        ValueError: When ``seeds`` is below 1 (before any training).
    """
    check_seeds(seeds)
    embedder = embedder or Embedder()
    where = machine()  # before the run: the load average says how busy the machine was
    recipes, several, skipped = select(names, log)
    sections: dict[str, dict[str, Any]] = {}
    views: dict[View, dict[str, Any]] = {}
    trained: dict[str, RecipeRun] = {}  # recipe file → its run, measured again beyond its datasets
    posts = Posts()
    for recipe in recipes:  # read the other datasets now, so that a missing one fails before any training
        for view in recipe_views(recipe):
            posts.shifted(dataset_for(recipe), view.task.name)
    for number, recipe in enumerate(recipes, 1):
        dataset = dataset_for(recipe)
        log(f"[{number}/{len(recipes)}] {Path(recipe.source).stem}: {dataset.title}")
        run = trained[recipe.source] = train_or_reuse(recipe, reuse, log)
        validation, data = posts.get(recipe.data, "validation")
        rates, errors = timed_scoring(run.model_dir, validation, workers, recipe.eval.pool_by_image is not None, log)
        section = sections.setdefault(benchmark_type(recipe.data), new_section())
        perturbed = perturbed_evaluations(run, validation, data, log) if robustness else {}
        shifted = {}
        if dataset.shifts:
            for view in recipe_views(recipe):
                shifted[view.task.name] = shifted_evaluations(run, posts.shifted(dataset, view.task.name), log)
        rows = recipe_rows(recipe, dataset, run, rates, data, perturbed, shifted)
        section["rows"] += logged_rows(rows, errors, dataset, log)
        if dataset.holdout_by:
            section["holdouts"].append(holdout_entry(recipe, dataset, reuse, log))
        for view in recipe_views(recipe):
            if view not in views:
                views[view] = recipe.data
                section["views"].append(view)
    for number, recipe in enumerate(several, 1):
        members = member_views(recipe)
        if not members:
            continue
        kinds = [tasks[0].source_type for _, tasks in members]
        titles = ", ".join(DATASETS[kind].title for kind in kinds)
        log(f"[{number}/{len(several)}] {Path(recipe.source).stem}: on the validation posts of {titles}")
        run = trained[recipe.source] = train_or_reuse(recipe, reuse, log)
        pools = recipe.eval.pool_by_image is not None
        for kind, (member, member_tasks) in zip(kinds, members):
            validation, data = posts.get(member, "validation")
            measured = replace(run, report=shifted_evaluations(run, {kind: (validation, data)}, log, "members")[kind])
            rates, errors = timed_scoring(run.model_dir, validation, workers, pools, log)
            perturbed = perturbed_evaluations(measured, validation, data, log, f"members/{kind}") if robustness else {}
            rows = recipe_rows(recipe, DATASETS[kind], measured, rates, data, perturbed, views=member_tasks)
            rows = [row | {"several_datasets": True} for row in rows]
            sections.setdefault(kind, new_section())["rows"] += logged_rows(rows, errors, DATASETS[kind], log)
    for view, data_section in views.items():
        dataset = DATASETS[view.source_type]
        log(f"baselines: {dataset.title} [{view.label}], task {view.task.name}")
        train, _ = posts.get(data_section, "train")
        validation, data = posts.get(data_section, "validation")
        perturbations = TEXT_PERTURBATIONS if robustness else ()
        shifted = {name: shift_posts for name, (shift_posts, _) in posts.shifted(dataset, view.task.name).items()}
        for result in run_baselines(view, train, validation, embedder, log, perturbations, shifted):
            value = result.metrics[dataset.metric]
            log(f"  {result.name}: {dataset.metric} {value:.4f}, ECE {result.metrics['ece']:.4f}")
            sections[view.source_type]["baselines"].append(
                {
                    "name": result.name,
                    "kind": "baseline",
                    "view": view.label,
                    "task": view.task.name,
                    "data": data,
                    "split": "validation",
                    "n": result.metrics["n"],
                    "value": value,
                    "ece": result.metrics["ece"],
                    "train_seconds": result.fit_seconds,
                    "posts_per_second": None,
                    "metrics": result.metrics,
                    "robustness": result.robustness,
                    "shifted": result.shifted,
                }
            )
    hate = [recipe for recipe in recipes if is_hate_recipe(recipe)] + several
    return {
        "command": command,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": where,
        "transfer": run_transfer(hate, reuse, embedder, log, seeds=seeds) if transfer and hate else None,
        "languages": run_languages(hate, reuse, log, runs=trained) if transfer and hate else None,
        "datasets": [dataset_results(kind, section) for kind, section in sections.items()],
        "skipped": skipped,
        "recipes": {Path(recipe.source).stem: plain(recipe) for recipe in recipes + several},
    }


def new_section() -> dict[str, list[Any]]:
    """A dataset's section of the results while the benchmark fills it."""
    return {"rows": [], "baselines": [], "views": [], "holdouts": []}


def timed_scoring(
    model_dir: Path, posts: list[Post], workers: int | None, pools: bool, log: Log
) -> tuple[dict[bool, list[float]], int]:
    """``(rates, failed rows)`` of scoring ``posts`` with the saved model through ``faim score``'s engine
    (``scoring_throughput``): posts per second of each timed run per post (``False``) and, where the model
    ``pools`` by shared picture, pooled (``True``); the most rows any run failed."""
    rates, errors = {}, 0
    for pooled in (False, True) if pools else (False,):
        timed = scoring_throughput(model_dir, posts, workers, pool_by_image=pooled)
        rates[pooled] = [summary.rows_per_second for summary in timed]
        failed = max(sum(summary.errors.values()) for summary in timed)
        errors = max(errors, failed)
        how = "pooled by shared picture" if pooled else "per post"
        log(f"  scored {plural(timed[0].rows, 'validation post')} {how}, {plural(len(timed), 'time')}: "
            f"{', '.join(f'{rate:.1f}' for rate in rates[pooled])} posts/s "
            f"({plural(failed, 'row')} failed)")  # fmt: skip
    return rates, errors


def logged_rows(rows: list[dict[str, Any]], errors: int, dataset: Dataset, log: Log) -> list[dict[str, Any]]:
    """A recipe's rows with the rows its scoring failed, each told to ``log``."""
    rows = [row | {"scoring_failed_rows": errors} for row in rows]
    for row in rows:
        log(f"  {row['task']}: {dataset.metric} {row['value']:.4f}, ECE {row['ece']:.4f}, trained in "
            f"{row['train_seconds']:.1f} s{' (reused)' if row['reused'] else ''}")  # fmt: skip
    return rows


def holdout_entry(recipe: Recipe, dataset: Dataset, reuse: bool, log: Log) -> dict[str, Any]:
    """The recipe's first task over ``dataset.holdout_by`` as a results entry: trained without each group in turn
    (``faim.eval.trained_holdout``; ``reuse`` as ``train_or_reuse``) and the group-holdout probe of its frozen
    embeddings (``faim.eval.group_holdout``).

    Raises:
        ValueError: As ``faim.eval.group_holdout.probe_inputs`` (an encoder that trains, a post without a group) and
            ``faim.eval.trained_holdout.plan_folds``, before anything trains.
    """
    group_by = dataset.holdout_by or ""
    task = task_specs(recipe.model)[0]
    metric = dataset.metric
    kinds, result = probe_recipe(recipe, task, group_by)  # first: cheap, and what it refuses stops before training
    log(f"  probe of frozen {', '.join(kinds)} embeddings: {metric} {result.recipe_split[metric]:.4f} on the recipe "
        f"split, {result.leave_one_out[metric]:.4f} with each {group_by} held out")  # fmt: skip
    folds = plan_folds(recipe, task, group_by)
    every_post = None
    if dataset.every_post:
        every_post = plan_folds(recipe, task, group_by, measured=recipe.data_section | dataset.every_post)
    runs: dict[str, Path] = {}
    trained = trained_holdout(folds, task, reuse=reuse, log=lambda line: log(f"  {line}"), trained=runs)
    log(f"  trained without each {group_by}: {metric} {trained.overall[metric]:.4f} over the held-out posts")
    entry = {"trained": {"overall": trained.overall, "per_group": trained.per_group}}
    if every_post:  # the runs just trained measure again; a group the recipe reads no post of trains one more
        on_every = trained_holdout(every_post, task, reuse=reuse, log=lambda line: log(f"  {line}"), trained=runs)
        log(f"  on every post of each held-out {group_by}: {metric} {on_every.overall[metric]:.4f}")
        entry["trained_every_post"] = {"overall": on_every.overall, "per_group": on_every.per_group}
    return {
        "name": Path(recipe.source).stem,
        "task": task.name,
        "group_by": group_by,
        "reads": list(kinds),
        "pooled": recipe.eval.pool_by_image is not None,
        "crowd_corrections": recipe.eval.crowd_corrections is not None,
        "recipe_split": result.recipe_split,
        "leave_one_out": result.leave_one_out,
        "per_group": result.per_group,
    } | entry


def dataset_results(kind: str, section: dict[str, Any]) -> dict[str, Any]:
    """One dataset's entry of the results: its rows, the published figures that concern its views and the other
    datasets its rows were also measured on."""
    dataset = DATASETS[kind]
    concerned = any(published_applies(dataset, view) for view in section["views"])
    view = ", ".join(f"{key}={value}" for key, value in dataset.published_view.items()) or "every view"
    return {
        "source": kind,
        "title": dataset.title,
        "metric": dataset.metric,
        "rows": section["rows"] + section["baselines"],
        "holdouts": section["holdouts"],
        "published": [asdict(item) for item in dataset.published] if concerned else [],
        "published_view": view,
        "shifts": [asdict(shift) for shift in dataset.shifts],
    }


def machine() -> dict[str, Any]:
    """Where the benchmark ran."""
    return {
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": available_cores(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "faim": faim.__version__,
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def cpu_model() -> str:
    return cpuinfo_field("model name") or platform.processor() or "unknown CPU"


def cpu_flags() -> set[str]:
    """The instruction-set flags the CPU reports (Linux's ``/proc/cpuinfo``; empty elsewhere)."""
    return set(cpuinfo_field("flags").split())


def cpuinfo_field(name: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The first CPU's ``name`` field in ``cpuinfo``, or ``""`` where there is none."""
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    return ""


def write_results(results: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """Write the Markdown to ``out`` and the JSON to ``results.json`` in the same folder, each whole or not at all
    (``write_text_whole``: a run stopped while writing leaves the earlier file as it was)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    json_path = out.parent / "results.json"
    markdown = render(results)
    write_text_whole(json_path, json_text(results))
    write_text_whole(out, markdown)
    return out, json_path


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m faim.eval.benchmark", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="recipes to benchmark: shipped names or files")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="reuse recorded runs of the same resolved recipes (their models are evaluated again, not retrained)",
    )
    parser.add_argument(
        "--out", type=output_file, default="eval/RESULTS.md", help="Markdown output (default: %(default)s)"
    )
    parser.add_argument(
        "--workers", type=positive_integer, default=None, help="scoring worker processes (default: all cores)"
    )
    parser.add_argument(
        "--no-robustness",
        dest="robustness",
        action="store_false",
        help="skip the evaluations under evasion-style perturbations (each recipe and text baseline is otherwise "
        "measured again on the validation posts under each perturbation of a modality it reads)",
    )
    parser.add_argument(
        "--no-transfer",
        dest="transfer",
        action="store_false",
        help="skip training the hate recipes on each other dataset of the task (faim.eval.benchmark_transfer) and "
        "measuring them on labelled posts no recipe trains on: other languages, other sources "
        "(faim.eval.benchmark_languages)",
    )
    parser.add_argument(
        "--seeds",
        type=positive_integer,
        default=SEEDS,
        help="seeds each transfer fold of a hate recipe is trained with, the recipe's own and the next ones; the "
        "transfer tables give the mean over them and the lowest and highest seed's figure (default: %(default)s)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep what the results.json beside --out holds and this run does not measure (other recipes, datasets "
        "and sections), marked with that run's time, but not the figures of a recipe that no longer ships or has "
        "changed since; with --only, updates the file instead of replacing it",
    )
    args = parser.parse_args(argv)
    command = shlex.join(["python", "-m", "faim.eval.benchmark", *argv])
    if args.merge:  # before the hours of the run: what it merges into must be readable
        try:
            earlier = read_results(args.out.parent / "results.json")
            shipped = {name: plain(Recipe.load(name)) for name in shipped_recipes()}
        except (ValueError, OSError) as error:
            print(f"benchmark: error: --merge: {error}", file=sys.stderr)
            return 2
    try:
        results = run_benchmark(
            args.only,
            args.reuse,
            args.workers,
            command=command,
            robustness=args.robustness,
            transfer=args.transfer,
            seeds=args.seeds,
        )
    except (ValueError, KeyError, OSError) as error:
        print(f"benchmark: error: {error}", file=sys.stderr)
        return 2
    if args.merge:
        results = merge_results(results, earlier, shipped, log=print)
    markdown, json_path = write_results(results, args.out)
    print(f"wrote {markdown} and {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

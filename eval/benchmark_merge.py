"""Keeping what an earlier benchmark run measured and this one did not (``python -m faim.eval.benchmark
--merge``), so that a run of a few recipes (``--only``) updates ``RESULTS.md`` instead of replacing it.

Whatever this run measured replaces the earlier figures of the same recipe; a recipe row, a baseline row of a view
this run did not measure, a group-holdout entry, a whole dataset, the transfer and language sections that only the
earlier run has, or the rows of those sections of recipes this run did not measure, are kept as they were and
marked with the time that run was generated (``earlier_run``), which the Markdown shows beside them. Earlier rows of
a recipe that no longer ships (renamed or removed, or a recipe file given to ``--only`` rather than a shipped name)
are dropped, from every section: their figures describe no recipe a user can train from this repository. So are
the earlier rows of a recipe that resolves otherwise now than the earlier run recorded (``recipes``: a data, model,
training or evaluation field changed since; a run from before runs recorded their recipes is taken as it is). A row
measured again without perturbations (``--no-robustness``) keeps the earlier run's figures under them, with that
run's clean figure they are compared with (``robustness_kept``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from faim.recipe import Recipe, RecipeError
from faim.recipe.compare import changed_fields, describe_changes, plain

RESULTS_KEYS = ("command", "generated_at", "datasets")
"""What every run's results hold and ``merge_results`` reads of an earlier one, beside ``DATASET_KEYS``."""
DATASET_KEYS = ("source", "rows", "holdouts")
"""What each dataset of a run's results holds and ``merge_results`` reads of an earlier one."""


def read_results(path: Path) -> dict[str, Any]:
    """An earlier run's ``results.json``, read whole before anything is measured, so that a file ``merge_results``
    cannot take stops ``--merge`` before the run rather than after it.

    Raises:
        FileNotFoundError: Naming ``path``, where there is no such file.
        ValueError: Naming ``path`` and what is wrong: not JSON (such as a file cut short while it was written), not
            a JSON object, or without a key every run's results hold (``RESULTS_KEYS``, ``DATASET_KEYS``).
    """
    if not path.is_file():
        raise FileNotFoundError(f"{path}: does not exist; run without --merge to write it")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(
            f"{path}: is not JSON ({error}); a run stopped while writing it leaves it cut short: restore the earlier "
            "file (eval/results.json is in version control) or run without --merge"
        ) from None
    if not isinstance(results, dict):
        raise ValueError(f"{path}: is not a JSON object but {type(results).__name__}; expected a benchmark's results")
    missing = [key for key in RESULTS_KEYS if key not in results]
    if missing:
        raise ValueError(f"{path}: lacks {', '.join(map(repr, missing))}, which every benchmark's results hold")
    if not isinstance(results["datasets"], list):
        raise ValueError(f"{path}: datasets is not a list but {type(results['datasets']).__name__}")
    for number, dataset in enumerate(results["datasets"]):
        if not isinstance(dataset, dict):
            raise ValueError(f"{path}: datasets[{number}] is not a JSON object but {type(dataset).__name__}")
        missing = [key for key in DATASET_KEYS if key not in dataset]
        if missing:
            raise ValueError(f"{path}: datasets[{number}] lacks {', '.join(map(repr, missing))}")
    return results


def merge_results(
    new: dict[str, Any],
    earlier: dict[str, Any],
    shipped: Mapping[str, dict[str, Any]],
    log: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """``new`` with what only ``earlier`` holds, each kept entry marked ``earlier_run``: its ``generated_at``; of
    the earlier recipe rows, only those of recipes ``shipped`` names (each shipped recipe's name to its resolved
    recipe now, ``faim.recipe.compare.plain``), and not of those ``changed_recipes`` finds, each of which ``log`` is
    told with the field that changed."""
    merged = copy.deepcopy(new)
    changed = changed_recipes(earlier, shipped)
    for name, change in changed.items():
        log(f"--merge: dropped the earlier figures of {name}: the recipe changed since ({change})")
    kept = [name for name in shipped if name not in changed]
    earlier = shipped_only(earlier, kept)
    recorded = {name: recipe for name, recipe in earlier.get("recipes", {}).items() if name in kept}
    merged["recipes"] = recorded | new.get("recipes", {})
    stamp = earlier["generated_at"]
    runs = earlier.get("earlier_runs", []) + [{"command": earlier["command"], "generated_at": stamp}]
    merged["earlier_runs"] = list({run["generated_at"]: run for run in runs}.values())
    for section in ("transfer", "languages"):
        if earlier.get(section) is None:
            continue
        if merged.get(section) is None:
            merged[section] = earlier[section] | {"earlier_run": earlier[section].get("earlier_run", stamp)}
        else:
            keep_recipes(merged[section], earlier[section], stamp)
    datasets = {dataset["source"]: dataset for dataset in merged["datasets"]}
    for dataset in earlier["datasets"]:
        if dataset["source"] not in datasets:
            kept = copy.deepcopy(dataset)
            kept["rows"] = [row | {"earlier_run": row.get("earlier_run", stamp)} for row in kept["rows"]]
            kept["holdouts"] = [entry | {"earlier_run": entry.get("earlier_run", stamp)} for entry in kept["holdouts"]]
            merged["datasets"].append(kept)
            continue
        target = datasets[dataset["source"]]
        keep_robustness(target["rows"], dataset["rows"], stamp)
        kept_rows = unmeasured_recipe_rows(dataset["rows"], recipe_names(target["rows"]), stamp)
        recipes = [row for row in target["rows"] if row["kind"] == "recipe"]
        others = [row for row in target["rows"] if row["kind"] != "recipe"]
        target["rows"] = recipes + kept_rows + others + unmeasured_baseline_rows(dataset["rows"], others, stamp)
        if dataset.get("published") and not target.get("published"):  # no view this run measured concerns them
            target["published"], target["published_view"] = dataset["published"], dataset["published_view"]
        probed = {entry["name"] for entry in target["holdouts"]}
        target["holdouts"] += [
            entry | {"earlier_run": entry.get("earlier_run", stamp)}
            for entry in dataset["holdouts"]
            if entry["name"] not in probed
        ]
    return merged


def changed_recipes(earlier: dict[str, Any], shipped: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """The shipped recipes whose resolved recipe ``earlier`` recorded (``recipes``) and that resolve otherwise now,
    each with what changed (``field: old -> new``). The recorded recipe is resolved again first, as the recipe of a
    model saved with it is (``Recipe.recorded``), so that an option added since, at its default (which keeps the
    behaviour of before), is no change."""
    changed = {}
    for name, recorded in earlier.get("recipes", {}).items():
        if name not in shipped:
            continue
        try:
            then = plain(Recipe.recorded(recorded))
        except RecipeError as error:
            changed[name] = f"the recorded recipe no longer validates ({error})"
            continue
        fields = changed_fields(then, shipped[name])
        if fields:
            changed[name] = describe_changes(fields)
    return changed


def shipped_only(results: dict[str, Any], shipped: Collection[str]) -> dict[str, Any]:
    """A copy of an earlier run's ``results`` without the rows, group holdouts and reasons for skipping of recipes not
    in ``shipped``, in every dataset and in the transfer and language sections; baseline rows stay."""
    kept = copy.deepcopy(results)
    sections = [*kept["datasets"], *(kept[name] for name in ("transfer", "languages") if kept.get(name))]
    for section in sections:
        section["rows"] = [row for row in section["rows"] if not is_recipe(row) or row["name"] in shipped]
        if "holdouts" in section:
            section["holdouts"] = [entry for entry in section["holdouts"] if entry["name"] in shipped]
        if "skipped" in section:
            section["skipped"] = [skipped for skipped in section["skipped"] if skipped["recipe"] in shipped]
    return kept


def keep_recipes(section: dict[str, Any], earlier: dict[str, Any], stamp: str) -> None:
    """Add to a transfer or language ``section`` the rows (and transfer's reasons for skipping) of the recipes this
    run did not measure, each row marked with the run that measured it; the baselines are this run's."""
    measured = recipe_names(section["rows"]) | {skipped["recipe"] for skipped in section.get("skipped", [])}
    section["rows"] += unmeasured_recipe_rows(earlier["rows"], measured, earlier.get("earlier_run", stamp))
    if "skipped" in section:
        section["skipped"] += [skipped for skipped in earlier.get("skipped", []) if skipped["recipe"] not in measured]


def is_recipe(row: dict[str, Any]) -> bool:
    """Whether ``row`` is a recipe's, not a baseline's (a row without ``kind``, as the language section's, is)."""
    return row.get("kind", "recipe") == "recipe"


def recipe_names(rows: list[dict[str, Any]]) -> set[str]:
    return {row["name"] for row in rows if is_recipe(row)}


def unmeasured_recipe_rows(earlier_rows: list[dict[str, Any]], measured: set[str], stamp: str) -> list[dict[str, Any]]:
    """The recipe rows of ``earlier_rows`` whose recipe is not in ``measured``, each marked ``earlier_run`` (its own
    mark where it has one, else ``stamp``)."""
    return [
        row | {"earlier_run": row.get("earlier_run", stamp)}
        for row in earlier_rows
        if is_recipe(row) and row["name"] not in measured
    ]


def unmeasured_baseline_rows(
    earlier_rows: list[dict[str, Any]], measured: list[dict[str, Any]], stamp: str
) -> list[dict[str, Any]]:
    """The baseline rows of ``earlier_rows`` of a baseline, data view and task with no row in ``measured`` (this run
    measured the baselines of other views only, or none: a run of a recipe validating on several datasets), each
    marked ``earlier_run``."""
    done = {(row["name"], row.get("view"), row.get("task")) for row in measured}
    return [
        row | {"earlier_run": row.get("earlier_run", stamp)}
        for row in earlier_rows
        if not is_recipe(row) and (row["name"], row.get("view"), row.get("task")) not in done
    ]


def keep_robustness(rows: list[dict[str, Any]], earlier_rows: list[dict[str, Any]], stamp: str) -> None:
    """Give each row of ``rows`` measured without perturbations the earlier figures under them of the row with the
    same kind, name and view, marked ``robustness_kept``: the earlier run's time and the clean figure they go with."""
    earlier = {(row["kind"], row["name"], row.get("view")): row for row in earlier_rows if row.get("robustness")}
    for row in rows:
        before = earlier.get((row["kind"], row["name"], row.get("view")))
        if row.get("robustness") or before is None:
            continue
        row["robustness"] = copy.deepcopy(before["robustness"])
        kept = before.get("robustness_kept") or {
            "earlier_run": before.get("earlier_run", stamp),
            "value": before["value"],
        }
        row["robustness_kept"] = dict(kept)

"""--merge: what an earlier run measured and this one did not is kept, marked; what this run measured replaces it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from faim.eval.benchmark_languages_report import language_sections
from faim.eval.benchmark_merge import changed_recipes, merge_results, read_results, recipe_names
from faim.eval.benchmark_report import (
    ablation_section,
    dataset_section,
    earlier_mark,
    kept_times,
    robustness_section,
    shift_section,
)
from faim.eval.benchmark_transfer_report import seeded_model_cell
from faim.recipe import Recipe
from faim.recipe.compare import plain


def shipped(*names: str) -> dict[str, dict]:
    """Shipped recipe names to their resolved recipes, which matter only where an earlier run recorded one."""
    return dict.fromkeys(names, {})


SHIPPED = shipped("frozen", "finetune", "general", "vmu_text", "x")
"""The recipes the tests' runs name, all shipped."""


def dataset(source: str, recipes: dict[str, float], holdouts: tuple[str, ...] = ()) -> dict:
    rows = [{"name": name, "kind": "recipe", "value": value} for name, value in recipes.items()]
    rows.append({"name": "majority class", "kind": "baseline", "value": 0.3})
    return {"source": source, "rows": rows, "holdouts": [{"name": name} for name in holdouts]}


def test_a_run_of_some_recipes_keeps_the_others_and_marks_them() -> None:
    earlier = {
        "command": "python -m faim.eval.benchmark",
        "generated_at": "2026-11-24T19:55:43+00:00",
        "transfer": None,
        "languages": {"rows": [{"name": "frozen"}]},
        "datasets": [
            dataset("tweeteval", {"frozen": 0.70, "finetune": 0.79}),
            dataset("vmu", {"vmu_text": 0.83}, holdouts=("vmu_text",)),
        ],
    }
    new = {
        "command": "python -m faim.eval.benchmark --only frozen --merge",
        "generated_at": "2026-11-25T10:00:00+00:00",
        "transfer": {"rows": [{"name": "frozen", "kind": "recipe"}]},
        "languages": None,
        "datasets": [dataset("tweeteval", {"frozen": 0.75})],
    }
    merged = merge_results(new, earlier, SHIPPED)
    tweeteval, vmu = merged["datasets"]
    assert [(row["name"], row["value"], row.get("earlier_run")) for row in tweeteval["rows"]] == [
        ("frozen", 0.75, None),  # measured again: the new figure, unmarked
        ("finetune", 0.79, "2026-11-24T19:55:43+00:00"),  # kept, marked
        ("majority class", 0.3, None),  # the baselines this run measured
    ]
    assert vmu["rows"][0]["earlier_run"] == vmu["holdouts"][0]["earlier_run"] == "2026-11-24T19:55:43+00:00"
    assert merged["transfer"] == {"rows": [{"name": "frozen", "kind": "recipe"}]}
    assert merged["languages"] == {"rows": [{"name": "frozen"}], "earlier_run": "2026-11-24T19:55:43+00:00"}
    assert merged["earlier_runs"] == [{"command": earlier["command"], "generated_at": earlier["generated_at"]}]
    assert earlier_mark(tweeteval["rows"][1]) == " (earlier run, 2026-11-24 19:55)"
    assert earlier_mark(tweeteval["rows"][0]) == ""
    assert new["datasets"][0]["rows"][0].get("earlier_run") is None and len(new["datasets"]) == 1  # left as it was


def test_the_baselines_and_published_figures_of_views_this_run_did_not_measure_are_kept() -> None:
    baseline = {"kind": "baseline", "value": 0.3}
    earlier = {
        "command": "python -m faim.eval.benchmark",
        "generated_at": "2026-11-24T19:55:43+00:00",
        "datasets": [
            {
                "source": "tweeteval",
                "rows": [
                    {"name": "frozen", "kind": "recipe", "view": "default", "value": 0.7},
                    baseline | {"name": "majority class", "view": "default"},
                    baseline | {"name": "majority class", "view": "default + train on davidson"},
                ],
                "holdouts": [],
                "published": [{"model": "BERTweet", "value": 0.564}],
                "published_view": "every view",
            }
        ],
    }
    several = {"name": "general", "kind": "recipe", "view": "trained and validated on tweeteval, ethos"}
    only_general = {"command": "c", "generated_at": "2026-11-25T10:00:00+00:00", "datasets": []}
    only_general["datasets"] = [{"source": "tweeteval", "rows": [several], "holdouts": [], "published": []}]
    (section,) = merge_results(only_general, earlier, SHIPPED)["datasets"]  # measured no baseline
    assert [(row["name"], row.get("view"), row.get("earlier_run")) for row in section["rows"]] == [
        ("general", "trained and validated on tweeteval, ethos", None),
        ("frozen", "default", "2026-11-24T19:55:43+00:00"),
        ("majority class", "default", "2026-11-24T19:55:43+00:00"),
        ("majority class", "default + train on davidson", "2026-11-24T19:55:43+00:00"),
    ]
    assert section["published"] == earlier["datasets"][0]["published"] and section["published_view"] == "every view"
    measured = baseline | {"name": "majority class", "view": "default", "value": 0.31}
    only_frozen = {"command": "d", "generated_at": "2026-11-25T11:00:00+00:00", "datasets": []}
    only_frozen["datasets"] = [{"source": "tweeteval", "rows": [measured], "holdouts": [], "published": [{"x": 1}]}]
    (section,) = merge_results(only_frozen, earlier, SHIPPED)["datasets"]
    assert [(row.get("view"), row["value"], row.get("earlier_run")) for row in section["rows"][1:]] == [
        ("default", 0.31, None),  # measured again: replaced
        ("default + train on davidson", 0.3, "2026-11-24T19:55:43+00:00"),  # another view's: kept
    ]
    assert section["published"] == [{"x": 1}]  # this run's own
    two_tasks = copy.deepcopy(earlier)
    two_tasks["datasets"][0]["rows"] = [baseline | {"name": "majority class", "view": "default", "task": task}
                                        for task in ("hate", "offensive")]  # fmt: skip
    measured_hate = baseline | {"name": "majority class", "view": "default", "task": "hate", "value": 0.31}
    only_frozen["datasets"][0]["rows"] = [measured_hate]
    (section,) = merge_results(only_frozen, two_tasks, SHIPPED)["datasets"]
    assert [(row["task"], row["value"]) for row in section["rows"]] == [("hate", 0.31), ("offensive", 0.3)]


def test_an_entry_kept_twice_keeps_the_time_it_was_measured() -> None:
    first = {
        "command": "a",
        "generated_at": "2026-11-01T00:00:00+00:00",
        "datasets": [dataset("liar", {"x": 0.5})],
        "transfer": {"rows": [{"name": "x", "kind": "recipe"}]},
    }
    second = merge_results(
        {"command": "b", "generated_at": "2026-11-10T00:00:00+00:00", "datasets": []}, first, SHIPPED
    )
    third = merge_results(
        {"command": "c", "generated_at": "2026-11-20T00:00:00+00:00", "datasets": []}, second, SHIPPED
    )
    assert third["datasets"][0]["rows"][0]["earlier_run"] == "2026-11-01T00:00:00+00:00"
    assert third["transfer"] == {"rows": [{"name": "x", "kind": "recipe"}], "earlier_run": "2026-11-01T00:00:00+00:00"}
    assert [run["command"] for run in third["earlier_runs"]] == ["a", "b"]  # every run something was kept from
    assert kept_times(third) == {"2026-11-01T00:00:00+00:00"}  # only a's figures are left: RESULTS.md names a alone


def vmu(rows: list[dict]) -> dict:
    return {"source": "vmu", "rows": rows, "holdouts": []}


def test_a_row_measured_again_without_perturbations_keeps_the_earlier_figures_under_them() -> None:
    perturbed = {"text.leetspeak": {"accuracy": 0.70}}
    earlier_rows = [{"name": "vmu_text", "kind": "recipe", "view": "v", "value": 0.83, "robustness": perturbed}]
    earlier = {"command": "a", "generated_at": "2026-11-24T00:00:00+00:00", "datasets": [vmu(earlier_rows)]}
    rows = [
        {"name": "vmu_text", "kind": "recipe", "view": "v", "value": 0.84, "robustness": {}},
        {"name": "vmu_text", "kind": "recipe", "view": "other view", "value": 0.5, "robustness": {}},
    ]
    new = {"command": "b", "generated_at": "2026-11-25T00:00:00+00:00", "datasets": [vmu(rows)]}
    same_view, other_view = merge_results(new, earlier, SHIPPED)["datasets"][0]["rows"]
    assert same_view["value"] == 0.84 and same_view["robustness"] == perturbed
    assert same_view["robustness_kept"] == {"earlier_run": "2026-11-24T00:00:00+00:00", "value": 0.83}
    assert other_view["robustness"] == {} and "robustness_kept" not in other_view
    table = robustness_section([same_view], "accuracy", "accuracy")[-1]
    assert "| `vmu_text` (earlier run, 2026-11-24 00:00) | v | 0.8300 | 0.7000 (-0.1300) |" in table


def test_a_row_kept_whole_is_marked_beside_its_name_in_every_table_of_its_dataset() -> None:
    shifted = {"ETHOS": {"macro_f1": 0.66, "auroc": 0.77, "ece": 0.14, "n": 998}}
    perturbed = {"text.leetspeak": {"macro_f1": 0.75}}
    row = {
        "name": "finetune",
        "kind": "recipe",
        "view": "default",
        "value": 0.79,
        "metrics": {"auroc": 0.87},
        "ablations": {"without_text": {"macro_f1": 0.5}},
        "split": "validation",
        "n": 1000,
        "ece": 0.05,
        "train_seconds": 60.0,
        "posts_per_second": 100.0,
        "data": "tweeteval",
    }
    earlier = {
        "command": "a",
        "generated_at": "2026-11-24T13:37:00+00:00",
        "datasets": [dataset("tweeteval", {}) | {"rows": [row | {"shifted": shifted, "robustness": perturbed}]}],
    }
    measured = row | {"name": "frozen", "value": 0.75, "metrics": {"auroc": 0.83}}
    new = {
        "command": "b",
        "generated_at": "2026-11-25T00:00:00+00:00",
        "datasets": [dataset("tweeteval", {}) | {"rows": [measured | {"shifted": shifted, "robustness": perturbed}]}],
    }
    tweeteval = merge_results(new, earlier, SHIPPED)["datasets"][0]
    robustness = robustness_section(tweeteval["rows"], "macro_f1", "macro-F1")[-1]
    assert "| `frozen` | default | 0.7500 | 0.7500 (+0.0000) |" in robustness
    assert "| `finetune` (earlier run, 2026-11-24 13:37) | default | 0.7900 | 0.7500 (-0.0400) |" in robustness
    ethos = {"name": "ETHOS", "description": "comments", "data": {"root": "ethos"}}
    shifts = tweeteval | {"metric": "macro_f1", "title": "TweetEval", "shifts": [ethos]}
    table = shift_section(shifts, "macro-F1")[-1]
    assert "| `frozen` | default | 0.7500 | 0.8300 | 0.6600 (-0.0900) |" in table
    assert "| `finetune` (earlier run, 2026-11-24 13:37) | default | 0.7900 | 0.8700 | 0.6600 (-0.1300) |" in table
    modalities = ablation_section(tweeteval["rows"], "macro_f1", "macro-F1")[-1]
    assert "| `frozen` | default | 0.7500 | 0.5000 |" in modalities
    assert "| `finetune` (earlier run, 2026-11-24 13:37) | default | 0.7900 | 0.5000 |" in modalities
    shown = {"title": "TweetEval", "metric": "macro_f1", "published": []}
    validation = dataset_section(shifts | shown)[2]
    assert "| `frozen` | recipe | default | validation |" in validation
    assert "| `finetune` (earlier run, 2026-11-24 13:37) | recipe | default | validation |" in validation


def test_perturbed_figures_kept_from_one_run_under_a_row_kept_from_a_later_one_name_the_run_that_measured_them() -> (
    None
):
    row = {
        "name": "vmu_text",
        "kind": "recipe",
        "view": "v",
        "value": 0.84,
        "robustness": {"text.leetspeak": {"accuracy": 0.7}},
    }
    row |= {"robustness_kept": {"earlier_run": "2026-11-24T00:00:00+00:00", "value": 0.83}}
    row |= {"earlier_run": "2026-11-25T00:00:00+00:00"}
    table = robustness_section([row], "accuracy", "accuracy")[-1]
    assert "| `vmu_text` (earlier run, 2026-11-24 00:00) | v | 0.8300 | 0.7000 (-0.1300) |" in table


def test_a_transfer_or_language_run_of_some_recipes_keeps_the_others_rows_marked() -> None:
    def transfer(recipes: list[str], baseline: float, skipped: list[str]) -> dict:
        rows = [{"name": name, "kind": "recipe", "train_on": ["A"], "held_out": "B"} for name in recipes]
        rows.append({"name": "majority class", "kind": "baseline", "train_on": ["A"], "held_out": "B", "f": baseline})
        return {"rows": rows, "skipped": [{"recipe": name, "reason": "fine-tunes"} for name in skipped]}

    earlier = {
        "command": "a",
        "generated_at": "2026-11-01T00:00:00+00:00",
        "datasets": [],
        "transfer": transfer(["general", "frozen"], 0.4, ["finetune"]),
        "languages": {"rows": [{"name": "general"}, {"name": "finetune"}]},
    }
    new = {
        "command": "b",
        "generated_at": "2026-11-10T00:00:00+00:00",
        "datasets": [],
        "transfer": transfer(["general"], 0.5, []),
        "languages": {"rows": [{"name": "general"}]},
    }
    merged = merge_results(new, earlier, SHIPPED)
    rows = [(row["name"], row.get("f"), row.get("earlier_run")) for row in merged["transfer"]["rows"]]
    assert rows == [
        ("general", None, None),  # measured again
        ("majority class", 0.5, None),  # the baselines are this run's
        ("frozen", None, "2026-11-01T00:00:00+00:00"),  # not measured by this run: kept, marked
    ]
    assert merged["transfer"]["skipped"] == [{"recipe": "finetune", "reason": "fine-tunes"}]
    assert [(row["name"], row.get("earlier_run")) for row in merged["languages"]["rows"]] == [
        ("general", None),
        ("finetune", "2026-11-01T00:00:00+00:00"),
    ]
    assert "earlier_run" not in merged["transfer"] and "earlier_run" not in merged["languages"]
    assert seeded_model_cell(merged["transfer"]["rows"][2]) == "`frozen` (1 seed) (earlier run, 2026-11-01 00:00)"
    assert seeded_model_cell(merged["transfer"]["rows"][0]) == "`general` (1 seed)"
    figures = {"validation": {"all": {"macro_f1": 0.7}}, "sets": {}}
    merged["languages"] |= {"sets": [], "missing": []}
    merged["languages"]["rows"] = [row | figures for row in merged["languages"]["rows"]]
    table = "\n".join(language_sections(merged["languages"]))
    assert "| `finetune` (earlier run, 2026-11-01 00:00) | 0.7000 |" in table and "| `general` | 0.7000 |" in table
    # this run measured a set the earlier one lacked: the kept row has no figures there
    merged["languages"]["sets"] = [{"name": "Indonesian", "language": "id", "description": "tweets"}]
    merged["languages"]["rows"][0]["sets"] = {"Indonesian": {"macro_f1": 0.6, "auroc": 0.7, "ece": 0.1}}
    table = "\n".join(language_sections(merged["languages"]))
    assert "| `finetune` (earlier run, 2026-11-01 00:00) | 0.7000 | n/a | n/a | n/a | n/a |" in table


def test_the_earlier_rows_of_a_recipe_that_no_longer_ships_are_dropped_everywhere() -> None:
    def transfer(recipes: list[str], skipped: list[str]) -> dict:
        rows = [{"name": name, "kind": "recipe", "train_on": ["A"], "held_out": "B"} for name in recipes]
        return {"rows": rows, "skipped": [{"recipe": name, "reason": "fine-tunes"} for name in skipped]}

    earlier = {
        "command": "a",
        "generated_at": "2026-11-01T00:00:00+00:00",
        "datasets": [dataset("tweeteval", {"frozen": 0.7, "renamed": 0.8})],
        "transfer": transfer(["frozen", "renamed"], ["finetune", "removed"]),
        "languages": {"rows": [{"name": "frozen"}, {"name": "renamed"}]},
    }
    new = {
        "command": "b",
        "generated_at": "2026-11-10T00:00:00+00:00",
        "datasets": [dataset("tweeteval", {"general": 0.75})],
        "transfer": transfer(["general"], []),
        "languages": {"rows": [{"name": "general"}]},
    }
    merged = merge_results(new, earlier, shipped("frozen", "general", "finetune"))
    assert recipe_names(merged["datasets"][0]["rows"]) == {"general", "frozen"}
    assert recipe_names(merged["transfer"]["rows"]) == {"general", "frozen"}
    assert merged["transfer"]["skipped"] == [{"recipe": "finetune", "reason": "fine-tunes"}]
    assert recipe_names(merged["languages"]["rows"]) == {"general", "frozen"}
    earlier["datasets"].append(
        dataset("vmu", {"vmu_text": 0.8, "renamed_vmu": 0.7}, holdouts=("vmu_text", "renamed_vmu"))
    )
    nothing = {"command": "c", "generated_at": "2026-11-20T00:00:00+00:00", "datasets": []}
    merged = merge_results(nothing, earlier, shipped("frozen", "vmu_text"))  # sections and datasets kept whole
    tweeteval, vmu = merged["datasets"]
    assert recipe_names(tweeteval["rows"]) == {"frozen"} and "majority class" in {r["name"] for r in tweeteval["rows"]}
    assert recipe_names(vmu["rows"]) == {"vmu_text"} and [entry["name"] for entry in vmu["holdouts"]] == ["vmu_text"]
    assert recipe_names(merged["transfer"]["rows"]) == {"frozen"} and merged["transfer"]["skipped"] == []
    assert recipe_names(merged["languages"]["rows"]) == {"frozen"}


def test_the_earlier_rows_of_a_recipe_changed_since_they_were_measured_are_dropped() -> None:
    general, frozen = plain(Recipe.load("hate_text_general")), plain(Recipe.load("hate_text_frozen"))
    then = copy.deepcopy(general)
    then["train"]["lr"] = 0.01
    older = copy.deepcopy(frozen)
    del older["train"]["warmup_ratio"]  # recorded before the option existed: its default is no change
    earlier = {
        "command": "a",
        "generated_at": "2026-11-01T00:00:00+00:00",
        "datasets": [dataset("tweeteval", {"general": 0.7, "frozen": 0.6, "finetune": 0.8})],
        "transfer": {"rows": [{"name": "general", "kind": "recipe"}, {"name": "frozen", "kind": "recipe"}]},
        "recipes": {"general": then, "frozen": older},  # finetune's run recorded none: taken as it is
    }
    now = {"general": general, "frozen": frozen, "finetune": {}, "x": {}}
    change = f"train.lr: 0.01 -> {general['train']['lr']!r}"
    assert changed_recipes(earlier, now) == {"general": change}
    new = {
        "command": "b",
        "generated_at": "2026-11-10T00:00:00+00:00",
        "datasets": [dataset("tweeteval", {"x": 0.5})],
        "recipes": {"x": {"measured": "now"}},
    }
    logged: list[str] = []
    merged = merge_results(new, earlier, now, log=logged.append)
    assert logged == [f"--merge: dropped the earlier figures of general: the recipe changed since ({change})"]
    assert recipe_names(merged["datasets"][0]["rows"]) == {"x", "frozen", "finetune"}
    assert recipe_names(merged["transfer"]["rows"]) == {"frozen"}
    assert merged["recipes"] == {"frozen": older, "x": {"measured": "now"}}
    earlier["recipes"]["general"] = {"model": "not a recipe"}
    assert changed_recipes(earlier, now)["general"].startswith("the recorded recipe no longer validates")


def test_a_recorded_recipe_is_read_as_the_recipe_of_a_model_saved_with_it_is() -> None:
    liar = plain(Recipe.load("misinfo_liar_binary"))
    then = copy.deepcopy(liar)
    then["model"]["heads"]["truth"]["labels"] = ["not-false", False]  # recorded when YAML's false was read so
    earlier = {"command": "a", "generated_at": "2026-11-01T00:00:00+00:00", "recipes": {"liar": then}}
    assert changed_recipes(earlier, {"liar": liar}) == {}
    then["train"]["mode"] = "max"  # keeps the worst epoch of its monitor: refused for a new run, a change here
    assert changed_recipes(earlier, {"liar": liar}) == {"liar": "train.mode: 'max' -> 'min'"}


def test_an_earlier_results_file_is_read_whole_or_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    with pytest.raises(FileNotFoundError, match=rf"^{path}: does not exist"):
        read_results(path)
    path.write_text('{"command": "c", "generated_at": "t", "datasets": [{"source": "vmu", "rows": [', "utf-8")
    with pytest.raises(ValueError, match=rf"^{path}: is not JSON \(.*line 1 column .*cut short"):
        read_results(path)
    path.write_text('{"command": "c", "generated_at": "t", "datasets": [{"source": "vmu"}]}', "utf-8")
    with pytest.raises(ValueError, match=rf"^{path}: datasets\[0\] lacks 'rows'"):
        read_results(path)
    earlier = {"command": "c", "generated_at": "t", "datasets": [dataset("vmu", {"x": 0.5})]}
    path.write_text(json.dumps(earlier), "utf-8")
    assert read_results(path) == earlier

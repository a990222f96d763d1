"""Selection by transfer on three generated hate datasets: the folds, the held-out figures, recalibration, and
the tables that lead RESULTS.md."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from conftest import tiny_hate_recipe

from faim.eval.benchmark_baselines import Embedder
from faim.eval.benchmark_transfer import (
    TransferDataset,
    fold_recipe,
    folds,
    is_hate_recipe,
    run_transfer,
    same_training,
)
from faim.eval.benchmark_transfer_report import (
    RECOMMENDED,
    adaptation_table,
    recalibration_table,
    recommended_table,
    transfer_sections,
)
from faim.recipe import Recipe
from faim.recipe.compare import plain

HATEFUL = ["vermin", "scum", "filth", "parasites"]


def write_dataset(root: Path, name: str, neutral: list[str], n: int, rng: random.Random) -> TransferDataset:
    """A JSONL dataset of ``n`` posts, about a third hateful (a hateful word decides), with its own vocabulary."""
    folder = root / name
    folder.mkdir()
    for split, size in (("train", n), ("validation", n // 2)):
        lines = []
        for i in range(size):
            label = int(rng.random() < 0.35)
            words = rng.choices(neutral, k=5) + ([rng.choice(HATEFUL)] if label else [])
            rng.shuffle(words)
            lines.append(json.dumps({"id": f"{name}-{split}-{i}", "text": " ".join(words), "hate": label}))
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = {"type": "jsonl", "train": str(folder / "train.jsonl"), "validation": str(folder / "validation.jsonl"),
            "columns": {"labels": {"hate": "hate"}}}  # fmt: skip
    return TransferDataset(name, data, f"generated {name}")


@pytest.fixture(scope="module")
def transfer(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("transfer")
    rng = random.Random(0)
    vocabularies = [["weather", "coffee", "music"], ["football", "garden", "train"], ["holiday", "recipe", "movie"]]
    datasets = tuple(write_dataset(root, name, words, 150, rng) for name, words in zip("ABC", vocabularies))
    recipe = tiny_hate_recipe(datasets[0].data, root)
    path = root / "tiny_hate.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    embedder = Embedder("tiny + LR", {"type": "tiny_text", "dim": 16}, str(root / "cache"))
    recipes = [Recipe.load(path)]
    results = run_transfer(recipes, False, embedder, lambda _: None, root / "runs", datasets, seeds=2)
    return {"root": root, "datasets": datasets, "results": results, "recipe": recipes[0]}


def test_each_dataset_alone_and_every_set_leaving_one_out(transfer) -> None:
    datasets = transfer["datasets"]
    assert [tuple(d.name for d in fold) for fold in folds(datasets)] == [
        ("A",),
        ("B",),
        ("C",),
        ("A", "B"),
        ("A", "C"),
        ("B", "C"),
    ]
    fold = fold_recipe(transfer["recipe"], datasets[1:], transfer["root"] / "runs")
    assert fold.data == {"type": "concat", "sources": [datasets[1].data, datasets[2].data], "evaluate_on": "all"}
    assert fold.train.output_dir.endswith("runs/tiny_hate/B+C") and fold.model == transfer["recipe"].model


def test_a_fold_reads_a_dataset_as_the_recipe_does_and_balances_only_several(transfer) -> None:
    hate = {"type": "davidson", "root": "d", "task": "hate", "labels": "binary"}
    datasets = (TransferDataset("D", hate, "davidson"), transfer["datasets"][0])
    narrowed = hate | {"labels": "hate_vs_neither"}
    mapping = transfer["recipe"].to_dict()
    mapping["data"] = {"type": "concat", "sources": [narrowed, datasets[1].data], "evaluate_on": "all"}
    mapping["train"] = mapping["train"] | {"balance": "sources"}
    recipe = Recipe.from_dict(mapping, transfer["recipe"].source)
    pair = fold_recipe(recipe, datasets, transfer["root"] / "runs")
    assert pair.data["sources"] == [narrowed, datasets[1].data] and pair.train.balance == "sources"
    alone = fold_recipe(recipe, datasets[:1], transfer["root"] / "runs")
    assert alone.data == narrowed and alone.train.balance is None


def test_every_fold_is_measured_on_each_dataset_it_left_out(transfer) -> None:
    rows = transfer["results"]["rows"]
    recipe_rows = [row for row in rows if row["kind"] == "recipe"]
    assert len(recipe_rows) == 3 * 2 + 3 * 1
    assert all(row["held_out"] not in row["train_on"] for row in rows)
    assert {row["name"] for row in rows if row["kind"] == "baseline"} == {
        "majority class",
        "TF-IDF + logistic regression",
        "tiny + LR",
    }
    for row in recipe_rows:
        assert row["n"] == 225 and 0 <= row["as_trained"]["macro_f1"] <= 1
        left_one_out = len(row["train_on"]) == 2
        assert (row.get("recalibrated") is not None) == left_one_out
        if left_one_out:
            assert row["recalibrated"]["labels"] == 200 and row["recalibrated"]["draws"] == 20
            assert row["head_corrected"]["labels"] == 200 and row["head_corrected"]["draws"] == 20
            assert row["unlabelled"]["estimated_prior"] is not None


def test_the_tables_rank_by_leave_one_out_macro_f1(transfer) -> None:
    markdown = "\n\n".join(transfer_sections(transfer["results"]))
    assert "### Leave one dataset out — macro-F1" in markdown
    assert "A (trained on the others)" in markdown and "### Recalibrated for the held-out dataset — ECE" in markdown
    assert "### Trained on one dataset — macro-F1 on each other one" in markdown
    assert "### Adapted with 200 labels of the held-out dataset — macro-F1" in markdown
    assert "| head corrected, then calibrated |" in markdown


def test_a_hate_recipe_reads_the_hate_datasets_only(transfer) -> None:
    assert is_hate_recipe(Recipe.load("hate_text_frozen")) and is_hate_recipe(Recipe.load("hate_text_frozen_davidson"))
    assert not is_hate_recipe(Recipe.load("misinfo_liar_meta")) and not is_hate_recipe(transfer["recipe"])


def test_datasets_whose_labels_agree_read_no_term_the_opposite_way(transfer) -> None:
    pairs = transfer["results"]["conflicts"]
    assert [pair["datasets"] for pair in pairs] == [["A", "B"], ["A", "C"], ["B", "C"]]
    assert all(pair["terms"] == 0 and pair["shown"] == [] for pair in pairs)


def test_each_fold_is_trained_with_each_seed_and_its_row_holds_their_mean(transfer) -> None:
    recipe_rows = [row for row in transfer["results"]["rows"] if row["kind"] == "recipe"]
    for row in recipe_rows:
        assert [figures["seed"] for figures in row["seeds"]] == [0, 1]
        for metric in ("macro_f1", "auroc", "ece", "accuracy"):
            each = [figures[metric] for figures in row["seeds"]]
            assert row["as_trained"][metric] == pytest.approx(sum(each) / 2)
    runs = transfer["root"] / "runs" / "tiny_hate"
    assert (runs / "B+C" / "model").is_dir() and (runs / "B+C-seed1" / "model").is_dir()
    second = fold_recipe(transfer["recipe"], transfer["datasets"][1:], transfer["root"] / "runs", seed_offset=1)
    assert second.train.seed == 1 and second.train.output_dir.endswith("runs/tiny_hate/B+C-seed1")


def test_a_seed_count_below_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seeds must be 1 or more"):
        run_transfer([], False, Embedder(), lambda _: None, tmp_path / "runs", seeds=0)
    assert not (tmp_path / "runs").exists()


def test_a_recipes_own_seed_is_its_first_folds_and_the_next_ones_follow(transfer) -> None:
    mapping = transfer["recipe"].to_dict()
    mapping["train"] = mapping["train"] | {"seed": 7}
    recipe = Recipe.from_dict(mapping, transfer["recipe"].source)
    runs, pair = transfer["root"] / "runs", transfer["datasets"][1:]
    own, third = fold_recipe(recipe, pair, runs), fold_recipe(recipe, pair, runs, seed_offset=2)
    assert own.train.seed == 7 and own.train.output_dir.endswith("runs/tiny_hate/B+C")
    assert third.train.seed == 9 and third.train.output_dir.endswith("runs/tiny_hate/B+C-seed9")


def loo_row(name: str, held: str, seeds: list[dict[str, float]], first_seed: int = 0) -> dict:
    """A leave-one-out row of generated figures: the mean over ``seeds``, numbered from ``first_seed``, as
    ``run_transfer`` writes it for several seeds; a single seed's row as one from before seeds were counted."""
    mean = {metric: sum(figures[metric] for figures in seeds) / len(seeds) for metric in seeds[0]}
    trained_on = {"A": ["B", "C"], "B": ["A", "C"], "C": ["A", "B"]}[held]
    row = {"name": name, "kind": "recipe", "train_on": trained_on, "held_out": held, "n": 100, "as_trained": mean}
    listed = [{"seed": first_seed + i} | figures for i, figures in enumerate(seeds)]
    return row | ({"seeds": listed} if len(seeds) > 1 else {})


def figures(macro_f1: float, ece: float) -> dict[str, float]:
    return {"macro_f1": macro_f1, "auroc": 0.7, "ece": ece, "accuracy": 0.7}


def test_the_tables_give_a_seeded_recipes_mean_and_range_and_rank_by_the_mean() -> None:
    datasets = [{"name": name, "description": name, "data": {}} for name in "ABC"]
    seeded = [loo_row("seeded", held, [figures(0.70, 0.1), figures(0.58, 0.3)]) for held in "ABC"]  # first above
    single = [loo_row("single", held, [figures(0.66, 0.2)]) for held in "ABC"]
    results = {"datasets": datasets, "rows": seeded + single, "skipped": []}
    markdown = "\n\n".join(transfer_sections(results))
    ranking = markdown.split("### Leave one dataset out — macro-F1")[1].split("###")[0]
    assert "| 1 | `single` (1 seed) | 0.6600 | 0.6600 | 0.6600 | 0.6600 |" in ranking
    assert "| 2 | `seeded` (2 seeds) | 0.6400 (0.5800–0.7000) |" in ranking


def test_the_recalibration_table_sets_the_fit_against_the_figures_of_the_seed_it_was_fitted_on() -> None:
    row = loo_row("seeded", "A", [figures(0.60, 0.40), figures(0.70, 0.20)], first_seed=7)
    fitted = {"ece_mean": 0.10, "ece_sd": 0.01, "labels": 200, "draws": 20, "ece_if_calibrated_low": 0.02,
              "ece_if_calibrated_high": 0.08}  # fmt: skip
    row |= {"recalibrated": fitted, "unlabelled": {"ece": 0.30, "prior": 0.3, "estimated_prior": 0.4}}
    table = "\n".join(recalibration_table([row]))
    assert "| `seeded` (seed 7) | A | 0.4000 | 0.1000 ± 0.0100 |" in table
    assert "| 75 % |" in table and "| 25 % |" in table


def single_row(name: str, trained: str, held: str, seeds: list[dict[str, float]]) -> dict:
    """A row of a model trained on one dataset, as ``run_transfer`` writes it."""
    return loo_row(name, held, seeds) | {"train_on": [trained]}


def test_the_recommended_recipe_is_set_against_the_best_single_dataset_recipe_by_their_means() -> None:
    loo = [loo_row(RECOMMENDED, "A", [figures(0.62, 0.1), figures(0.64, 0.1)]),
           loo_row(RECOMMENDED, "B", [figures(0.50, 0.1), figures(0.60, 0.1)])]  # fmt: skip
    single = [
        single_row("steady", "B", "A", [figures(0.61, 0.1)]),
        single_row("lucky", "C", "A", [figures(0.70, 0.1), figures(0.50, 0.1)]),  # best seed above, mean below
        single_row("steady", "A", "B", [figures(0.56, 0.1)]),
        single_row("majority class", "C", "B", [figures(0.90, 0.1)]) | {"kind": "baseline"},
    ]
    table = "\n".join(recommended_table(loo, single, ["A", "B", "C"]))
    assert "| A | `steady` (1 seed) on B | 0.6100 | 0.6300 (0.6200–0.6400), 2 seeds | yes |" in table
    assert "| B | `steady` (1 seed) on A | 0.5600 | 0.5500 (0.5000–0.6000), 2 seeds | no |" in table
    assert "| C |" not in table and "majority" not in table


def test_the_recommended_recipes_figure_names_the_earlier_run_it_was_kept_from() -> None:
    kept = {"earlier_run": "2026-11-28T22:30:00"}
    loo = [loo_row(RECOMMENDED, "A", [figures(0.62, 0.1)]) | kept]
    single = [single_row("newer", "B", "A", [figures(0.61, 0.1)])]
    table = "\n".join(recommended_table(loo, single, ["A", "B"]))
    assert "| A | `newer` (1 seed) on B | 0.6100 | 0.6200, 1 seed (earlier run, 2026-11-28 22:30) | yes |" in table


def test_the_adaptation_table_sets_the_head_correction_against_the_seed_it_was_fitted_on() -> None:
    row = loo_row("seeded", "A", [figures(0.52, 0.3), figures(0.70, 0.3)])
    draws = {"labels": 200, "draws": 20, "ece_if_calibrated_low": 0.02, "ece_if_calibrated_high": 0.08}
    head = {"macro_f1_mean": 0.60, "macro_f1_sd": 0.02, "ece_mean": 0.05, "ece_sd": 0.01}
    row |= {"recalibrated": draws | {"macro_f1_mean": 0.55, "macro_f1_sd": 0.01}, "head_corrected": draws | head}
    table = "\n".join(adaptation_table([row]))
    assert "| `seeded` (seed 0) | A | 0.5200 | 0.5500 ± 0.0100 | 0.6000 ± 0.0200 | 0.0500 ± 0.0100 |" in table


def test_a_recipe_row_from_before_seeds_were_counted_reads_as_one_seed_and_no_range_is_promised() -> None:
    datasets = [{"name": name, "description": name, "data": {}} for name in "ABC"]
    rows = [loo_row("older", held, [figures(0.66, 0.2)]) for held in "ABC"]
    markdown = "\n\n".join(transfer_sections({"datasets": datasets, "rows": rows, "skipped": []}))
    assert "| 1 | `older` (1 seed) | 0.6600 |" in markdown
    assert "brackets" not in markdown


def variant(recipe: Recipe, data: dict | None = None, **sections: dict) -> Recipe:
    """``recipe`` reading ``data`` instead, each section of ``sections`` updated with the settings given."""
    mapping = recipe.to_dict() | ({"data": data} if data else {})
    for section, settings in sections.items():
        mapping[section] = mapping[section] | settings
    return Recipe.from_dict(mapping, recipe.source)


def same_training_recipes(transfer) -> dict[str, Recipe]:
    """The tiny recipe, the same with a dataset no fold reads added to its training and a logit shift (each fold
    replaces its data: the same weights), and the same with another learning rate (other weights)."""
    recipe, first = transfer["recipe"], transfer["datasets"][0]
    davidson = {"type": "davidson", "root": "davidson", "task": "hate", "labels": "binary"}
    extra = {"type": "concat", "sources": [first.data, davidson]}
    return {
        "tiny_hate": recipe,
        "tiny_hate_extra": variant(recipe, extra, eval={"logit_shift": True}),
        "tiny_hate_fast": variant(recipe, train={"lr": recipe.train.lr * 10}),
    }


def test_recipes_whose_every_fold_trains_the_same_weights_are_found(transfer) -> None:
    recipes = same_training_recipes(transfer)
    assert same_training(recipes, transfer["datasets"]) == [["tiny_hate", "tiny_hate_extra"]]
    assert same_training({"tiny_hate": recipes["tiny_hate"]}, transfer["datasets"]) == []


def test_the_tables_say_which_recipes_folds_train_the_same_weights_and_how_they_differ(transfer) -> None:
    datasets = [{"name": d.name, "description": d.description, "data": d.data} for d in transfer["datasets"]]
    names = ["tiny_hate", "tiny_hate_extra", "tiny_hate_fast"]
    rows = [loo_row(name, held, [figures(0.66, 0.2)]) for name in names for held in "ABC"]
    recorded = {name: plain(recipe) for name, recipe in same_training_recipes(transfer).items()}
    markdown = "\n\n".join(transfer_sections({"datasets": datasets, "rows": rows, "skipped": []}, recorded))
    assert (
        "`tiny_hate` and `tiny_hate_extra` train the same weights in every fold (each fold replaces the data they "
        "train on), so their macro-F1 and AUROC are one model's, ranked twice; their calibration differs "
        "(eval.logit_shift: False -> True), and with it their ECE." in markdown
    )
    assert "tiny_hate_fast` train the same" not in markdown
    assert "the same weights in every fold" not in "\n\n".join(
        transfer_sections({"datasets": datasets, "rows": rows, "skipped": []})
    )

"""The benchmark harness on generated TweetEval-format data with a tiny recipe and a tiny sentence encoder."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from faim.calibration.fit import TargetUnreachableWarning
from faim.calibration.thresholds import threshold_sweep
from faim.data.targets import TaskSpec
from faim.eval.benchmark import (
    TEXT_PERTURBATIONS,
    cpuinfo_field,
    holdout_entry,
    main,
    recipe_rows,
    run_benchmark,
    select,
    timed_scoring,
    write_results,
)
from faim.eval.benchmark_baselines import Embedder, measured, tuned_threshold
from faim.eval.benchmark_datasets import (
    DATASETS,
    Dataset,
    Shift,
    View,
    benchmark_type,
    member_views,
    published_applies,
    recipe_views,
)
from faim.eval.benchmark_merge import merge_results
from faim.eval.benchmark_report import render
from faim.eval.benchmark_runs import SCORING_RUNS, RecipeRun, reuse_problem
from faim.recipe import Recipe
from faim.recipe.compare import plain
from faim.training.run import RECORD
from tests.conftest import frozen_tiny_recipe

HATEFUL = ["vermin", "scum", "filth", "parasites"]
NEUTRAL = ["weather", "football", "coffee", "music", "garden", "train", "movie", "lunch"]
TINY_EMBEDDER = Embedder(name="frozen tiny encoder + logistic regression", encoder={"type": "tiny_text", "dim": 16})


def write_split(root: Path, prefix: str, n: int, rng: random.Random) -> list[int]:
    """TweetEval-format files of ``n`` posts, about a third hateful (a hateful word decides the label)."""
    texts, labels = [], []
    for _ in range(n):
        label = int(rng.random() < 0.35)
        words = rng.choices(NEUTRAL, k=6) + ([rng.choice(HATEFUL)] if label else [])
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append(label)
    (root / f"{prefix}_text.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    (root / f"{prefix}_labels.txt").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")
    return labels


OTHER_NEUTRAL = ["holiday", "recipe", "concert", "homework", "bicycle", "painting"]


@pytest.fixture(scope="module", autouse=True)
def generated_ethos(tmp_path_factory: pytest.TempPathFactory):
    """An ETHOS-format file of 60 comments (other neutral words, the same hateful ones), standing in for
    ``../shared/data/ethos`` as TweetEval's other dataset in this module; yields its labels."""
    root = tmp_path_factory.mktemp("ethos")
    rng = random.Random(5)
    lines, labels = ["comment;isHate"], []
    for _ in range(60):
        label = int(rng.random() < 0.45)
        words = rng.choices(OTHER_NEUTRAL, k=5) + ([rng.choice(HATEFUL)] if label else [])
        lines.append(f"{' '.join(words)};{rng.choice([0.6, 0.8, 1.0]) if label else rng.choice([0.0, 0.2])}")
        labels.append(label)
    (root / "Ethos_Dataset_Binary.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shift = Shift("ETHOS", "generated comments", {"type": "ethos", "root": str(root)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(DATASETS, "tweeteval", replace(DATASETS["tweeteval"], shifts=(shift,)))
        yield labels


@pytest.fixture(scope="module")
def benchmark_data(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("benchmark")
    rng = random.Random(3)
    data = root / "tweeteval_hate"
    data.mkdir()
    write_split(data, "train", 160, rng)
    validation_labels = write_split(data, "val", 80, rng)
    recipe = {
        "data": {"type": "tweeteval", "root": str(data), "task": "hate"},
        "model": {
            "encoders": {"text": {"type": "tiny_text", "dim": 16, "freeze": True}},
            "fusion": {"type": "concat"},
            "heads": {"hate": {"type": "binary", "labels": ["not-hate", "hate"], "hidden_dim": 16}},
        },
        "train": {"max_epochs": 2, "batch_size": 32, "output_dir": str(root / "run"), "cache_dir": str(root / "cache")},
        "eval": {"threshold_objective": "macro_f1"},
    }
    path = root / "tiny_hate.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    embedder = Embedder(TINY_EMBEDDER.name, TINY_EMBEDDER.encoder, str(root / "cache"))
    results = run_benchmark(
        [str(path)], workers=1, embedder=embedder, command="test", log=lambda _: None, transfer=False
    )
    markdown, json_path = write_results(results, root / "out" / "RESULTS.md")
    return {
        "root": root,
        "recipe": recipe,
        "path": path,
        "embedder": embedder,
        "results": results,
        "markdown": markdown.read_text(encoding="utf-8"),
        "json": json.loads(json_path.read_text(encoding="utf-8")),
        "validation_labels": validation_labels,
    }


def rows_by_name(results: dict) -> dict[str, dict]:
    (dataset,) = results["datasets"]
    return {row["name"]: row for row in dataset["rows"]}


def main_table(markdown: str) -> list[str]:
    """The lines of a dataset's measured table and what comes before it (its subsections follow)."""
    return markdown.split("\n### ")[0].splitlines()


def test_a_row_per_recipe_and_per_baseline_in_markdown_and_json(benchmark_data) -> None:
    names = ["tiny_hate", "majority class", "TF-IDF + logistic regression", TINY_EMBEDDER.name]
    assert list(rows_by_name(benchmark_data["results"])) == names
    assert list(rows_by_name(benchmark_data["json"])) == names
    first_cells = [line.split(" | ")[0].strip("|` ") for line in main_table(benchmark_data["markdown"])]
    for name in names:
        assert first_cells.count(name) == 1, name
    assert "Published (official test split, not comparable one-to-one)" in benchmark_data["markdown"]
    assert "BERTweet" in benchmark_data["markdown"] and "`test`" in benchmark_data["markdown"]


def test_recipe_row_takes_the_evaluation_report_and_measures_time_and_throughput(benchmark_data) -> None:
    row = rows_by_name(benchmark_data["results"])["tiny_hate"]
    report = json.loads((benchmark_data["root"] / "run" / "eval" / "metrics.json").read_text(encoding="utf-8"))
    assert row["value"] == report["tasks"]["hate"]["metrics"]["macro_f1"]
    assert row["ece"] == report["tasks"]["hate"]["metrics"]["ece"]
    assert row["n"] == len(benchmark_data["validation_labels"])
    assert row["train_seconds"] > 0 and row["posts_per_second"] > 0 and row["reused"] is False
    runs = row["posts_per_second_runs"]
    assert len(runs) == SCORING_RUNS and min(runs) > 0 and row["posts_per_second"] == max(runs)  # none resumed
    record = json.loads((benchmark_data["root"] / "run" / RECORD).read_text(encoding="utf-8"))
    assert record["train_seconds"] == row["train_seconds"]
    assert row["posts_encoded"] == record["posts_encoded"]


def test_a_training_time_without_embedding_says_its_embeddings_were_cached(benchmark_data) -> None:
    results = json.loads(json.dumps(benchmark_data["results"]))
    (dataset,) = results["datasets"]
    for encoded, mark in ((0, True), (40, False), (None, False)):
        dataset["rows"][0] |= {"posts_encoded": encoded, "train_seconds": 30.1}
        (line,) = [line for line in main_table(render(results)) if line.startswith("| `tiny_hate` |")]
        assert ("| 30.1 s (embeddings cached) |" in line) is mark and "| 30.1 s" in line, encoded


def test_every_row_shows_the_ece_range_of_a_calibrated_model(benchmark_data) -> None:
    lines = main_table(benchmark_data["markdown"])
    assert any("ECE if calibrated" in line for line in lines)
    for name, row in rows_by_name(benchmark_data["results"]).items():
        low, high = row["metrics"]["ece_if_calibrated_low"], row["metrics"]["ece_if_calibrated_high"]
        assert 0.0 <= low <= high
        (line,) = [line for line in lines if line.split(" | ")[0].strip("|` ") == name]
        assert f"| {low:.3f}–{high:.3f} |" in line


def test_the_recipe_and_the_text_baselines_are_measured_under_each_text_perturbation(benchmark_data) -> None:
    rows = rows_by_name(benchmark_data["results"])
    assert rows["majority class"]["robustness"] == {}
    for name in ("tiny_hate", "TF-IDF + logistic regression", TINY_EMBEDDER.name):
        assert list(rows[name]["robustness"]) == TEXT_PERTURBATIONS, name  # the tiny encoder reads text only
    report = benchmark_data["root"] / "run" / "eval" / "robustness" / "text.leetspeak" / "metrics.json"
    recipe = rows["tiny_hate"]["robustness"]["text.leetspeak"]
    assert recipe == json.loads(report.read_text(encoding="utf-8"))["tasks"]["hate"]["metrics"]
    tfidf = rows["TF-IDF + logistic regression"]
    assert tfidf["robustness"]["text.leetspeak"]["macro_f1"] < tfidf["value"]  # l33t hateful words are unseen
    assert tfidf["robustness"]["text.leetspeak"]["threshold"] == tfidf["metrics"]["threshold"]
    section = benchmark_data["markdown"].split("### Under evasion-style perturbations — macro-F1")[1]
    change = recipe["macro_f1"] - rows["tiny_hate"]["value"]
    assert f"| {recipe['macro_f1']:.4f} ({change:+.4f}) |" in section.split("`tiny_hate`")[1].splitlines()[0]


def test_the_recipe_and_the_baselines_are_measured_as_trained_on_the_other_dataset(
    benchmark_data, generated_ethos
) -> None:
    rows = rows_by_name(benchmark_data["results"])
    for name, row in rows.items():
        assert list(row["shifted"]) == ["ETHOS"] and row["shifted"]["ETHOS"]["n"] == len(generated_ethos), name
    report = benchmark_data["root"] / "run" / "eval" / "shift" / "ETHOS" / "metrics.json"
    recipe = rows["tiny_hate"]["shifted"]["ETHOS"]
    assert recipe == json.loads(report.read_text(encoding="utf-8"))["tasks"]["hate"]["metrics"]
    assert recipe["threshold"] == rows["tiny_hate"]["metrics"]["threshold"]  # as trained: not chosen again
    tfidf = rows["TF-IDF + logistic regression"]
    assert tfidf["shifted"]["ETHOS"]["threshold"] == tfidf["metrics"]["threshold"]
    assert tfidf["shifted"]["ETHOS"]["auroc"] > 0.9  # the hateful words carry over; the neutral ones are new
    majority = rows["majority class"]["shifted"]["ETHOS"]
    assert majority["accuracy"] == pytest.approx(generated_ethos.count(0) / len(generated_ethos))  # "not-hate"
    section = benchmark_data["markdown"].split("### On ETHOS, as trained — macro-F1")[1].split("\n### ")[0]
    assert "**ETHOS**: generated comments" in section and "every split, 60 posts" in section
    change = recipe["macro_f1"] - rows["tiny_hate"]["value"]
    line = section.split("`tiny_hate`")[1].splitlines()[0]
    assert f"| {recipe['macro_f1']:.4f} ({change:+.4f}) | {recipe['auroc']:.4f} | {recipe['ece']:.4f} |" in line


@pytest.fixture(scope="module")
def several_datasets(benchmark_data) -> dict:
    """The benchmark of a tiny recipe trained and validated on the generated TweetEval and ETHOS posts at once."""
    root = benchmark_data["root"]
    ethos = {"type": "ethos", "root": DATASETS["tweeteval"].shifts[0].data["root"], "task": "hate"}
    members = [benchmark_data["recipe"]["data"], ethos]
    recipe = benchmark_data["recipe"] | {
        "data": {"type": "concat", "evaluate_on": "all", "sources": members},
        "train": benchmark_data["recipe"]["train"] | {"output_dir": str(root / "general_run")},
    }
    path = root / "tiny_general.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    quiet = {"embedder": benchmark_data["embedder"], "log": lambda _: None, "transfer": False}
    results = run_benchmark([str(path)], workers=1, **quiet)
    return {"root": root / "general_run", "results": results, "markdown": render(results)}


def test_a_recipe_validating_on_several_datasets_is_measured_on_each_known_ones_validation_posts(
    benchmark_data, several_datasets
) -> None:
    (section,) = several_datasets["results"]["datasets"]
    (row,) = section["rows"]  # ETHOS is no benchmark dataset; no baselines: they train on one dataset's view
    assert section["source"] == "tweeteval" and row["name"] == "tiny_general" and row["several_datasets"]
    assert row["view"] == "trained and validated on tweeteval, ethos"
    assert row["n"] == len(benchmark_data["validation_labels"])  # TweetEval's validation posts alone
    run = several_datasets["root"]
    whole = json.loads((run / "eval" / "metrics.json").read_text(encoding="utf-8"))["tasks"]["hate"]["metrics"]
    assert whole["n"] > row["n"]  # the run's own evaluation validates on ETHOS's posts too
    report = json.loads((run / "eval" / "members" / "tweeteval" / "metrics.json").read_text(encoding="utf-8"))
    assert row["metrics"] == report["tasks"]["hate"]["metrics"] and row["value"] == row["metrics"]["macro_f1"]
    assert row["metrics"]["threshold"] == whole["threshold"]  # the threshold it chose on every dataset's posts
    assert row["posts_per_second"] > 0 and row["scoring_failed_rows"] == 0
    assert list(row["robustness"]) == TEXT_PERTURBATIONS
    leetspeak = run / "eval" / "members" / "tweeteval" / "robustness" / "text.leetspeak" / "metrics.json"
    assert row["robustness"]["text.leetspeak"] == json.loads(leetspeak.read_text())["tasks"]["hate"]["metrics"]
    table = main_table(several_datasets["markdown"].split("## TweetEval hate")[1])
    start = "| `tiny_general` | recipe | trained and validated on tweeteval, ethos | validation | 80 |"
    assert any(line.startswith(start) for line in table)
    assert "A data view *trained and validated on* several datasets" in several_datasets["markdown"]
    assert "`tiny_general`" in several_datasets["markdown"].split("### Under evasion-style perturbations")[1]


def test_a_merged_run_of_a_recipe_validating_on_several_datasets_keeps_the_earlier_rows(
    benchmark_data, several_datasets
) -> None:
    recorded = benchmark_data["json"]["recipes"]["tiny_hate"]  # the run records each recipe it measured, resolved
    assert recorded == plain(Recipe.from_dict(benchmark_data["recipe"]))
    merged = merge_results(several_datasets["results"], benchmark_data["json"], {"tiny_hate": recorded})
    (section,) = merged["datasets"]
    names = [row["name"] for row in section["rows"]]
    assert names == ["tiny_general", "tiny_hate", "majority class", "TF-IDF + logistic regression", TINY_EMBEDDER.name]
    assert "earlier_run" not in section["rows"][0] and section["rows"][1]["earlier_run"]


def test_a_missing_other_dataset_fails_before_any_training(benchmark_data, tmp_path: Path) -> None:
    recipe = benchmark_data["recipe"] | {"train": benchmark_data["recipe"]["train"] | {"output_dir": str(tmp_path)}}
    path = tmp_path / "tiny_hate.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    missing = Shift("ETHOS", "absent", {"type": "ethos", "root": str(tmp_path / "ethos")})
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(DATASETS, "tweeteval", replace(DATASETS["tweeteval"], shifts=(missing,)))
        with pytest.raises(FileNotFoundError, match="Ethos_Dataset_Binary.csv"):
            quiet = {"embedder": benchmark_data["embedder"], "log": lambda _: None, "transfer": False}
            run_benchmark([str(path)], workers=1, **quiet)
    assert not (tmp_path / "model").exists() and not (tmp_path / "checkpoints").exists()


def test_a_baseline_keeps_its_clean_threshold_under_a_perturbation() -> None:
    view = recipe_views(Recipe.load("hate_text_frozen"))[0]  # decides at the macro-F1 threshold
    y = np.array([0, 0, 1, 1])
    clean = np.array([[0.9, 0.1], [0.8, 0.2], [0.2, 0.8], [0.1, 0.9]])
    shifted = np.array([[0.4, 0.6], [0.3, 0.7], [0.05, 0.95], [0.01, 0.99]])  # ranked as well, every score higher
    result = measured("probe", view, y, clean, 0.0, lambda posts: shifted, {"text.spaces": []})
    assert result.metrics["macro_f1"] == 1.0
    under = result.robustness["text.spaces"]
    assert under["auroc"] == 1.0 and under["macro_f1"] < 1.0  # a threshold chosen again would separate them


def test_majority_baseline_equals_the_majority_class_rate_of_validation(benchmark_data) -> None:
    labels = benchmark_data["validation_labels"]
    majority = rows_by_name(benchmark_data["results"])["majority class"]
    rate = max(labels.count(0), labels.count(1)) / len(labels)
    assert majority["metrics"]["accuracy"] == pytest.approx(rate)
    tfidf = rows_by_name(benchmark_data["results"])["TF-IDF + logistic regression"]
    assert tfidf["value"] > majority["value"]  # the hateful words decide the label


def test_reuse_keeps_the_run_of_an_unchanged_recipe_and_retrains_a_changed_one(benchmark_data) -> None:
    weights = benchmark_data["root"] / "run" / "model" / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    first = rows_by_name(benchmark_data["results"])["tiny_hate"]
    quiet = {"workers": 1, "embedder": benchmark_data["embedder"], "log": lambda _: None, "transfer": False}
    report_path = benchmark_data["root"] / "run" / "eval" / "metrics.json"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    report["tasks"]["hate"]["metrics"]["macro_f1"] = -1.0  # a stale figure: the reused model is evaluated again
    report_path.write_text(json.dumps(report), encoding="utf-8")
    again = rows_by_name(run_benchmark([str(benchmark_data["path"])], reuse=True, **quiet))["tiny_hate"]
    assert again["reused"] is True and weights.stat().st_mtime_ns == stamp
    assert again["train_seconds"] == first["train_seconds"]
    assert again["value"] == pytest.approx(first["value"]) and again["value"] != -1.0
    changed = benchmark_data["recipe"] | {"train": benchmark_data["recipe"]["train"] | {"lr": 0.002}}
    benchmark_data["path"].write_text(yaml.safe_dump(changed), encoding="utf-8")
    retrained = rows_by_name(run_benchmark([str(benchmark_data["path"])], reuse=True, **quiet))["tiny_hate"]
    assert retrained["reused"] is False and weights.stat().st_mtime_ns != stamp


def test_a_record_from_before_an_option_existed_still_stands_for_the_recipe(benchmark_data) -> None:
    path = benchmark_data["root"] / "run" / RECORD
    record = json.loads(path.read_text(encoding="utf-8"))
    del record["recipe"]["eval"]["logit_shift"]  # written before eval.logit_shift existed, at its default
    path.write_text(json.dumps(record), encoding="utf-8")
    assert reuse_problem(Recipe.load(str(benchmark_data["path"]))) is None
    record["recipe"]["eval"]["logit_shift"] = True  # a different setting is a different model
    path.write_text(json.dumps(record), encoding="utf-8")
    assert "does not describe the model" in reuse_problem(Recipe.load(str(benchmark_data["path"])))


def test_a_named_recipe_of_an_unknown_dataset_fails_and_shipped_ones_are_skipped(tmp_path: Path) -> None:
    recipe = {
        "data": {"type": "jsonl", "train": "t.jsonl", "validation": "v.jsonl"},
        "model": {
            "encoders": {"text": {"type": "tiny_text"}},
            "fusion": {"type": "concat"},
            "heads": {"x": {"type": "binary", "labels": ["a", "b"]}},
        },
    }
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    with pytest.raises(ValueError, match="no benchmark dataset; known: tweeteval"):
        select([str(path)], log=lambda _: None)
    recipes, several, skipped = select(None, log=lambda _: None)
    assert {item["recipe"] for item in skipped} >= {"demo_multimodal"}
    assert all(benchmark_type(recipe.data) in DATASETS for recipe in recipes)
    assert "hate_text_frozen_davidson" in {Path(recipe.source).stem for recipe in recipes}  # a concat source
    # validated on all three hate datasets at once: measured by transfer and on TweetEval's posts, not skipped
    general = {"hate_text_general", "hate_text_multilingual", "hate_text_stacked"}
    assert {Path(recipe.source).stem for recipe in several} == general
    assert not {item["recipe"] for item in skipped} & general


def test_views_name_their_non_default_data_arguments_and_published_figures_follow_the_label_view() -> None:
    def liar_recipe(**data: object) -> Recipe:
        return Recipe.from_dict(
            {
                "data": {"type": "liar", "root": "liar"} | data,
                "model": {
                    "encoders": {"text": {"type": "tiny_text"}},
                    "fusion": {"type": "concat"},
                    "heads": {"truth": {"type": "multiclass", "labels": ["a", "b", "c"]}},
                },
            }
        )

    (six_way,) = recipe_views(liar_recipe())
    (binary,) = recipe_views(liar_recipe(labels="binary", metadata=True))
    assert six_way.label == "default" and binary.label == "labels=binary, metadata=True"
    assert recipe_views(liar_recipe(labels="six_way")) == [six_way]  # a default written out is the same view
    assert published_applies(DATASETS["liar"], six_way) and not published_applies(DATASETS["liar"], binary)


def concat_recipe(evaluate_on: str = "first") -> Recipe:
    return Recipe.from_dict(
        {
            "data": {
                "type": "concat",
                "evaluate_on": evaluate_on,
                "sources": [
                    {"type": "liar", "root": "liar"},
                    {"type": "davidson", "root": "davidson", "task": "truth", "labels": "binary"},
                ],
            },
            "model": {
                "encoders": {"text": {"type": "tiny_text"}},
                "fusion": {"type": "concat"},
                "heads": {"truth": {"type": "multiclass", "labels": ["a", "b", "c"]}},
            },
        }
    )


def test_a_concat_source_is_benchmarked_under_the_dataset_it_validates_on() -> None:
    (view,) = recipe_views(concat_recipe())
    assert view.source_type == "liar"
    assert view.label == "default + train on davidson (labels=binary)"
    assert published_applies(DATASETS["liar"], view)  # validation is LIAR's six-way split
    with pytest.raises(ValueError, match="concat source validating on all its members, no benchmark dataset"):
        recipe_views(concat_recipe(evaluate_on="all"))
    assert member_views(concat_recipe()) == []  # validates on its first member: benchmarked as above
    ((member, (view,)),) = member_views(concat_recipe(evaluate_on="all"))  # Davidson is no benchmark dataset
    assert member["type"] == "liar" and view.source_type == "liar" and view.task.name == "truth"
    assert view.label == "trained and validated on liar, davidson (labels=binary)"
    assert not published_applies(DATASETS["liar"], view)  # its threshold is chosen on Davidson's posts too


def test_a_pooling_recipe_gets_a_per_post_row_and_a_note() -> None:
    recipe = Recipe.load("misinfo_vmu_multimodal")
    dataset = DATASETS["vmu"]
    pooled = {"n": 10, "accuracy": 0.9, "ece": 0.1}
    per_post = {"n": 10, "accuracy": 0.7, "ece": 0.05}
    report = {"tasks": {"fake": {"metrics": pooled, "ablations": {"without_pooling": per_post}}}}
    run = RecipeRun(Path("model"), report, 3.0, "2026-01-01T00:00:00+00:00", reused=False, posts_encoded=None)
    rows = recipe_rows(recipe, dataset, run, rates={True: [2.0, 1.5], False: [4.0, 5.0]}, data="vmu validation")
    got = [(row["value"], row["pooled"], row["posts_per_second"]) for row in rows]
    assert got == [(0.9, True, 2.0), (0.7, False, 5.0)]  # the pooled row is timed scoring pooled; the fastest run
    assert [row["posts_per_second_runs"] for row in rows] == [[2.0, 1.5], [4.0, 5.0]]
    assert [row["view"].split("; ")[1] for row in rows] == ["pooled by shared picture", "per post, no pooling"]
    machine = {"platform": "p", "cpu_model": "c", "cpu_count": 2, "usable_cpus": 2, "python": "3", "torch": "t",
               "faim": "f", "load_average": 0.5}  # fmt: skip
    section = {"source": "vmu", "title": "VMU", "metric": "accuracy", "rows": rows, "published": []}
    markdown = render({"command": "c", "generated_at": "g", "machine": machine, "datasets": [section], "skipped": []})
    assert "*per post, no pooling*" in markdown and "| 0.7000 |" in markdown


def test_a_dataset_with_held_out_groups_gets_each_recipe_trained_without_each_group_and_probed(
    demo_data, tmp_path
) -> None:
    recipe = frozen_tiny_recipe(demo_data, tmp_path / "run")
    recipe["train"]["max_epochs"] = 1
    # every post: the training posts and six of another topic, which the recipe does not read
    rows = [json.loads(line) for line in demo_data["train"].read_text(encoding="utf-8").splitlines()]
    rows = [row | {"image": str(demo_data["train"].parent / row["image"])} for row in rows]
    rows += [row | {"id": f"sport-{i}", "topic": "sport"} for i, row in enumerate(rows[:6])]
    (tmp_path / "every.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    dataset = Dataset("generated", "accuracy", holdout_by="topic", every_post={"train": str(tmp_path / "every.jsonl")})
    logged: list[str] = []
    entry = holdout_entry(Recipe.from_dict(recipe), dataset, reuse=False, log=logged.append)
    trained = entry["trained"]
    # the runs of the first pass measure every post too, neither trained nor evaluated again; one more run trains
    assert sum(line.strip().startswith("training into") for line in logged) == 3
    assert not any(line.strip().startswith("reusing") for line in logged)
    assert trained["overall"]["n"] == 560 and sorted(trained["per_group"]) == ["group", "weather"]
    every_post = entry["trained_every_post"]
    assert every_post["overall"]["n"] == 566 and every_post["per_group"]["sport"]["n"] == 6
    for topic in ("group", "weather"):  # the same models on the same posts
        assert every_post["per_group"][topic] == pytest.approx(trained["per_group"][topic], nan_ok=True)
    runs = ["group", "none_left_out", "weather"]
    assert sorted(path.name for path in (tmp_path / "run" / "without").iterdir()) == runs
    assert entry["group_by"] == "topic" and entry["reads"] == ["comments", "image", "text"]
    assert entry["recipe_split"]["n"] == 160 and entry["leave_one_out"]["n"] == 560
    assert entry["leave_one_out"]["groups"] == 2 and sorted(entry["per_group"]) == ["group", "weather"]
    machine = {"platform": "p", "cpu_model": "c", "cpu_count": 2, "usable_cpus": 2, "python": "3", "torch": "t",
               "faim": "f", "load_average": 0.5}  # fmt: skip
    section = {"source": "x", "title": "X", "metric": "accuracy", "rows": [], "published": [], "holdouts": [entry]}
    markdown = render({"command": "c", "generated_at": "g", "machine": machine, "datasets": [section], "skipped": []})
    assert "### Held out by topic: a probe of each recipe's frozen embeddings" in markdown
    split, held_out = entry["recipe_split"], entry["leave_one_out"]
    row = (
        f"| `{entry['name']}` | comments, image, text | 2 | 160 | {split['accuracy']:.4f} | {split['auroc']:.4f} | "
        f"{split['ece']:.4f} | 2 | 560 | {held_out['accuracy']:.4f} | {held_out['auroc']:.4f} | "
        f"{held_out['ece']:.4f} | {held_out['ece_transferred']:.4f} |"
    )
    assert row in markdown
    assert "### Held out by topic: each recipe trained without it" in markdown
    for label, figures in (("those it reads", trained["overall"]), ("*every post*", every_post["overall"])):
        assert (
            f"| `{entry['name']}` | {label} | {figures['groups']} | {figures['n']} | {figures['accuracy']:.4f} | "
            f"{figures['macro_f1']:.4f} | {figures['auroc']:.4f} | {figures['ece']:.4f} |"
        ) in markdown
    assert markdown.index("each recipe trained without it") < markdown.index("a probe of each recipe's")


def test_a_cpuinfo_field_is_the_first_processors_and_empty_where_absent(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu avx2 avx512_vnni\n\n"
        "processor\t: 1\nmodel name\t: Other CPU\nflags\t\t: fpu\n"
    )
    assert cpuinfo_field("model name", cpuinfo) == "Some CPU"
    assert cpuinfo_field("flags", cpuinfo).split() == ["fpu", "avx2", "avx512_vnni"]
    assert cpuinfo_field("microcode", cpuinfo) == "" and cpuinfo_field("flags", tmp_path / "absent") == ""


def test_a_baselines_threshold_falls_back_as_a_recipes_does_where_the_precision_target_is_unreachable() -> None:
    view = View("default", "{}", TaskSpec("hate", "binary", ("no", "yes")), "recall@precision", 0.99)
    y = np.array([0, 1, 0, 1, 1, 0])
    positive = np.array([0.9, 0.8, 0.7, 0.6, 0.3, 0.2])  # the top score a negative: no cut is 0.99 precise
    with pytest.warns(TargetUnreachableWarning, match="task 'hate': no threshold reaches precision 0.99"):
        threshold = tuned_threshold(view, y, np.stack([1 - positive, positive], axis=1))
    sweep = threshold_sweep(y, positive)
    assert sweep.precision[sweep.thresholds == threshold].item() == pytest.approx(sweep.precision.max())


@pytest.mark.parametrize("seeds", ["0", "-1", "two"])
def test_a_seed_count_that_is_not_a_whole_number_of_at_least_one_is_refused_before_any_work(
    seeds: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--seeds", seeds, "--out", str(tmp_path / "RESULTS.md")])
    assert exit_info.value.code == 2 and f"got {seeds!r}" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("workers", ["0", "-2", "all"])
def test_a_worker_count_below_one_is_refused_before_any_recipe_is_trained(
    workers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def benchmark(*args, **kwargs):
        raise AssertionError("the benchmark ran")

    monkeypatch.setattr("faim.eval.benchmark.run_benchmark", benchmark)
    with pytest.raises(SystemExit) as exit_info:
        main(["--workers", workers, "--out", str(tmp_path / "RESULTS.md")])
    assert (
        exit_info.value.code == 2
        and f"argument --workers: expected a whole number of at least 1, got {workers!r}" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("folder", "folder: is a folder, not a file"),
        ("file/RESULTS.md", "file: is a file, not a folder (it would hold"),
    ],
)
def test_an_out_path_that_cannot_be_written_is_refused_before_any_recipe_is_trained(
    out: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("", encoding="utf-8")

    def benchmark(*args, **kwargs):
        raise AssertionError("the benchmark ran")

    monkeypatch.setattr("faim.eval.benchmark.run_benchmark", benchmark)
    with pytest.raises(SystemExit) as exit_info:
        main(["--out", str(tmp_path / out)])
    assert exit_info.value.code == 2 and f"argument --out: {tmp_path / said}" in capsys.readouterr().err


def test_run_benchmark_refuses_a_seed_count_below_one_before_reading_any_recipe(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seeds must be 1 or more, not 0"):
        run_benchmark([str(tmp_path / "missing.yaml")], seeds=0)


@pytest.mark.parametrize(
    ("earlier", "problem"),
    [
        ('{"command": "python -m faim.eval.benchmark", "generated_at": "2026-11-2', "is not JSON"),
        ("[]", "is not a JSON object"),
        ('{"command": "c", "generated_at": "t"}', "lacks 'datasets'"),
    ],
)
def test_merge_refuses_an_earlier_results_file_it_cannot_read_before_anything_is_trained(
    earlier: str, problem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.json"
    results.write_text(earlier, encoding="utf-8")

    def benchmark(*args, **kwargs):
        raise AssertionError("the benchmark ran")

    monkeypatch.setattr("faim.eval.benchmark.run_benchmark", benchmark)
    assert main(["--merge", "--only", "hate_text_frozen", "--out", str(tmp_path / "RESULTS.md")]) == 2
    error = capsys.readouterr().err
    assert f"--merge: {results}: {problem}" in error and "Traceback" not in error
    assert results.read_text(encoding="utf-8") == earlier and not (tmp_path / "RESULTS.md").exists()


def test_results_cut_short_while_written_leave_the_earlier_files_whole(
    benchmark_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "RESULTS.md"
    write_results(benchmark_data["results"], out)
    before = {path.name: path.read_text(encoding="utf-8") for path in (out, tmp_path / "results.json")}

    def cut_short(path: Path, text: str, *args, **kwargs) -> int:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text[: len(text) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", cut_short)
    with pytest.raises(OSError, match="No space left"):
        write_results(benchmark_data["results"] | {"command": "again"}, out)
    monkeypatch.undo()
    assert {path.name: path.read_text(encoding="utf-8") for path in tmp_path.iterdir()} == before


@pytest.mark.parametrize(
    ("rows", "runs", "failed", "said"),
    [
        (1, 1, 1, "scored 1 validation post per post, 1 time: 4.0 posts/s (1 row failed)"),
        (2, 3, 0, "scored 2 validation posts per post, 3 times: 4.0, 4.0, 4.0 posts/s (0 rows failed)"),
    ],
)
def test_timed_scoring_counts_its_posts_runs_and_failed_rows_in_words(
    rows: int, runs: int, failed: int, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = SimpleNamespace(rows=rows, rows_per_second=4.0, errors=Counter({"unreadable": failed}))
    monkeypatch.setattr("faim.eval.benchmark.scoring_throughput", lambda *args, **kwargs: [summary] * runs)
    logged: list[str] = []
    timed_scoring(Path("model"), [], None, False, logged.append)
    assert logged == [f"  {said}"]

"""Hate recipes beyond the data they train on: labelled posts in another language or from another source, the figures
measured on them, the table."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from conftest import tiny_hate_recipe

from faim.eval.benchmark_languages import OutsideSet, indonesian_posts, run_languages, toxigen_posts
from faim.eval.benchmark_languages_report import language_sections
from faim.eval.benchmark_runs import RecipeRun
from faim.recipe import Recipe

HATEFUL = ["vermin", "scum", "parasites"]


def write_json(path: Path, statements: list[dict]) -> Path:
    path.write_text(json.dumps(statements), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[tuple[str, str]]) -> Path:
    lines = ["Nomor,Label,Teks"] + [f'{n},{label},"{text}"' for n, (label, text) in enumerate(rows, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("languages")
    rng = random.Random(0)
    for split, size in (("train", 200), ("validation", 100)):
        lines = []
        for i in range(size):
            label = int(rng.random() < 0.4)
            words = rng.choices(["weather", "coffee", "music", "garden"], k=4) + (
                [rng.choice(HATEFUL)] if label else []
            )
            lines.append(json.dumps({"id": f"{split}-{i}", "text": " ".join(words), "hate": label}))
        (root / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = {"type": "jsonl", "train": str(root / "train.jsonl"), "validation": str(root / "validation.jsonl"),
            "columns": {"labels": {"hate": "hate"}}}  # fmt: skip
    recipe = tiny_hate_recipe(data, root)
    path = root / "tiny_hate.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    rows = [("HS", f"dasar {rng.choice(HATEFUL)} kalian") for _ in range(12)] + [
        ("NHS", "selamat pagi") for _ in range(18)
    ]
    present = OutsideSet("id", "Indonesian", write_csv(root / "id.csv", rows), "30 generated posts", indonesian_posts)
    texts = [f"they are {HATEFUL[i % 3]}" for i in range(6)] + ["they live here"] * 4
    statements = [{"id": i, "text": text, "is_toxic": i < 6, "target_group": "g"} for i, text in enumerate(texts)]
    english = OutsideSet("en", "Statements", write_json(root / "statements.json", statements), "10", toxigen_posts)
    absent = OutsideSet("xx", "Elsewhere", root / "missing.csv", "not here", indonesian_posts)
    results = run_languages([Recipe.load(path)], False, lambda _: None, (present, english, absent))
    return {"results": results, "present": present, "path": path, "run": root / "run"}


def test_each_recipe_is_measured_on_each_set_present_and_a_missing_set_is_named(measured) -> None:
    results = measured["results"]
    assert results["missing"] == [{"name": "Elsewhere", "path": str(measured["present"].path.parent / "missing.csv")}]
    (row,) = results["rows"]
    assert row["name"] == "tiny_hate"
    figures = row["sets"]["Indonesian"]
    assert figures["n"] == 30 and 0 <= figures["auroc"] <= 1 and 0 <= figures["macro_f1"] <= 1
    assert row["sets"]["Statements"]["n"] == 10
    assert row["validation"]["all"]["n"] == 100


def test_the_table_gives_each_set_s_figures_and_says_how_to_get_a_missing_one(measured) -> None:
    text = "\n".join(language_sections(measured["results"]))
    figures = measured["results"]["rows"][0]["sets"]["Indonesian"]
    assert "## Hate speech beyond the datasets trained on: other languages, other sources" in text
    assert "**Statements** (en): 10" in text
    assert f"| `tiny_hate` | {measured['results']['rows'][0]['validation']['all']['macro_f1']:.4f} |" in text
    assert f"{figures['macro_f1']:.4f} | {figures['auroc']:.4f} | {figures['ece']:.4f} |" in text
    assert "Elsewhere" in text and "make outside-data" in text


def test_a_label_other_than_hs_or_nhs_names_its_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "bad.csv", [("HS", "a"), ("maybe", "b")])
    with pytest.raises(ValueError, match=r"bad.csv:3: Label 'maybe' is neither HS nor NHS"):
        indonesian_posts(path)
    with pytest.raises(FileNotFoundError, match="make outside-data"):
        indonesian_posts(tmp_path / "absent.csv")
    assert [
        post.labels["hate"] for post in indonesian_posts(write_csv(tmp_path / "ok.csv", [("HS", "a"), ("NHS", "b")]))
    ] == [1, 0]


def test_toxigen_statements_are_english_posts_labelled_toxic_as_hate_and_a_bad_one_is_named(tmp_path: Path) -> None:
    good = {"id": 7, "text": "they are parasites", "is_toxic": True, "target_group": "jewish"}
    (post,) = toxigen_posts(write_json(tmp_path / "one.json", [good]))
    assert post.id == "toxigen-7" and post.labels == {"hate": 1}
    assert post.meta == {"lang": "en", "target_group": "jewish"}
    assert toxigen_posts(write_json(tmp_path / "kind.json", [good | {"is_toxic": False}]))[0].labels == {"hate": 0}
    bad = [good, good | {"is_toxic": "yes"}]
    with pytest.raises(ValueError, match=r"bad.json: statement 1: is_toxic 'yes' is neither true nor false"):
        toxigen_posts(write_json(tmp_path / "bad.json", bad))
    with pytest.raises(ValueError, match=r"statement 0: no text, target_group"):
        toxigen_posts(write_json(tmp_path / "short.json", [{"id": 1, "is_toxic": True}]))
    with pytest.raises(ValueError, match=r"statement 1: the text is empty"):
        toxigen_posts(write_json(tmp_path / "empty.json", [good, good | {"text": "  "}]))
    with pytest.raises(FileNotFoundError, match="make outside-data"):
        toxigen_posts(tmp_path / "absent.json")


def test_a_run_the_caller_made_already_is_measured_instead_of_training_again(measured) -> None:
    recipe = Recipe.load(measured["path"])
    report = {"tasks": {"hate": {"metrics": {"macro_f1": 0.123, "n": 100}}}}  # stands out from any measured figure
    given = RecipeRun(measured["run"] / "model", report, 1.0, "2026-01-01T00:00:00+00:00", False, None)
    weights = (measured["run"] / "model" / "model.safetensors").stat().st_mtime_ns
    results = run_languages([recipe], False, lambda _: None, (measured["present"],), runs={recipe.source: given})
    assert results["rows"][0]["validation"]["all"]["macro_f1"] == 0.123
    assert results["rows"][0]["sets"]["Indonesian"] == measured["results"]["rows"][0]["sets"]["Indonesian"]
    assert (measured["run"] / "model" / "model.safetensors").stat().st_mtime_ns == weights  # not trained again

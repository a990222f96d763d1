"""The recipe trained without each group in turn and measured on it, on the generated demo data (two topics)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import yaml

from faim.artifact_manifest import FORMAT_VERSION, MANIFEST, REQUIRED
from faim.assembly import build_source
from faim.data import language as language_module
from faim.data.targets import TaskSpec
from faim.data.without import read_as_now
from faim.eval import benchmark_runs
from faim.eval import trained_holdout as trained_holdout_module
from faim.eval.benchmark_runs import reuse_problem
from faim.eval.trained_holdout import (
    HeldOut,
    TrainedHoldout,
    figures,
    format_result,
    held_out,
    main,
    plan_folds,
    run_folders,
    trained_holdout,
    with_output,
)
from faim.recipe import Recipe, as_recipe
from faim.recipe.compare import plain
from faim.training.run import RECORD
from tests.conftest import frozen_tiny_recipe, tiny_recipe

TASK = TaskSpec("harmful", "binary", ["benign", "harmful"])


def quiet(items, **_):
    return items


def one_epoch(demo_data: dict[str, Path], root: Path) -> dict:
    recipe = tiny_recipe(demo_data, root / "run", max_epochs=1)
    recipe["eval"]["ablations"] = False
    return recipe


def test_each_group_is_measured_by_a_model_that_never_saw_it_as_its_evaluation_measures(demo_data, tmp_path):
    torch.manual_seed(0)
    mapping = frozen_tiny_recipe(demo_data, tmp_path / "run")
    mapping["train"]["max_epochs"] = 1
    mapping["eval"] |= {"pool_by_image": 0.99, "ablations": False}
    recipe = as_recipe(mapping)
    logged: list[str] = []
    folds = plan_folds(recipe, TASK, "topic", tmp_path / "holdout")
    result = trained_holdout(folds, TASK, log=logged.append, progress=quiet)
    assert sorted(result.per_group) == ["group", "weather"]
    assert result.overall["n"] == 560 == sum(m["n"] for m in result.per_group.values())
    assert result.overall["groups"] == 2
    for name, fold in folds.items():
        run = tmp_path / "holdout" / name
        data = yaml.safe_load((run / "model" / "recipe.yaml").read_text(encoding="utf-8"))["data"]
        assert data["type"] == "without" and data["field"] == "topic" and data["values"] == [name]
        assert data["source"] == recipe.data_section
        assert not (run / "checkpoints").exists()  # removed once the model is saved
        trained_on = build_source(fold.recipe.data_section)
        assert {p.meta["topic"] for split in ("train", "validation") for p in trained_on.posts(split)} == {
            "group",
            "weather",
        } - {name}
        # the held-out scoring is the evaluation's: on the run's own validation posts it gives metrics.json's figures
        report = json.loads((run / "eval" / "metrics.json").read_text(encoding="utf-8"))["tasks"]["harmful"]["metrics"]
        own = figures(TASK, [held_out(fold.recipe, run / "model", TASK, trained_on.posts("validation"))], 15)
        assert own["accuracy"] == pytest.approx(report["accuracy"]) and own["ece"] == pytest.approx(report["ece"])
        assert own["macro_f1"] == pytest.approx(report["macro_f1"])
    weighted = sum(m["accuracy"] * m["n"] for m in result.per_group.values()) / result.overall["n"]
    assert result.overall["accuracy"] == pytest.approx(weighted)
    assert any("without topic 'group'" in line for line in logged)
    trained_at = json.loads((tmp_path / "holdout/group/train_record.json").read_text())["trained_at"]
    again = trained_holdout(folds, TASK, reuse=True, log=logged.append, progress=quiet)
    assert any(line.strip().startswith("reusing") for line in logged)
    assert json.loads((tmp_path / "holdout/group/train_record.json").read_text())["trained_at"] == trained_at
    assert again.overall == pytest.approx(result.overall, nan_ok=True)


def write_jsonl(path: Path, topics: list) -> str:
    rows = [{"id": f"{path.stem}{i}", "text": f"post {i}", "label": i % 2, "topic": t} for i, t in enumerate(topics)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def text_recipe(tmp_path: Path, train: list, validation: list) -> dict:
    return {
        "data": {
            "type": "jsonl",
            "train": write_jsonl(tmp_path / "train.jsonl", train),
            "validation": write_jsonl(tmp_path / "val.jsonl", validation),
            "columns": {"labels": {"harmful": "label"}, "meta": ["topic"]},
        },
        "model": {
            "encoders": {"text": {"type": "tiny_text", "dim": 8}},
            "fusion": {"type": "concat"},
            "heads": {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}},
        },
        "train": {"max_epochs": 1, "output_dir": str(tmp_path / "run"), "cache_dir": str(tmp_path / "cache")},
    }


def test_a_group_whose_values_differ_in_type_is_left_out_whole(tmp_path):
    # 1 (a number) and "1" (a string) read as one group: leaving it out must drop both, or validation keeps some
    recipe = as_recipe(text_recipe(tmp_path, [1, 2, 1, 2, "3", "3"], ["1", "2", 3, "3"]))
    folds = plan_folds(recipe, TASK, "topic", tmp_path / "holdout")
    assert sorted(folds) == ["1", "2", "3"] and [len(fold.posts) for fold in folds.values()] == [3, 3, 4]
    assert folds["1"].recipe.data_section["values"] == [1, "1"]
    left = build_source(folds["1"].recipe.data_section)
    assert {str(p.meta["topic"]) for split in ("train", "validation") for p in left.posts(split)} == {"2", "3"}


@pytest.mark.parametrize(("spelt", "named"), [("None", "None"), ("(missing)", '"(missing)"')])
def test_a_post_without_a_group_is_not_of_the_group_spelt_as_missing_values_are(spelt, named, tmp_path):
    # a post of no topic (unlabelled, so not measured) is missing from every group, as faim eval's slices say
    recipe = text_recipe(tmp_path, [spelt, "b"] * 2, [spelt, "b"] * 2)
    unlabelled = {"id": "val-unlabelled", "text": "post", "topic": None}
    with open(recipe["data"]["validation"], "a", encoding="utf-8") as file:
        file.write(json.dumps(unlabelled) + "\n")
    folds = plan_folds(as_recipe(recipe), TASK, "topic", tmp_path / "holdout")
    assert sorted(folds) == sorted([named, "b"])
    assert folds[named].recipe.data_section["values"] == [spelt]  # the post of no topic is not left out with it


def test_grouped_by_language_a_post_giving_none_is_of_the_language_it_is_written_in(tmp_path):
    texts = {"es": "no puedo creer lo que está pasando en esta ciudad hoy", "en": "i cannot believe what happened here"}
    recipe = text_recipe(tmp_path, ["a"] * 8, ["a"] * 4)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):
        path = Path(recipe["data"][split])
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for i, row in enumerate(rows):  # of each language, every other post gives its code, in capitals
            row["text"] = f"{texts['es' if i % 2 else 'en']} {i}"
            row |= {"lang": "ES" if i % 2 else "ENG"} if i % 4 < 2 else {}
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    folds = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")
    assert sorted(folds) == ["en", "es"] and [len(fold.posts) for fold in folds.values()] == [6, 6]
    for name, fold in folds.items():
        assert fold.recipe.data_section["values"] == [name]
        left = build_source(fold.recipe.data_section)
        assert {post.id for split in ("train", "validation") for post in left.posts(split)} == {
            post.id for other, kept in folds.items() if other != name for post in kept.posts
        }


@pytest.mark.parametrize("reading", [None, "code"])
def test_a_language_fold_an_earlier_faim_trained_reading_codes_otherwise_is_not_reused(tmp_path, reading):
    recipe = text_recipe(tmp_path, ["a", "b"] * 4, ["a", "b"] * 2)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):  # es, ES or es-MX, en, en in turn: an earlier faim held them out apart
        path = Path(recipe["data"][split])
        other = "es-MX" if reading else "ES"
        rows = [json.loads(line) | {"lang": ["es", other, "en", "en"][i % 4]} for i, line in enumerate(path.open())]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    fold = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["es"].recipe
    earlier = fold.to_dict()
    earlier["data"] = {key: value for key, value in earlier["data"].items() if key not in ("read_lang", "left_out")}
    earlier["data"] |= {"read_lang": reading} if reading else {}
    assert earlier["data"]["values"] == ["es"]  # as the earlier faim wrote the fold of es, trained on the other posts
    model = Path(fold.train.output_dir) / "model"
    (model.parent / "eval").mkdir(parents=True)
    model.mkdir()
    (model / "recipe.yaml").write_text(yaml.safe_dump(earlier), encoding="utf-8")
    for path in (model / MANIFEST, model.parent / RECORD, model.parent / "eval" / "metrics.json"):
        path.write_text("{}", encoding="utf-8")
    assert "the recipe changed" in reuse_problem(fold)
    assert "read_lang" in reuse_problem(fold)


def test_a_language_fold_an_earlier_faim_trained_reading_codes_is_reused_where_every_post_reads_alike(tmp_path):
    recipe = text_recipe(tmp_path, ["a", "b"] * 4, ["a", "b"] * 2)
    recipe["data"]["columns"]["meta"] = ["lang"]
    languages = {"train": ["es", "ES", "en", "eng"], "validation": ["es", "es", "en", "en"]}
    for split, codes in languages.items():
        path = Path(recipe["data"][split])
        rows = [json.loads(line) | {"lang": codes[i % 4]} for i, line in enumerate(path.open())]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    fold = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["es"].recipe
    earlier = fold.to_dict()
    earlier["data"] = {key: value for key, value in earlier["data"].items() if key != "left_out"}
    earlier["data"]["read_lang"] = "code"  # as an earlier faim wrote the fold of es: each post read alike then
    as_trained_into(Recipe.from_dict(earlier), Path(fold.train.output_dir))
    assert reuse_problem(fold) is None
    path = Path(recipe["data"]["validation"])  # a post of es-MX, es now and es-mx then: trained again
    alike = path.read_text(encoding="utf-8")
    path.write_text(alike.replace('"lang": "en"', '"lang": "es-MX"', 1), encoding="utf-8")
    assert "data.read_lang: 'code' -> 'language'" in reuse_problem(fold)
    # a post giving no meta.lang is of the language its text is told in, which may have changed since: trained again
    path.write_text(alike.replace(', "lang": "en"', "", 1), encoding="utf-8")
    assert "data.read_lang: 'code' -> 'language'" in reuse_problem(fold)


def test_a_language_fold_an_earlier_faim_trained_reading_codes_is_read_once_to_be_reused(tmp_path, monkeypatch):
    recipe = text_recipe(tmp_path, ["a", "b"] * 4, ["a", "b"] * 2)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):
        path = Path(recipe["data"][split])
        rows = [json.loads(line) | {"lang": ["es", "en"][i % 2]} for i, line in enumerate(path.open())]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    folds = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")
    fold = folds["es"].recipe
    earlier = fold.to_dict()
    earlier["data"] = {key: value for key, value in earlier["data"].items() if key != "left_out"}
    earlier["data"]["read_lang"] = "code"  # as an earlier faim wrote the fold of es: each post read alike then
    as_trained_into(Recipe.from_dict(earlier), Path(fold.train.output_dir))
    record = Path(fold.train.output_dir) / RECORD
    record.write_text(json.dumps(json.loads(record.read_text()) | {"trained_at": "then", "train_seconds": 1.0}))
    reads = []
    monkeypatch.setattr(benchmark_runs, "read_as_now", lambda *given: reads.append(given) or read_as_now(*given))
    monkeypatch.setattr(benchmark_runs, "evaluate_run", lambda *_: {})
    monkeypatch.setattr(
        trained_holdout_module, "held_out", lambda *_: HeldOut(np.array([0, 1]), np.array([0.2, 0.9]), np.array([0, 1]))
    )
    logged = []
    trained_holdout({"es": folds["es"]}, TASK, reuse=True, log=logged.append, progress=quiet)
    assert any(line.startswith("  reusing ") for line in logged)
    assert len(reads) == 1  # each reads every post of its source


def test_a_language_fold_is_not_reused_once_the_detector_tells_a_post_giving_no_language_otherwise(
    tmp_path, monkeypatch
):
    texts = {"es": "no puedo creer lo que está pasando en esta ciudad hoy", "en": "i cannot believe what happened here"}
    recipe = text_recipe(tmp_path, ["a"] * 8, ["a"] * 4)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):  # every other post gives its language, the others are told
        path = Path(recipe["data"][split])
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for i, row in enumerate(rows):
            row["text"] = f"{texts['es' if i % 2 else 'en']} {i}"
            row |= {"lang": "es" if i % 2 else "en"} if i % 4 < 2 else {}
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    fold = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["es"].recipe
    as_trained_into(fold, Path(fold.train.output_dir))
    assert reuse_problem(plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["es"].recipe) is None
    told = language_module.identify  # a detector of another version, telling the English post train2 as Spanish
    monkeypatch.setattr(language_module, "identify", lambda text: "es" if text == f"{texts['en']} 2" else told(text))
    now = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["es"].recipe
    assert "the recipe changed" in reuse_problem(now) and "data.left_out" in reuse_problem(now)


def test_a_language_fold_is_not_reused_once_the_posts_giving_a_language_are_read_otherwise(tmp_path, monkeypatch):
    recipe = text_recipe(tmp_path, ["a"] * 8, ["a"] * 4)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):  # every post gives its language: tl, fil, en, en in turn
        path = Path(recipe["data"][split])
        rows = [json.loads(line) | {"lang": ["tl", "fil", "en", "en"][i % 4]} for i, line in enumerate(path.open())]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with monkeypatch.context() as earlier:  # a faim reading fil apart from tl trained tl's fold with fil's posts
        earlier.setattr(language_module, "TOLD_AS", {})
        fold = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["tl"].recipe
        as_trained_into(fold, Path(fold.train.output_dir))
        assert reuse_problem(fold) is None
    now = plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["tl"]
    assert now.recipe.train.output_dir == fold.train.output_dir and len(now.posts) == 6  # fil's posts held out now
    assert "the recipe changed" in reuse_problem(now.recipe) and "data.left_out" in reuse_problem(now.recipe)


def test_a_language_is_told_once_of_each_post_giving_none(tmp_path, monkeypatch):
    recipe = text_recipe(tmp_path, ["a"] * 8, ["a"] * 4)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):  # every other post gives no language
        path = Path(recipe["data"][split])
        rows = [
            json.loads(line) | ({"lang": "es" if i % 4 == 1 else "en"} if i % 2 else {})
            for i, line in enumerate(path.open())
        ]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    told = []
    identify = language_module.identify
    monkeypatch.setattr(language_module, "identify", lambda text: told.append(text) or identify(text))
    plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")
    assert sorted(told) == ["post 0", "post 2", "post 4", "post 6"]  # the validation split's post 0 and 2 alike


def test_a_language_is_told_once_of_each_text_trained_on_and_measured_alike(tmp_path, monkeypatch):
    recipe = text_recipe(tmp_path, ["a"] * 8, ["a"] * 4)
    recipe["data"]["columns"]["meta"] = ["lang"]
    for split in ("train", "validation"):  # every other post gives no language
        path = Path(recipe["data"][split])
        rows = [
            json.loads(line) | {"text": f"{split} post {i}"} | ({"lang": "es" if i % 4 == 1 else "en"} if i % 2 else {})
            for i, line in enumerate(path.open())
        ]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    wider = tmp_path / "wider.jsonl"  # measured: the validation posts and two more giving none
    extra = [{"id": f"x{i}", "text": f"other post {i}", "label": i % 2, "topic": "a"} for i in range(2)]
    wider.write_text(Path(recipe["data"]["validation"]).read_text() + "".join(json.dumps(r) + "\n" for r in extra))
    told = []
    identify = language_module.identify
    monkeypatch.setattr(language_module, "identify", lambda text: told.append(text) or identify(text))
    recipe = as_recipe(recipe)
    plan_folds(recipe, TASK, "lang", tmp_path / "holdout", recipe.data_section | {"validation": str(wider)})
    once = [f"train post {i}" for i in (0, 2, 4, 6)] + ["validation post 0", "validation post 2", "other post 0"]
    assert sorted(told) == sorted([*once, "other post 1"])  # the validation posts measured are not told again


def test_a_language_folds_record_of_the_posts_it_leaves_out_is_of_those_posts_wherever_they_stand(tmp_path):
    recipe = text_recipe(tmp_path, ["a"] * 8, ["a"] * 4)
    recipe["data"]["columns"]["meta"] = ["lang"]
    written = {}
    for split in ("train", "validation"):  # es and en in turn
        path = Path(recipe["data"][split])
        written[split] = [json.loads(line) | {"lang": ["es", "en"][i % 2]} for i, line in enumerate(path.open())]

    def left_out(rows: dict[str, list[dict]]) -> str:
        for split, kept in rows.items():
            Path(recipe["data"][split]).write_text("".join(json.dumps(row) + "\n" for row in kept), encoding="utf-8")
        return plan_folds(as_recipe(recipe), TASK, "lang", tmp_path / "holdout")["es"].recipe.data_section["left_out"]

    trained = left_out(written)
    assert left_out({split: rows[::-1] for split, rows in written.items()}) == trained  # the same posts, reordered
    others = {
        split: [row | {"id": f"other-{row['id']}", "text": "other"} for row in rows] for split, rows in written.items()
    }
    assert left_out(others) != trained  # other posts where the posts left out stood


def test_groups_named_in_any_script_train_into_folders_of_their_own(tmp_path):
    topics = ["政治", "体育", "खेल", "Москва", "café", ".."]  # each was "group" (Latin letters kept alone), or ".."
    recipe = as_recipe(text_recipe(tmp_path, topics * 2, topics))
    folds = plan_folds(recipe, TASK, "topic", tmp_path / "holdout")
    folders = {name: Path(fold.recipe.train.output_dir) for name, fold in folds.items()}
    assert folders == {name: tmp_path / "holdout" / name for name in topics[:-1]} | {"..": tmp_path / "holdout/group"}


def test_groups_whose_folders_would_be_one_train_into_folders_numbered_apart(tmp_path):
    topics = ["Sport", "sport", "sport-2", "a b", "a_b"]  # Sport and sport: one folder on macOS and Windows
    recipe = as_recipe(text_recipe(tmp_path, topics * 2, topics))
    folds = plan_folds(recipe, TASK, "topic", tmp_path / "holdout")
    folders = {name: Path(fold.recipe.train.output_dir).name for name, fold in folds.items()}
    assert folders == {"Sport": "Sport", "sport": "sport-3", "sport-2": "sport-2", "a b": "a_b", "a_b": "a_b-2"}


def test_groups_named_too_long_for_a_folder_train_into_folders_of_names_cut_short_and_apart(tmp_path):
    topics = ["a", "b" * 300, "b" * 301, "政" * 100]  # 300, 301 and 300 bytes: no folder's name may take more than 255
    folds = plan_folds(as_recipe(text_recipe(tmp_path, topics * 2, topics)), TASK, "topic", tmp_path / "holdout")
    folders = [Path(fold.recipe.train.output_dir).name for fold in folds.values()]
    assert len({folder.casefold() for folder in folders}) == 4 and max(len(name.encode()) for name in folders) == 255
    (tmp_path / "holdout").mkdir()
    for folder in folders:
        (tmp_path / "holdout" / folder).mkdir()  # as training makes it


def test_groups_named_as_windows_names_a_device_train_into_folders_windows_makes():
    # con, NUL or com1.x: a folder Windows cannot make, its name kept for a device, in any case and before an extension
    groups = ["con", "NUL", "com1.x", "Con_", "lpt\u00b2", "console", "aux.tar.gz"]
    folders = run_folders(groups)
    assert folders == {
        "con": "con_",
        "NUL": "NUL_",
        "com1.x": "com1_.x",
        "Con_": "Con_-2",
        "lpt\u00b2": "lpt\u00b2_",
        "console": "console",
        "aux.tar.gz": "aux_.tar.gz",
    }


def as_trained_into(fold: Recipe, folder: Path) -> None:
    """The files ``--reuse`` reads of a run of ``fold`` trained into ``folder`` (its model's weights aside)."""
    recipe = plain(with_output(fold, folder))
    (folder / "eval").mkdir(parents=True)
    (folder / "model").mkdir()
    (folder / "model" / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    manifest = dict.fromkeys(REQUIRED) | {"format": FORMAT_VERSION, "files": {"model.safetensors": "0"}}
    (folder / "model" / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    (folder / RECORD).write_text(json.dumps({"recipe": recipe, "weights_sha256": "0"}), encoding="utf-8")
    (folder / "eval" / "metrics.json").write_text(json.dumps({"split": "validation"}), encoding="utf-8")


@pytest.fixture
def taken(monkeypatch) -> dict[str, Path]:
    """The run folder each fold of a trained_holdout is trained in or reused from, by the group it leaves out: no
    fold trains, and each measures the same two posts."""
    folders: dict[str, Path] = {}

    def train_or_reuse(recipe, reuse, log, problem):
        folders[recipe.data_section["values"][0]] = Path(recipe.train.output_dir)
        return SimpleNamespace(model_dir=Path(recipe.train.output_dir) / "model")

    monkeypatch.setattr(trained_holdout_module, "train_or_reuse", train_or_reuse)
    monkeypatch.setattr(
        trained_holdout_module, "held_out", lambda *_: HeldOut(np.array([0, 1]), np.array([0.2, 0.9]), np.array([0, 1]))
    )
    return folders


def test_reuse_takes_a_fold_from_the_folder_an_earlier_faim_trained_it_into_and_only_a_fold_of_the_same_posts(
    tmp_path, taken
):
    runs = tmp_path / "holdout"
    (tmp_path / "earlier").mkdir()
    topics = ["café", "Sport", "sport", "Football"]
    folds = plan_folds(as_recipe(text_recipe(tmp_path / "earlier", topics * 2, topics)), TASK, "topic", runs)
    as_trained_into(folds["café"].recipe, runs / "caf")  # before folders kept letters of any script
    as_trained_into(folds["sport"].recipe, runs / "sport")  # before Sport and sport were numbered apart, on Linux
    as_trained_into(folds["Sport"].recipe, runs / "Sport-2")  # numbered beside a group SPORT since gone
    as_trained_into(folds["Sport"].recipe, runs / "Football-2")  # another group's run: not Football's
    trained_holdout(folds, TASK, reuse=True, log=lambda _: None, progress=quiet)
    assert taken == {
        "café": runs / "caf",
        "sport": runs / "sport",
        "Sport": runs / "Sport-2",
        "Football": runs / "Football",
    }
    taken.clear()
    (tmp_path / "now").mkdir()
    topics = ["café", "caf"]  # the run café trained into caf, which caf's fold now trains into: never taken
    folds = plan_folds(as_recipe(text_recipe(tmp_path / "now", topics * 2, topics)), TASK, "topic", runs)
    trained_holdout(folds, TASK, reuse=True, log=lambda _: None, progress=quiet)
    assert taken == {"café": runs / "café", "caf": runs / "caf"}


def test_reuse_takes_a_fold_an_earlier_faim_trained_into_a_folder_named_as_a_windows_device(tmp_path, taken):
    # before folders of device names took a _, CON and con trained into CON and con-2, and lpt² into lpt²; --reuse
    # looked in con, con_ and lpt, lpt²_ alone, and trained them again
    runs = tmp_path / "holdout"
    topics = ["CON", "con", "lpt\u00b2", "nul"]
    folds = plan_folds(as_recipe(text_recipe(tmp_path, topics * 2, topics)), TASK, "topic", runs)
    as_trained_into(folds["CON"].recipe, runs / "CON")
    as_trained_into(folds["con"].recipe, runs / "con-2")
    as_trained_into(folds["lpt\u00b2"].recipe, runs / "lpt\u00b2")
    as_trained_into(folds["CON"].recipe, runs / "nul")  # another group's run: not nul's
    trained_holdout(folds, TASK, reuse=True, log=lambda _: None, progress=quiet)
    assert taken == {
        "CON": runs / "CON",
        "con": runs / "con-2",
        "lpt\u00b2": runs / "lpt\u00b2",
        "nul": runs / "nul_",
    }


def test_folds_that_cannot_train_are_refused_before_any_does(demo_data, tmp_path):
    only_validation_group = as_recipe(text_recipe(tmp_path, ["a", "b"] * 4, ["c"] * 4))
    with pytest.raises(ValueError, match="leaving out topic 'c' leaves <dict> no validation post"):
        plan_folds(only_validation_group, TASK, "topic", tmp_path / "holdout")
    only_train_group = as_recipe(text_recipe(tmp_path, ["a"] * 4, ["a", "b"] * 2))
    with pytest.raises(ValueError, match="leaving out topic 'a' leaves <dict> no train post"):
        plan_folds(only_train_group, TASK, "topic", tmp_path / "holdout")
    crowd = frozen_tiny_recipe(demo_data, tmp_path / "run")
    crowd["eval"] |= {"pool_by_image": 0.99, "crowd_corrections": "topic"}
    with pytest.raises(ValueError, match=r"leaving out topic 'group': eval.crowd_corrections: every training post"):
        plan_folds(as_recipe(crowd), TASK, "topic", tmp_path / "holdout")
    monitored = text_recipe(tmp_path, ["a", "b"] * 4, ["a", "b"] * 2)  # every benign validation post is of a
    monitored["train"] |= {"monitor": "val/harmful/auroc", "mode": "max"}
    undefined = "val/harmful/auroc is undefined on the validation split: no labelled post is of class 'benign'"
    with pytest.raises(ValueError, match=f"leaving out topic 'a': .*{undefined}"):
        plan_folds(as_recipe(monitored), TASK, "topic", tmp_path / "holdout")
    labels = TaskSpec("harmful", "multilabel", ["benign", "harmful"])
    with pytest.raises(ValueError, match="is multilabel; this measures one class per post"):
        plan_folds(only_validation_group, labels, "topic", tmp_path / "holdout")
    assert not (tmp_path / "holdout").exists()


def test_figures_read_each_post_by_its_own_models_decision():
    # two groups scored by two models: the same probabilities, but different thresholds
    first = HeldOut(np.array([1, 0]), np.array([0.6, 0.4]), np.array([1, 0]))
    second = HeldOut(np.array([1, 0]), np.array([0.6, 0.4]), np.array([0, 0]))
    together = figures(TASK, [first, second], bins=10)
    assert together["accuracy"] == 0.75 and together["n"] == 4
    assert together["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
    assert together["auroc"] == 1.0
    assert together["ece"] == pytest.approx(0.4)
    one_class = figures(TASK, [HeldOut(np.array([1, 1]), np.array([0.8, 0.8]), np.array([1, 1]))], 10)
    assert np.isnan(one_class["auroc"]) and one_class["accuracy"] == 1.0
    three = TaskSpec("stance", "multiclass", ["a", "b", "c"])
    prob = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4]])
    multiclass = figures(three, [HeldOut(np.array([0, 1, 2]), prob, prob.argmax(axis=1))], bins=10)
    assert multiclass["accuracy"] == pytest.approx(2 / 3) and multiclass["auroc"] == 1.0
    assert multiclass["macro_f1"] == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_command_prints_every_group_and_names_a_missing_field(demo_data, tmp_path, write_recipe, capsys):
    torch.manual_seed(0)
    path = str(write_recipe(one_epoch(demo_data, tmp_path)))
    assert main([path]) == 0
    assert sorted(p.name for p in (tmp_path / "run" / "without").iterdir()) == ["group", "weather"]  # the default
    out = capsys.readouterr().out
    assert "trained without each meta.topic in turn" in out
    assert "| topics held out | n | accuracy | macro_f1 | auroc | ece |" in out and "| 2 | 560 |" in out
    assert "| group | " in out and "| weather | " in out
    with pytest.raises(SystemExit) as exit_info:
        main([path, "--group-by", "region"])
    assert exit_info.value.code == 2
    assert "meta.region is missing" in capsys.readouterr().err


def test_posts_the_recipe_does_not_read_are_measured_by_the_models_that_never_saw_them(tmp_path):
    torch.manual_seed(0)
    recipe = as_recipe(text_recipe(tmp_path, ["a", "b"] * 6, ["a", "b"] * 3))
    wider = tmp_path / "wider"
    wider.mkdir()
    measured = recipe.data_section | {
        "train": write_jsonl(wider / "train.jsonl", ["a", "b"] * 8 + ["c"] * 4),
        "validation": write_jsonl(wider / "val.jsonl", ["a", "b"] * 3 + ["d"] * 2),
    }
    folds = plan_folds(recipe, TASK, "topic", tmp_path / "holdout", measured)
    assert {name: len(fold.posts) for name, fold in folds.items()} == {"a": 11, "b": 11, "c": 4, "d": 2}
    assert folds["a"].recipe.data_section["source"] == recipe.data_section  # trained on the recipe's own posts
    for absent in ("c", "d"):  # no post of them is trained on: the recipe trained on all its data measures them
        assert folds[absent].recipe.data_section == recipe.data_section
        assert folds[absent].recipe.train.output_dir == str(tmp_path / "holdout" / "none_left_out")
    logged: list[str] = []
    runs: dict[str, Path] = {}
    result = trained_holdout(folds, TASK, log=logged.append, progress=quiet, trained=runs)
    assert sum(line.strip().startswith("training into") for line in logged) == 3  # a, b, and once for c and d
    assert sorted(Path(run).name for run in runs) == ["a", "b", "none_left_out"]
    assert "without nothing (no post of it trained on) (4 labelled posts held out)" in logged
    assert result.overall["n"] == 28 and result.per_group["d"]["n"] == 2
    again = trained_holdout(folds, TASK, log=logged.append, progress=quiet, trained=runs)
    assert again.overall == pytest.approx(result.overall, nan_ok=True)
    assert sum(line.strip().startswith(("training into", "reusing")) for line in logged) == 3  # none again
    named = as_recipe(text_recipe(tmp_path, ["a", "none_left_out"] * 2, ["a", "none_left_out"]))
    assert sorted(plan_folds(named, TASK, "topic")) == ["a", "none_left_out"]  # no group needs the folder
    folds = plan_folds(named, TASK, "topic", measured=named.data_section | {"validation": measured["validation"]})
    assert Path(folds["none_left_out"].recipe.train.output_dir).name == "none_left_out-2"  # the folder is needed


def test_command_measures_under_other_data_settings_and_names_a_bad_one(tmp_path, capsys):
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(text_recipe(tmp_path, ["a", "b"] * 4, ["a", "b"] * 2)), encoding="utf-8")
    other = write_jsonl(tmp_path / "other.jsonl", ["a", "b", "c"] * 2)
    assert main([str(path), "--group-by", "topic", "--measure-set", f"validation={other}"]) == 0
    out = capsys.readouterr().out
    assert "| 3 | 14 |" in out and "| a | 6 |" in out and "| c | 2 |" in out  # a, b: 4 trained on and 2 others
    for setting, said in (("no_such_setting=1", "no_such_setting"), ("require_image", "expected KEY=VALUE")):
        with pytest.raises(SystemExit) as exit_info:
            main([str(path), "--group-by", "topic", "--measure-set", setting])
        assert exit_info.value.code == 2
        assert said in capsys.readouterr().err


def test_a_group_named_with_a_bar_or_a_line_break_keeps_its_row_of_the_table() -> None:
    measured = {"n": 10, "groups": 2}
    rows = format_result(TrainedHoldout(measured, {"es|mx": measured, "a\nb": measured}), "region").splitlines()[-2:]
    assert [row.split(" | ")[0] for row in rows] == ["| es\\|mx", "| a b"]

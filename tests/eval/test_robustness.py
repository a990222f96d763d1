"""Robustness reports: the drop table, and perturbed posts run through ``evaluate``."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pytest
import torch
from conftest import tiny_recipe

import faim
from faim.data.sources import read_posts
from faim.eval.evaluate import evaluate
from faim.eval.report import replace_written
from faim.eval.robustness import (
    REPORT_FILES,
    format_robustness,
    perturbed_reports,
    robustness_report,
    robustness_table,
)
from faim.notices import FaimWarning
from faim.perturb import perturb_posts, perturbations_of


def test_robustness_table_drops() -> None:
    base = {"auroc": 0.9, "macro_f1": 0.8, "n": 100}
    perturbed = {"text.leetspeak": {"auroc": 0.7, "macro_f1": 0.85}, "image.jpeg": {"auroc": 0.88}}
    table = robustness_table(base, perturbed)
    expected = {"auroc": 0.7, "auroc_drop": 0.2, "macro_f1": 0.85, "macro_f1_drop": -0.05}
    assert table["text.leetspeak"] == pytest.approx(expected)
    assert table["image.jpeg"]["auroc_drop"] == pytest.approx(0.02)
    assert math.isnan(table["image.jpeg"]["macro_f1"]) and math.isnan(table["image.jpeg"]["macro_f1_drop"])
    assert robustness_table(base, {"image.crop": {"n": 100}}, metrics=("n",)) == {"image.crop": {"n": 100, "n_drop": 0}}


@pytest.mark.slow
def test_perturbed_posts_run_through_evaluate(demo_data: dict[str, Path], tmp_path: Path) -> None:
    torch.manual_seed(0)
    detector = faim.build(tiny_recipe(demo_data, tmp_path / "run"))
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:40]
    base = evaluate(detector, posts, tmp_path / "clean", "dev")["tasks"]["harmful"]["metrics"]
    perturbed = {
        name: evaluate(detector, perturb_posts(posts, name), tmp_path / name, "dev")["tasks"]["harmful"]["metrics"]
        for name in ("text.leetspeak", "image.jpeg")
    }
    table = robustness_table(base, perturbed)
    assert set(table) == {"text.leetspeak", "image.jpeg"}
    assert all(math.isfinite(value) for row in table.values() for value in row.values())


def perturbed_once(monkeypatch: pytest.MonkeyPatch, tasks: dict[str, dict[str, float]]) -> None:
    """``perturbed_reports`` giving one perturbation's report, ``tasks``: task name → its metrics there."""
    report = {"tasks": {task: {"metrics": metrics} for task, metrics in tasks.items()}}
    monkeypatch.setattr("faim.eval.robustness.perturbed_reports", lambda *args, **kwargs: {"text.leetspeak": report})


def test_each_task_is_measured_under_perturbation_by_the_metrics_of_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tags = {"macro_auroc": 0.8, "macro_average_precision": 0.7, "macro_f1": 0.6, "n": 10}
    topic = {"accuracy": 0.9, "macro_f1": 0.8, "macro_auroc": 0.95, "ece": 0.1, "n": 10}
    clean = {
        "tasks": {"tags": {"type": "multilabel", "metrics": tags}, "topic": {"type": "multiclass", "metrics": topic}}
    }
    perturbed_once(monkeypatch, {"tags": {**tags, "macro_auroc": 0.7}, "topic": {**topic, "macro_auroc": 0.9}})
    tables = robustness_report(None, [], clean, tmp_path, "dev")
    assert tables["tags"]["text.leetspeak"] == pytest.approx(
        {"macro_auroc": 0.7, "macro_auroc_drop": 0.1, "macro_average_precision": 0.7,
         "macro_average_precision_drop": 0.0, "macro_f1": 0.6, "macro_f1_drop": 0.0}
    )  # fmt: skip
    assert set(tables["topic"]["text.leetspeak"]) == {
        "accuracy", "accuracy_drop", "macro_f1", "macro_f1_drop", "macro_auroc", "macro_auroc_drop"
    }  # fmt: skip
    assert tables["topic"]["text.leetspeak"]["macro_auroc_drop"] == pytest.approx(0.05)
    assert "nan" not in format_robustness(tables)


def test_an_undefined_figure_is_null_in_robustness_json_and_n_a_on_the_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = {"tasks": {"hate": {"type": "binary", "metrics": {"auroc": math.nan, "macro_f1": 0.5, "accuracy": 1.0}}}}
    perturbed_once(monkeypatch, {"hate": {"auroc": math.nan, "macro_f1": 0.4, "accuracy": 0.8}})
    tables = robustness_report(None, [], clean, tmp_path, "dev")
    written = (tmp_path / "robustness.json").read_text(encoding="utf-8")
    assert json.loads(written)["hate"]["text.leetspeak"] == pytest.approx(
        {
            "auroc": None,
            "auroc_drop": None,
            "macro_f1": 0.4,
            "macro_f1_drop": 0.1,
            "accuracy": 0.8,
            "accuracy_drop": 0.2,
        }
    )
    assert "NaN" not in written
    line = format_robustness(tables).splitlines()[-1]
    assert "auroc n/a " in line and "macro_f1 0.4000 (+0.1000)" in line and "nan" not in line


def test_perturbed_posts_keep_the_languages_the_clean_posts_are_written_in(demo_data, tmp_path: Path) -> None:
    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:40]
    spanish, english = "odio a esa gente", "we love this city"  # short: swapped letters or digits read otherwise
    posts = [replace(post, text=spanish if i % 2 else english) for i, post in enumerate(posts)]
    clean = evaluate(detector, posts, tmp_path / "clean", "dev")["tasks"]["harmful"]["languages"]
    assert {language: row["n"] for language, row in clean.items()} == {"en": 20, "es": 20}
    for name, report in perturbed_reports(detector, posts, tmp_path / "eval", "dev").items():
        languages = report["tasks"]["harmful"]["languages"]
        assert {language: row["n"] for language, row in languages.items()} == {"en": 20, "es": 20}, name


def test_a_perturbation_changing_none_of_the_posts_is_warned_of(demo_data, tmp_path: Path) -> None:
    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:20]
    posts = [replace(post, text=f"你这个老鼠今天天气很好{'的' * i}", comments=[]) for i, post in enumerate(posts)]
    with pytest.warns(FaimWarning) as warned:
        perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    said = [str(warning.message) for warning in warned if "changes none" in str(warning.message)]
    assert [line.split(" changes")[0] for line in said] == ["dev: text.leetspeak", "dev: text.homoglyphs"]
    assert said[0].endswith(
        "none of the 20 posts (it edits what none of them holds, as the Latin letters leetspeak and homoglyphs replace "
        "in posts of other scripts): its figures are the clean posts', no measure of how the model withstands it"
    )


def test_the_posts_are_checked_once_for_every_perturbation_and_still_refused(demo_data, tmp_path: Path) -> None:
    from faim.data import preflight

    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:20]
    with mock.patch.object(preflight, "refuse_unreadable", wraps=preflight.refuse_unreadable) as checked:
        reports = perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    assert len(reports) == 4 and checked.call_count == 1
    unlabelled = [replace(post, labels={}) for post in posts]
    with pytest.raises(ValueError, match="no post carries a label"):
        perturbed_reports(detector, unlabelled, tmp_path / "unlabelled", "dev")
    assert not (tmp_path / "unlabelled").exists()


def test_each_perturbed_report_names_its_perturbation_beside_its_data(demo_data, tmp_path: Path) -> None:
    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:20]
    for name, report in perturbed_reports(detector, posts, tmp_path / "eval", "dev.jsonl").items():
        assert report["data"] == f"dev.jsonl, perturbed by {name}"
        markdown = (tmp_path / "eval" / "robustness" / name / "metrics.md").read_text(encoding="utf-8")
        assert f"- data: `dev.jsonl, perturbed by {name}`" in markdown


def test_each_perturbations_progress_bar_names_it(demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from faim.eval import evaluate as evaluate_module

    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:20]
    bars = []
    predict = evaluate_module.predict
    monkeypatch.setattr(evaluate_module, "predict", lambda *a, **k: bars.append(k["desc"]) or predict(*a, **k))
    reports = perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    assert bars == [f"evaluating under {name}" for name in reports]


def text_detector(demo_data: dict[str, Path], tmp_path: Path) -> tuple[faim.Detector, list]:
    """A detector reading text alone, and 20 labelled posts."""
    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"] |= {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:20]
    return faim.build(recipe), posts


def report_files(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("linked", [False, True])
def test_a_rerun_removes_the_reports_of_perturbations_it_no_longer_applies_and_nothing_else(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: bool
) -> None:
    detector, posts = text_detector(demo_data, tmp_path)
    folder = tmp_path / "eval" / "robustness"
    if linked:
        folder.parent.mkdir()
        (tmp_path / "elsewhere").mkdir()
        folder.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    both, one = ["text.leetspeak", "text.spaces"], ["text.leetspeak"]
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: both)
    perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    first = report_files(folder)
    assert {"text.spaces/metrics.json", "text.leetspeak/metrics.md", "written.json"} <= first
    (folder / "notes.txt").write_text("mine")
    (folder / "text.spaces" / "notes.txt").write_text("mine")

    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: one)
    perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    kept = {name for name in first if not name.startswith("text.spaces/")}
    assert report_files(folder) == kept | {"notes.txt", "text.spaces/notes.txt"}
    assert folder.is_symlink() == linked

    (folder / "text.spaces" / "notes.txt").unlink()
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: both)
    perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: [])
    perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    assert report_files(folder) == {"notes.txt"}  # nothing written, nothing recorded
    assert not (folder / "text.spaces").exists()


def test_a_rerun_that_fails_removes_none_of_the_earlier_reports(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    detector, posts = text_detector(demo_data, tmp_path)
    folder = tmp_path / "eval" / "robustness"
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: ["text.spaces"])
    perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    earlier = report_files(folder)
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: ["text.leetspeak", "text.nope"])
    with pytest.raises(ValueError, match="unknown perturbation 'text.nope'"):
        perturbed_reports(detector, posts, tmp_path / "eval", "dev")
    assert earlier <= report_files(folder)


def test_a_record_naming_files_outside_the_folder_removes_none_of_them(tmp_path: Path) -> None:
    folder, outside = tmp_path / "robustness", tmp_path / "outside.txt"
    folder.mkdir()
    outside.write_text("mine")
    (folder / "written.json").write_text(
        json.dumps({"writer": "faim eval", "files": ["../outside.txt", str(outside), "link/outside.txt"]})
    )
    (folder / "link").symlink_to(tmp_path)  # a folder inside that is a link to another's
    replace_written(folder, [])
    assert outside.read_text() == "mine" and not (folder / "written.json").exists()  # nothing written, nothing recorded


def test_a_model_no_perturbation_applies_to_is_evaluated_and_leaves_no_robustness_folder(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    detector, posts = text_detector(demo_data, tmp_path)
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: [])  # as a metadata-only model
    assert perturbed_reports(detector, posts, tmp_path / "eval", "dev") == {}
    assert not (tmp_path / "eval").exists()


def test_the_record_is_made_with_its_folder_and_a_record_cut_short_leaves_the_earlier_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "eval" / "robustness"
    replace_written(folder, ["text.spaces/metrics.json"])
    assert json.loads((folder / "written.json").read_text())["files"] == ["text.spaces/metrics.json"]
    monkeypatch.setattr("faim.folders.os.replace", mock.Mock(side_effect=OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        replace_written(folder, ["text.leetspeak/metrics.json"])
    assert json.loads((folder / "written.json").read_text())["files"] == ["text.spaces/metrics.json"]
    assert report_files(folder) == {"written.json"}


def test_a_rerun_without_robustness_removes_the_earlier_robustness_reports(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    detector, posts = text_detector(demo_data, tmp_path)
    monkeypatch.setattr("faim.eval.robustness.perturbations_of", lambda modalities: ["text.spaces"])
    out = tmp_path / "eval"
    report = evaluate(detector, posts, out, "dev", ablations=False, also=REPORT_FILES)
    robustness_report(detector, posts, report, out, "dev")
    assert (out / "robustness.json").is_file() and (out / "robustness" / "text.spaces" / "metrics.json").is_file()
    evaluate(detector, posts, out, "dev", ablations=False)
    assert not (out / "robustness.json").exists() and not (out / "robustness").exists()


def test_only_the_kinds_the_heads_read_are_perturbed(
    demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a model fusing text alone beside an image encoder, pooling no post by the picture, was run under image.jpeg,
    # image.resize, image.crop and image.overlay, none of which can change a score
    planned: list[list[str]] = []

    def planning(modalities):
        planned.append(perturbations_of(modalities))
        return []  # the plan alone is looked at: nothing is evaluated

    monkeypatch.setattr("faim.eval.robustness.perturbations_of", planning)
    model = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}, "image": {"type": "tiny_image", "dim": 8}},
        "fusion": {"type": "concat", "kinds": ["text"]},
        "heads": {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}},
    }
    posts = list(read_posts(demo_data["validation"], {"labels": {"harmful": "label"}}))[:10]
    perturbed_reports(faim.build({"model": model}), posts, tmp_path / "eval", "dev")
    model["fusion"]["kinds"] = ["text", "image"]
    perturbed_reports(faim.build({"model": model}), posts, tmp_path / "eval", "dev")
    assert planned[0] and all(name.startswith("text.") for name in planned[0])
    assert any(name.startswith("image.") for name in planned[1]) and set(planned[0]) < set(planned[1])

"""Evaluation of a detector, with and without pooling across posts that share a picture; ECE ranges; perturbed
reports; the words the model and the labels read the opposite way."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import calibrated, frozen_tiny_recipe, pooling_detector
from torch.utils.data import DataLoader

import faim
from faim.data import preflight
from faim.data.elements import PostError
from faim.data.post import Post, check_labelled
from faim.data.sources import read_posts
from faim.detector import Detector
from faim.eval import evaluate as evaluate_module
from faim.eval.calibration import ece_if_calibrated
from faim.eval.evaluate import Evaluated, evaluate, evaluate_loader, probabilities
from faim.eval.report import format_table
from faim.eval.robustness import perturbed_reports
from faim.eval.tables import format_value
from faim.inference import predict
from faim.notices import FaimWarning
from faim.perturb import PERTURBATIONS
from faim.recipe.sections import EvalConfig
from faim.training.loaders import loader_posts, make_loader


def test_pooling_fits_a_calibration_of_its_own_and_reports_per_post_figures(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    assert detector.pooled is not None
    assert detector.pooled.temperatures["harmful"] != detector.temperatures["harmful"]
    report = evaluate(detector, posts, tmp_path / "eval", "shared pictures")["tasks"]["harmful"]
    assert set(report["ablations"]) == {"without_text", "without_image", "without_comments", "without_pooling"}
    assert report["ablations"]["without_pooling"]["threshold"] == pytest.approx(detector.thresholds["harmful"])
    assert report["metrics"]["threshold"] == pytest.approx(detector.pooled.thresholds["harmful"])
    assert report["metrics"]["auroc"] != report["ablations"]["without_pooling"]["auroc"]


def test_posts_without_a_label_of_any_task_are_refused_before_the_model_reads_them(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    detector = Detector.load(str(tiny_model_dir))
    monkeypatch.setattr(evaluate_module, "predict", lambda *args, **kwargs: pytest.fail("the model read the posts"))
    posts = [Post(id="1", text="a post", labels={"another_task": 1})]
    with pytest.raises(ValueError, match=r"^dump: no post carries a label for any task \(harmful\); map a column"):
        evaluate(detector, posts, tmp_path / "eval", "dump")


@pytest.mark.parametrize("cached", [False, True])
def test_a_loader_of_posts_without_a_label_of_any_task_is_refused_before_the_model_reads_them(
    cached: bool, demo_data, tmp_path: Path, monkeypatch
) -> None:
    detector = faim.build(frozen_tiny_recipe(demo_data, tmp_path / "run"))
    posts = [Post(str(n), f"post {n}", labels={"another_task": 1}) for n in range(4)]
    collator = detector.collator(with_targets=True)
    loader = make_loader(detector.model, collator, posts, 2, False, cache_dir=tmp_path / "cache" if cached else None)
    monkeypatch.setattr(evaluate_module, "predict", lambda *args, **kwargs: pytest.fail("the model read the posts"))
    with pytest.raises(ValueError, match=r"^dump: no post carries a label for any task \(harmful\); map a column"):
        evaluate_loader(detector, loader, tmp_path / "eval", "dump")


def tiny_text_detector(head: str = "binary", labels: tuple[str, ...] = ("no", "yes")) -> Detector:
    return faim.build(
        {
            "model": {
                "encoders": {"text": {"type": "tiny_text", "dim": 8}},
                "fusion": {"type": "concat"},
                "heads": {"harmful": {"type": head, "labels": list(labels)}},
            }
        }
    )


@pytest.mark.parametrize("labelled", [True, False])
def test_a_loader_over_indices_with_its_own_collate_function_is_evaluated_and_refused_without_labels(
    labelled: bool, tmp_path: Path
) -> None:
    detector = tiny_text_detector()
    task = "harmful" if labelled else "another_task"
    posts = [Post(str(n), f"post {n}", labels={task: n % 2}) for n in range(4)]
    collator = detector.collator(with_targets=True)
    loader = DataLoader(list(range(4)), batch_size=2, collate_fn=lambda indices: collator([posts[i] for i in indices]))
    assert loader_posts(loader) is None  # its posts are known from its batches alone
    if labelled:
        assert list(evaluate_loader(detector, loader, tmp_path / "eval", "dump", ablations=False)["tasks"]) == [task]
        return
    with pytest.raises(ValueError) as late:
        evaluate_loader(detector, loader, tmp_path / "late", "dump", ablations=False)
    known = make_loader(detector.model, collator, posts, 2, False)
    with pytest.raises(ValueError) as early:
        evaluate_loader(detector, known, tmp_path / "early", "dump", ablations=False)
    assert str(late.value) == str(early.value)  # the same remedy, however late the loader's posts are known
    assert str(late.value).startswith("dump: no post carries a label for any task (harmful); map a column")


def test_evaluating_posts_checks_once_that_some_carry_a_label(tmp_path: Path, monkeypatch) -> None:
    checked = []

    def counted(posts, tasks, where, *args):
        checked.append(where)
        return check_labelled(posts, tasks, where, *args)

    monkeypatch.setattr(evaluate_module, "check_labelled", counted)
    monkeypatch.setattr(preflight, "check_labelled", counted)
    posts = [Post(str(n), f"post {n}", labels={"harmful": n % 2}) for n in range(4)]
    evaluate(tiny_text_detector(), posts, tmp_path / "eval", "dump", ablations=False, words=False)
    assert checked == ["dump"]


def test_a_model_scoring_posts_nan_is_refused_naming_it_the_task_and_the_posts(
    tiny_model_dir: Path, demo_data, tmp_path: Path
) -> None:
    detector = Detector.load(str(tiny_model_dir))
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:12]
    with torch.no_grad():
        detector.model.heads["harmful"].net[-1].bias.fill_(float("nan"))
    message = (
        rf"^{tiny_model_dir}: the model itself scored 12 of 12 posts of validation NaN or infinite for the task "
        rf"'harmful' \(the first: post id='{posts[0].id}'\); its weights are broken, not the posts"
    )
    with pytest.raises(ValueError, match=message):
        evaluate(detector, posts, tmp_path / "eval", "validation")
    with pytest.raises(ValueError, match=r"the model itself scored 1 of 1 post of validation NaN"):
        evaluate(detector, posts[:1], tmp_path / "eval", "validation")


def test_a_model_scoring_posts_nan_with_a_kind_masked_out_is_refused_saying_so(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch
) -> None:
    detector = Detector.load(str(tiny_model_dir))
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:12]
    real = evaluate_module.predict

    def nan_when_masked(*args, **kwargs):
        predictions = real(*args, **kwargs)
        if kwargs.get("drop") == ["image"]:
            predictions.logits["harmful"][1:3] = np.inf
        return predictions

    monkeypatch.setattr(evaluate_module, "predict", nan_when_masked)
    message = (
        rf"^{tiny_model_dir}: the model itself scored 2 of 12 posts of validation NaN or infinite for the task "
        rf"'harmful' with the image masked out \(the first: post id='{posts[1].id}'\)"
    )
    with pytest.raises(ValueError, match=message):
        evaluate(detector, posts, tmp_path / "eval", "validation")


@pytest.mark.parametrize("languages", [True, False])
def test_a_post_holding_half_a_surrogate_pair_is_refused_naming_it_before_the_model_reads_any(
    languages: bool, tiny_model_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    detector = Detector.load(str(tiny_model_dir))
    monkeypatch.setattr(evaluate_module, "predict", lambda *args, **kwargs: pytest.fail("the model read the posts"))
    posts = [
        Post(id="1", text="a post long enough to tell its language", labels={"harmful": 1}, origin="dump.jsonl:1"),
        Post(id="2", text="an emoji cut in two \ud83d here", labels={"harmful": 0}, origin="dump.jsonl:2"),
    ]
    message = r"^dump.jsonl:2 \(post id='2'\) field 'text': holds half of a UTF-16 surrogate pair \(\\ud83d"
    with pytest.raises(PostError, match=message):
        evaluate(detector, posts, tmp_path / "eval", "dump", EvalConfig(languages=languages))


def test_posts_naming_a_picture_not_there_are_refused_naming_them_before_the_model_reads_any(
    tiny_model_dir: Path, demo_data, tmp_path: Path, monkeypatch
) -> None:
    detector = Detector.load(str(tiny_model_dir))
    monkeypatch.setattr(evaluate_module, "predict", lambda *args, **kwargs: pytest.fail("the model read the posts"))
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))
    posts[-1].images = ["images/nowhere.jpg"]
    where = f"{demo_data['validation']}:{len(posts)} (post id='{posts[-1].id}') field 'images': image "
    with pytest.raises(ValueError, match=re.escape(f"dump: 1 of {len(posts)} posts names a picture that is not there")):
        evaluate(detector, posts, tmp_path / "eval", "dump", EvalConfig(languages=False))
    with pytest.raises(ValueError, match=re.escape(where)):
        evaluate(detector, posts, tmp_path / "eval", "dump", EvalConfig(languages=False))


def test_evaluation_reports_the_ece_range_of_a_calibrated_model(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    report = evaluate(detector, posts, tmp_path / "eval", "validation")["tasks"]["harmful"]
    for metrics in [report["metrics"], *report["ablations"].values()]:
        assert 0.0 <= metrics["ece_if_calibrated_low"] < metrics["ece_if_calibrated_high"] <= 1.0


def test_a_slice_field_no_post_has_is_warned_of_and_gives_no_slices(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    config = EvalConfig(slice="colour", ablations=False)
    with pytest.warns(
        FaimWarning, match=r"eval.slice: no post has the meta field 'colour' \(fields they carry: lang\)"
    ):
        report = evaluate(detector, posts, tmp_path / "eval", "validation", config)["tasks"]["harmful"]
    assert "slices" not in report
    posts[0].meta["colour"] = "red"
    sliced = evaluate(detector, posts, tmp_path / "colour", "validation", config)["tasks"]["harmful"]
    assert set(sliced["slices"]) == {"red", "(missing)"}


@pytest.mark.parametrize(
    ("field", "languages", "hint"),
    [
        ("meta.topic", False, "; name the field without meta. (topic)"),
        ("meta.Topic", False, "; name it 'topic', as the posts carry it"),
        ("meta.nothing", False, ""),
        ("meta.lang", False, "; name the field without meta. (lang)"),
        ("meta.Lang", True, "; name it 'lang', as the posts carry it"),
    ],
)
def test_a_slice_named_as_map_names_a_meta_field_is_told_to_drop_meta(
    field: str, languages: bool, hint: str, demo_data, tmp_path: Path
) -> None:
    # it was told to drop meta. whatever the posts carried: meta.Topic to name Topic, meta.nothing to name nothing
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    posts[0].meta["topic"] = "news"
    config = EvalConfig(slice=field, ablations=False, languages=languages)
    with pytest.warns(FaimWarning) as caught:
        evaluate(detector, posts, tmp_path / "eval", "validation", config)
    carried = "lang, topic" if languages else "topic"
    assert [str(warning.message) for warning in caught if "eval.slice" in str(warning.message)] == [
        f"eval.slice: no post has the meta field {field!r} (fields they carry: {carried}), so the report has no "
        f"slices{hint}"
    ]


def test_a_slice_named_close_to_a_field_the_posts_carry_is_told_that_fields_name(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    posts[0].meta["topic"] = "news"
    config = EvalConfig(slice="Topic", ablations=False, languages=False)
    with pytest.warns(FaimWarning) as caught:
        evaluate(detector, posts, tmp_path / "eval", "validation", config)
    assert [str(warning.message) for warning in caught if "eval.slice" in str(warning.message)] == [
        "eval.slice: no post has the meta field 'Topic' (fields they carry: topic), so the report has no slices; "
        "name it 'topic', as the posts carry it"
    ]


def test_posts_without_the_slice_field_are_a_slice_apart_from_the_text_none(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    posts[0].meta["colour"], posts[1].meta["colour"] = "None", None
    config = EvalConfig(slice="colour", ablations=False)
    report = evaluate(detector, posts, tmp_path / "eval", "validation", config)["tasks"]["harmful"]
    assert {name: metrics["n"] for name, metrics in report["slices"].items()} == {
        "None": 1,
        "(missing)": len(posts) - 1,
    }
    assert "| (missing) |" in (tmp_path / "eval" / "metrics.md").read_text()


def test_posts_holding_the_text_missing_are_a_slice_apart_from_the_posts_without_the_field(
    demo_data, tmp_path: Path
) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    posts[0].meta["colour"], posts[1].meta["colour"] = "(missing)", float("nan")
    config = EvalConfig(slice="colour", ablations=False)
    report = evaluate(detector, posts, tmp_path / "eval", "validation", config)["tasks"]["harmful"]
    assert {name: metrics["n"] for name, metrics in report["slices"].items()} == {
        '"(missing)"': 1,
        "(missing)": len(posts) - 1,
    }
    table = (tmp_path / "eval" / "metrics.md").read_text()
    assert '| "(missing)" |' in table and "| (missing) |" in table


def test_a_slice_by_language_detects_each_posts_language_without_the_metrics_per_language(
    demo_data, tmp_path: Path
) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    config = EvalConfig(slice="lang", languages=False, ablations=False)
    report = evaluate(detector, posts, tmp_path / "eval", "validation", config)["tasks"]["harmful"]
    assert set(report["slices"]) == {"en"} and "languages" not in report
    assert not any("lang" in post.meta for post in posts)  # the caller's posts are left as they were


def test_ece_ranges_of_a_pooled_evaluation_draw_posts_showing_one_picture_together(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    report = evaluate(detector, posts, tmp_path / "eval", "shared pictures")["tasks"]["harmful"]
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    per_post = predict(detector.model, loader, link_kind="image")
    main = Evaluated.pooled(detector, per_post, detector.pooled)
    pooled_prob = probabilities(main.calibration, main.predictions, detector.tasks[0])
    per_post_prob = probabilities(detector.calibration, per_post, detector.tasks[0])

    def reported(metrics: dict) -> tuple[float, float]:
        return metrics["ece_if_calibrated_low"], metrics["ece_if_calibrated_high"]

    assert reported(report["metrics"]) == pytest.approx(ece_if_calibrated(pooled_prob, main.groups))
    assert reported(report["metrics"]) != pytest.approx(ece_if_calibrated(pooled_prob))
    without = reported(report["ablations"]["without_pooling"])
    assert without == pytest.approx(ece_if_calibrated(per_post_prob, main.groups))


def test_perturbed_reports_cover_every_modality_read_and_skip_the_modality_ablations(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    reports = perturbed_reports(detector, posts, tmp_path / "eval", "shared pictures")
    assert list(reports) == list(PERTURBATIONS)  # the model reads text and pictures
    for name, report in reports.items():
        assert set(report["tasks"]["harmful"]["ablations"]) == {"without_pooling"}
        saved = json.loads((tmp_path / "eval" / "robustness" / name / "metrics.json").read_text(encoding="utf-8"))
        assert saved["tasks"]["harmful"]["metrics"] == pytest.approx(report["tasks"]["harmful"]["metrics"])
    clean = evaluate(detector, posts, tmp_path / "clean", "shared pictures")["tasks"]["harmful"]["metrics"]
    assert reports["text.leetspeak"]["tasks"]["harmful"]["metrics"]["auroc"] != clean["auroc"]


def test_evaluation_names_the_words_the_model_and_the_labels_read_the_opposite_way(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    prob = probabilities(detector.calibration, predict(detector.model, loader), detector.tasks[0])
    flagged = (prob >= detector.thresholds["harmful"]).astype(int)
    agreeing = [replace(post, labels={"harmful": int(d)}) for post, d in zip(posts, flagged)]
    # every seventh post unlabelled: the words are read on the labelled posts' own texts, each beside its label
    backwards = [
        replace(post, labels={} if i % 7 == 0 else {"harmful": int(1 - d)})
        for i, (post, d) in enumerate(zip(posts, flagged))
    ]
    same = evaluate(detector, agreeing, tmp_path / "same", "labels the model agrees with")
    assert same["tasks"]["harmful"]["terms"]["terms"] == 0
    assert "read the opposite way" not in format_table(same)
    report = evaluate(detector, backwards, tmp_path / "flipped", "labels read backwards")
    terms = report["tasks"]["harmful"]["terms"]
    assert terms["terms"] > 0 and terms["positive"] == detector.tasks[0].labels[1]
    labelled_flags = [d for i, d in enumerate(flagged) if i % 7]
    assert terms["overall"] == pytest.approx([np.mean(labelled_flags), 1 - np.mean(labelled_flags)])
    for term in terms["shown"]:  # the labels call positive exactly the posts the model does not flag
        assert term["shares"][0] + term["shares"][1] == pytest.approx(1.0)
        assert term["leans"][0] == pytest.approx(-term["leans"][1])
    first = terms["shown"][0]["term"]
    assert f"Words the model and these labels read the opposite way: {terms['terms']}" in format_table(report)
    written = (tmp_path / "flipped" / "metrics.md").read_text(encoding="utf-8")
    assert "### Words the model and the labels read the opposite way" in written and f"'{first}'" in written


def test_a_rerun_into_the_same_folder_removes_the_files_only_the_earlier_run_wrote(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    for task in ("harmful", "spam"):
        detector = faim.build(
            {
                "model": {
                    "encoders": {"text": {"type": "tiny_text", "dim": 8}},
                    "fusion": {"type": "concat"},
                    "heads": {task: {"type": "binary", "labels": ["no", "yes"]}},
                }
            }
        )
        posts = [Post(str(n), f"post {n}", labels={task: n % 2}) for n in range(8)]
        evaluate(detector, posts, out, "dump", ablations=False, words=False)
    names = {path.name for path in out.iterdir()}
    assert {"metrics.json", "metrics.md", "spam_roc.png", "notes.txt", "written.json"} <= names
    assert not {name for name in names if name.startswith("harmful_")}


def test_a_slice_field_no_post_has_is_warned_of_once_however_many_tasks_are_evaluated(demo_data, tmp_path) -> None:
    recipe = frozen_tiny_recipe(demo_data, tmp_path / "run")
    recipe["data"]["columns"]["labels"] = {"harmful": "label", "again": "label"}
    recipe["model"]["heads"]["again"] = recipe["model"]["heads"]["harmful"]
    detector = faim.build(recipe)
    posts = list(read_posts(demo_data["validation"], recipe["data"]["columns"]))[:40]
    config = EvalConfig(slice="colour", ablations=False, languages=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate(detector, posts, tmp_path / "eval", "validation", config)
    said = [str(warning.message) for warning in caught if "eval.slice" in str(warning.message)]
    assert said == [
        "eval.slice: no post has the meta field 'colour' (fields they carry: topic), so the report has no slices"
    ]
    assert set(report["tasks"]) == {"harmful", "again"} and not any("slices" in t for t in report["tasks"].values())


def test_a_kind_the_model_embeds_but_neither_fuses_nor_pools_by_is_not_ablated(demo_data, tmp_path: Path) -> None:
    # a without_image row, the same figures as the full model's, was reported for a model whose heads never see
    # the picture (fusion kinds: [text]) and which pools no post by it
    model = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}, "image": {"type": "tiny_image", "dim": 8}},
        "fusion": {"type": "concat", "kinds": ["text"]},
        "heads": {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}},
    }
    detector = faim.build({"model": model})
    posts = list(read_posts(demo_data["validation"], {"labels": {"harmful": "label"}}))[:40]
    report = evaluate(detector, posts, tmp_path / "eval", "validation")["tasks"]["harmful"]
    assert "ablations" not in report or not report["ablations"]
    model["fusion"]["kinds"] = ["text", "image"]
    report = evaluate(faim.build({"model": model}), posts, tmp_path / "eval2", "validation")["tasks"]["harmful"]
    assert set(report["ablations"]) == {"without_text", "without_image"}


def test_a_task_with_no_plots_takes_no_plot_name_from_a_task_beside_it(tmp_path: Path) -> None:
    # a multilabel Hate beside a binary hate had hate's plots named hate-2_roc.png, where they had been hate_roc.png
    heads = {
        "Hate": {"type": "multilabel", "labels": ["slur", "threat"]},
        "hate": {"type": "binary", "labels": ["no", "yes"]},
    }
    detector = faim.build(
        {"model": {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}, "heads": heads}}
    )
    labels = [["slur"], ["threat"], []]
    posts = [Post(str(n), f"post {n}", labels={"Hate": labels[n % 3], "hate": n % 2}) for n in range(12)]
    results = evaluate(detector, posts, tmp_path / "eval", "dump", ablations=False, words=False)
    assert [Path(plot).name for plot in results["tasks"]["hate"]["plots"]] == [
        "hate_roc.png",
        "hate_pr.png",
        "hate_calibration.png",
    ]


def test_tasks_whose_plots_would_take_one_file_each_get_plots_of_their_own(tmp_path: Path) -> None:
    # a:b and a_b gave one file name; Hate and hate one file on macOS and Windows: one task's plots replaced another's
    tasks = ["a:b", "a_b", "Hate", "hate"]
    heads = {task: {"type": "binary", "labels": ["no", "yes"]} for task in tasks}
    detector = faim.build(
        {"model": {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}, "heads": heads}}
    )
    posts = [Post(str(n), f"post {n}", labels=dict.fromkeys(tasks, n % 2)) for n in range(8)]
    results = evaluate(detector, posts, tmp_path / "eval", "dump", ablations=False, words=False)
    plots = [Path(plot) for task in tasks for plot in results["tasks"][task]["plots"]]
    assert len({plot.name.casefold() for plot in plots}) == len(plots) == 12 and all(plot.is_file() for plot in plots)
    assert [Path(plot).name for plot in results["tasks"]["Hate"]["plots"]] == [
        "Hate_roc.png",
        "Hate_pr.png",
        "Hate_calibration.png",
    ]  # a task's name where it is its own
    report = (tmp_path / "eval" / "metrics.md").read_text(encoding="utf-8")
    assert all(f"]({plot.name})" in report for plot in plots)


@pytest.mark.parametrize("label", [0, 1])
def test_a_binary_task_whose_labelled_posts_hold_one_class_says_why_its_auroc_and_ap_read_na(
    label: int, tmp_path: Path
) -> None:
    posts = [Post(str(n), f"post {n}", labels={"harmful": label if n < 6 else None}) for n in range(8)]
    results = evaluate(tiny_text_detector(), posts, tmp_path / "eval", "dump", ablations=False, words=False)
    name = ["no", "yes"][label]
    note = (
        f"every labelled post is {name!r} (6 posts), so AUROC and average precision, which need posts of both "
        "classes, read n/a"
    )
    assert results["tasks"]["harmful"]["one_class"] == name
    assert note in format_table(results).splitlines()
    assert f"\n\n{note}\n" in (tmp_path / "eval" / "metrics.md").read_text(encoding="utf-8")
    posts[0].labels["harmful"] = 1 - label  # both classes: measured, no note
    results = evaluate(tiny_text_detector(), posts, tmp_path / "both", "dump", ablations=False, words=False)
    assert "one_class" not in results["tasks"]["harmful"]
    assert "both classes" not in format_table(results) + (tmp_path / "both" / "metrics.md").read_text()


@pytest.mark.parametrize(
    ("head", "given", "note"),
    [
        (
            "multiclass",
            [0, 1, 0, 1, 0, 1],
            "no labelled post is 'threat' (6 posts), so macro AUROC, which needs posts of every class, reads n/a, "
            "and macro-F1 counts its F1 as 0",
        ),
        (
            "multiclass",
            [0] * 6,
            "no labelled post is 'abuse' or 'threat' (6 posts), so macro AUROC, which needs posts of every class, "
            "reads n/a, and macro-F1 counts their F1 as 0",
        ),
        (
            "multilabel",
            [["none", "abuse"]] * 6,
            "each label's labelled posts all carry it or all lack it (6 posts), so macro AUROC and macro average "
            "precision, which need posts with and without a label, read n/a",
        ),
        (
            "multilabel",
            [["none"], ["abuse"], ["none", "abuse"], [], ["none"], ["abuse"]],
            "the labelled posts all carry or all lack 'threat' (6 posts), so macro AUROC and macro average precision "
            "are of the other labels alone, as its AUROC and average precision read n/a",
        ),
    ],
)
def test_a_task_whose_labelled_posts_lack_a_class_says_why_its_macro_auroc_reads_na(
    head: str, given: list, note: str, tmp_path: Path
) -> None:
    detector = tiny_text_detector(head, ("none", "abuse", "threat"))
    posts = [Post(str(n), f"post {n}", labels={"harmful": label}) for n, label in enumerate(given)]
    results = evaluate(detector, posts, tmp_path / "eval", "dump", ablations=False, words=False)
    assert note in format_table(results).splitlines()
    assert f"\n\n{note}\n" in (tmp_path / "eval" / "metrics.md").read_text(encoding="utf-8")
    posts[0].labels["harmful"] = ["threat"] if head == "multilabel" else 2  # measured, no note
    posts[1].labels["harmful"] = [] if head == "multilabel" else 1
    results = evaluate(detector, posts, tmp_path / "every", "dump", ablations=False, words=False)
    assert "n/a" not in format_value(results["tasks"]["harmful"]["metrics"]["macro_auroc"])
    assert "so macro" not in format_table(results) + (tmp_path / "every" / "metrics.md").read_text()

"""The recalibration learning curve: fitted on labelled draws, read against what a calibrated model would show."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit

from faim.calibration.fit import Calibration
from faim.calibration.head_correction import HeadCorrection
from faim.calibration.prior import prior_interval
from faim.data.targets import TaskSpec
from faim.eval.calibration import expected_calibration_error
from faim.eval.label_conflicts import decision_conflicts_note
from faim.eval.plots import model_plot_names
from faim.eval.recalibration import (
    SIZES,
    as_is,
    calibrated_range,
    learning_curve,
    left_out_sizes,
    prior_adaptation,
    ranking_note,
    rarer_by_chance,
    refit,
    remove_report,
    shift_note,
    task_notes,
    term_disagreement,
    uncorrectable_sizes,
    unreachable_note,
    write_report,
)
from faim.eval.recalibration import (
    WRITER as CALIBRATION_WRITER,
)
from faim.eval.report import WRITTEN, replace_written
from faim.inference import Predictions
from faim.notices import FaimWarning
from faim.recipe.sections import EvalConfig

TASK = TaskSpec("hate", "binary", ("not-hate", "hate"))


def predictions(n: int, temperature: float, seed: int = 0) -> Predictions:
    """Posts whose labels follow ``sigmoid(z / temperature)``: calibrated at that temperature, not at 1."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 3.0, n)
    labels = (rng.random(n) < expit(logits / temperature)).astype(np.float32)
    return Predictions(ids=[str(i) for i in range(n)], logits={"hate": logits}, targets={"hate": labels})


def test_the_curve_is_drawn_at_50_100_200_and_500_labels_unless_sizes_are_given() -> None:
    curve = learning_curve(TASK, Calibration.identity([TASK]), predictions(800, 3.0), EvalConfig(), draws=2)
    assert [row["labels"] for row in curve] == [50, 100, 200, 500]


def test_sizes_too_few_for_a_head_correction_are_left_out_of_its_curve_and_the_report_says_which() -> None:
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    assert uncorrectable_sizes([3, 4, 5, 50, 500], 160) == [3, 4] and uncorrectable_sizes([3, 50], 3) == []
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": [], "head_sizes_left_out": [3, 4]}
    said = (
        "Left out of the head-corrected learning curve: 3, 4 labels, as a head correction needs 5 labelled posts at "
        "least; give larger --sizes."
    )
    assert said in task_notes(task)


def test_sizes_that_leave_no_post_to_measure_on_are_left_out_of_the_curve_and_the_report_says_which(tmp_path) -> None:
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    curve = learning_curve(TASK, start, posts, EvalConfig(), draws=2)
    assert [row["labels"] for row in curve] == [50, 100] and left_out_sizes(SIZES, 160) == [200, 500]
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": curve, "sizes_left_out": [200, 500]}
    said = (
        "Left out of the learning curve: 200, 500 labels, as fitting on that many would leave none of the 160 "
        "labelled posts to measure on; label more posts, or give smaller --sizes."
    )
    assert said in task_notes(task)  # as faim calibrate prints them
    assert said in write_report({"model": "m", "data": "d", "tasks": {"hate": task}}, tmp_path).read_text()
    assert not any(note.startswith("Left out") for note in task_notes(task | {"sizes_left_out": []}))
    report = {"model": "runs/نموذج (2)", "data": "ملف\u202e.jsonl", "tasks": {"hate": task}}
    heading = "# Calibration of \u200e`runs/نموذج (2)`\u200e on \u200e`ملف.jsonl`\u200e\n"
    assert write_report(report, tmp_path).read_text(encoding="utf-8").startswith(heading)  # right to left apart


def test_fitted_ece_reads_against_the_range_of_a_calibrated_model_on_as_many_posts() -> None:
    start = Calibration.identity([TASK])  # temperature 1 where the labels follow temperature 3
    curve = learning_curve(TASK, start, predictions(800, 3.0), EvalConfig(), sizes=[200, 500], draws=10)
    small, large = curve
    for row in curve:
        assert 0 < row["ece_if_calibrated_low"] < row["ece_if_calibrated_high"]
        # refitted on labels the model is calibrated again: its ECE lies in the range a calibrated model shows
        assert row["ece_if_calibrated_low"] < row["ece_mean"] < row["ece_if_calibrated_high"]
    # 300 posts left to measure on instead of 600: a calibrated model's ECE is larger on fewer posts
    assert large["ece_if_calibrated_high"] > small["ece_if_calibrated_high"]
    assert calibrated_range(small) == f"{small['ece_if_calibrated_low']:.3f}–{small['ece_if_calibrated_high']:.3f}"


def test_a_refit_shifts_the_logits_where_the_platforms_share_of_positives_moved_and_only_there() -> None:
    start = Calibration.identity([TASK])
    posts = predictions(300, 3.0)
    logits, labels = posts.logits["hate"], posts.targets["hate"]
    same, _ = refit(TASK, start, logits, labels, EvalConfig())
    assert same.logit_shifts["hate"] == 0.0 and same.temperatures["hate"] == pytest.approx(3.0, rel=0.25)
    moved, _ = refit(TASK, start, logits + 3.0, labels, EvalConfig())  # the model's share of positives far higher
    assert moved.logit_shifts["hate"] < -0.5


def test_the_curve_counts_the_draws_that_kept_a_shift_and_the_report_says_so(tmp_path) -> None:
    start = Calibration.identity([TASK])
    posts = predictions(800, 3.0)
    moved = Predictions(ids=posts.ids, logits={"hate": posts.logits["hate"] + 3.0}, targets=posts.targets)
    (calibrated,) = learning_curve(TASK, start, posts, EvalConfig(), sizes=[200], draws=10)
    (shifted,) = learning_curve(TASK, start, moved, EvalConfig(), sizes=[200], draws=10)
    assert calibrated["shift_kept"] <= 3 and shifted["shift_kept"] == 10
    note = shift_note([calibrated, shifted])
    assert note == (
        f"Draws whose labels showed a logit shift (likelihood-ratio test at 5%): {calibrated['shift_kept']} of 10 at "
        "200, 10 of 10 at 200 labels; the others were fitted a temperature alone."
    )
    report = {"model": "m", "data": "d", "tasks": {"hate": {"as_is": {"ece": 0.1, "macro_f1": 0.5, "posts": 800},
                                                           "learning_curve": [shifted]}}}  # fmt: skip
    assert "10 of 10 at 200 labels" in write_report(report, tmp_path).read_text()
    multiclass = TaskSpec("truth", "multiclass", ("a", "b", "c"))
    logits = np.random.default_rng(0).normal(size=(300, 3))
    three = Predictions(
        ids=[str(i) for i in range(300)], logits={"truth": logits}, targets={"truth": np.arange(300) % 3}
    )
    (row,) = learning_curve(multiclass, Calibration.identity([multiclass]), three, EvalConfig(), sizes=[100], draws=2)
    assert row["shift_kept"] is None and shift_note([row]) is None


def test_as_trained_ece_of_a_miscalibrated_model_lies_above_that_range() -> None:
    start = Calibration.identity([TASK])
    posts = predictions(800, 3.0)
    (refit,) = learning_curve(TASK, start, posts, EvalConfig(), sizes=[200], draws=5)
    as_trained = expected_calibration_error(start.probabilities(TASK, posts.logits["hate"]), posts.targets["hate"])
    assert as_trained > refit["ece_if_calibrated_high"] > refit["ece_mean"]


def test_a_multilabel_task_has_no_calibration_to_refit() -> None:
    task = TaskSpec("flags", "multilabel", ("a", "b"))
    with pytest.raises(ValueError, match="multilabel task has no calibration"):
        learning_curve(task, Calibration.identity([task]), predictions(10, 1.0), EvalConfig(), sizes=[5])


def test_draws_whose_labels_reach_no_precision_target_are_counted_not_fatal(tmp_path) -> None:
    posts = predictions(600, 3.0)  # weak scores: a few labels rarely show precision 0.97
    config = EvalConfig(threshold_objective="recall@precision", threshold_target=0.97)
    curve = learning_curve(TASK, Calibration.identity([TASK]), posts, config, sizes=[20, 400], draws=8)
    assert [row["labels"] for row in curve] == [20, 400] and all(row["draws"] == 8 for row in curve)
    assert 0 < curve[0]["unreachable"] <= 8 and np.isfinite(curve[0]["ece_mean"])
    note = unreachable_note(curve)
    assert note is not None and f"{curve[0]['unreachable']} of 8 at 20" in note
    report = {"model": "m", "data": "d", "tasks": {"hate": {"as_is": {"ece": 0.1, "macro_f1": 0.5, "posts": 600},
                                                           "learning_curve": curve}}}  # fmt: skip
    assert note in write_report(report, tmp_path).read_text()
    plain = learning_curve(TASK, Calibration.identity([TASK]), posts, EvalConfig(), sizes=[20], draws=3)
    assert plain[0]["unreachable"] == 0 and unreachable_note(plain) is None


def test_the_report_says_how_the_model_ranks_the_posts_and_warns_where_that_is_chance(tmp_path) -> None:
    start = Calibration.identity([TASK])
    posts = predictions(600, 3.0)
    reversed_labels = Predictions(ids=posts.ids, logits=posts.logits, targets={"hate": 1 - posts.targets["hate"]})
    good, bad = (as_is(TASK, start, p, EvalConfig()) for p in (posts, reversed_labels))
    assert good["ranking"]["auroc_low"] > 0.5 > bad["ranking"]["auroc_high"]
    assert good["ranking"]["auroc"] + bad["ranking"]["auroc"] == pytest.approx(1.0)  # the same order, read backwards
    said = ranking_note(good)
    assert said.startswith(
        f"Ranking of the posts one by one, which a calibration keeps: AUROC {good['ranking']['auroc']:.3f}"
    )
    assert "Warning" not in said and "600 labelled posts" in said
    warned = ranking_note(bad)
    assert "ranks the posts worse than chance" in warned and "(`faim calibrate --head`)" in warned
    unsure = ranking_note({"posts": 20, "ranking": {"auroc": 0.7, "auroc_low": 0.45, "auroc_high": 0.95}})
    assert "ranks the posts in a way these 20 posts cannot tell from chance" in unsure
    report = {"model": "m", "data": "d", "tasks": {"hate": {"as_is": bad, "learning_curve": []}}}
    assert warned in write_report(report, tmp_path).read_text()
    few = Predictions(
        ids=["a", "b", "c"], logits={"hate": np.array([0.1, 0.2, 0.3])}, targets={"hate": np.array([0, 0, 1])}
    )
    assert (
        as_is(TASK, start, few, EvalConfig())["ranking"] is None and ranking_note({"posts": 3, "ranking": None}) is None
    )


def test_a_ranking_that_parts_the_classes_completely_is_reported_without_an_interval() -> None:
    start = Calibration.identity([TASK])

    def ranked(logits: list[float], labels: list[int]) -> dict:
        ids = [str(i) for i in range(len(labels))]
        posts = Predictions(ids=ids, logits={"hate": np.array(logits)}, targets={"hate": np.array(labels, "f4")})
        return as_is(TASK, start, posts, EvalConfig())

    four = ranked([-2.0, -1.0, 1.0, 2.0], [0, 0, 1, 1])
    assert four["ranking"] == {"auroc": 1.0, "auroc_low": None, "auroc_high": None}
    note = ranking_note(four)
    assert "interval" in note and "1.000–1.000" not in note and "no interval" in note
    # one ordering in six parts two posts of each class so: chance, as far as four posts tell
    assert "cannot tell from chance" in note
    forty = ranked(list(np.linspace(-3.0, 3.0, 40)), [0] * 20 + [1] * 20)
    assert "no interval" in ranking_note(forty) and "Warning" not in ranking_note(forty)
    reversed_forty = ranked(list(np.linspace(3.0, -3.0, 40)), [0] * 20 + [1] * 20)
    assert "ranks the posts worse than chance" in ranking_note(reversed_forty)
    tied = ranked([0.0] * 40, [0] * 20 + [1] * 20)
    assert "are all one" in ranking_note(tied) and "cannot tell from chance" in ranking_note(tied)


def test_the_head_curve_measures_a_correction_fitted_on_the_same_draws(tmp_path) -> None:
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(900, 16))
    labels = (rng.random(900) < expit(2.0 * embeddings[:, 1])).astype(np.float32)  # a direction the head ignores
    posts = Predictions(
        ids=[str(i) for i in range(900)],
        logits={"hate": 2.0 * embeddings[:, 0]},
        targets={"hate": labels},
        embeddings=embeddings,
    )
    start, config = Calibration.identity([TASK]), EvalConfig(threshold_objective="macro_f1")
    (calibration,) = learning_curve(TASK, start, posts, config, sizes=[200], draws=5)
    (head,) = learning_curve(TASK, start, posts, config, sizes=[200], draws=5, head=True)
    assert calibration["macro_f1_mean"] < 0.6 < 0.7 < head["macro_f1_mean"]
    assert head["ece_mean"] < head["ece_if_calibrated_high"] + 0.02  # calibrated on cross-fitted logits
    task = {"as_is": as_is(TASK, start, posts, config), "learning_curve": [calibration], "head_curve": [head]}
    report = {"model": "m", "data": "d", "tasks": {"hate": task}}
    text = write_report(report, tmp_path).read_text()
    assert "| fitted on 200 labels | 5 draws |" in text and "| fitted on 200 labels, head corrected | 5 draws |" in text
    few = learning_curve(TASK, start, posts, config, sizes=[3, 200], draws=5, head=True)
    assert [row["labels"] for row in few] == [200]  # 3 labels cannot fill five folds
    with pytest.raises(ValueError, match="whole-post embeddings"):
        learning_curve(TASK, start, replace(posts, embeddings=None), config, sizes=[200], head=True)


def test_the_head_curve_draws_the_posts_the_calibrations_curve_draws(monkeypatch) -> None:
    def identity(embeddings: np.ndarray, logits: np.ndarray, y: np.ndarray, seed: int = 0) -> tuple:
        return HeadCorrection(1.0, np.zeros(embeddings.shape[1]), 0.0), logits

    monkeypatch.setattr("faim.eval.recalibration.fit_head_correction", identity)
    posts = replace(predictions(600, 3.0), embeddings=np.zeros((600, 4)))
    start = Calibration.identity([TASK])
    calibration = learning_curve(TASK, start, posts, EvalConfig(), sizes=[3, 200], draws=4)
    head = learning_curve(TASK, start, posts, EvalConfig(), sizes=[3, 200], draws=4, head=True)
    assert head == calibration[1:]  # a correction that changes nothing, on the same draws: the same figures


def test_the_report_names_the_words_the_model_and_the_labels_read_the_opposite_way(tmp_path) -> None:
    rng = np.random.default_rng(0)
    rats = np.arange(200) < 60  # the model flags every post calling someone a rat; the labels call them benign
    logits = np.where(rats, 3.0, rng.normal(0.0, 1.0, 200))
    labels = np.where(rats, 0.0, (logits > 0).astype(float))
    blue = rng.random(200) < 0.5  # a word in half the posts at random, which neither reading leans on
    texts = [("a dirty rat" if rat else "a fine day") + (" blue" if b else "") for rat, b in zip(rats, blue)]
    posts = Predictions(ids=[str(i) for i in range(200)], logits={"hate": logits}, targets={"hate": labels})
    start = Calibration.identity([TASK])
    found = term_disagreement(TASK, start, posts, texts)
    by_term = {t["term"]: t for t in found["shown"]}
    assert found["terms"] == 4 and set(by_term) == {"dirty", "rat", "fine", "day"}
    assert [t["term"] for t in found["shown"]][:2] == ["day", "fine"]  # in the most posts first
    assert by_term["rat"]["posts"] == [60, 60] and by_term["rat"]["shares"] == [1.0, 0.0]
    assert by_term["rat"]["leans"][0] > 0 > by_term["rat"]["leans"][1]
    assert found["share_holding"] == [1.0, 1.0] and found["positive"] == "hate"
    report = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": [], "terms": found}
    said = decision_conflicts_note(found)
    assert said.startswith("Words the model and these labels read the opposite way: 4, in 100 % of the labelled")
    assert "'rat' (60 posts: the model flags 100 %, the labels call 0 % hate)" in said
    assert "(`faim calibrate --head`, for a model that scores posts one by one)" in said
    written = write_report({"model": "m", "data": "d", "tasks": {"hate": report}}, tmp_path).read_text()
    assert said in written
    agreeing = Predictions(ids=posts.ids, logits=posts.logits, targets={"hate": (logits > 0).astype(float)})
    assert term_disagreement(TASK, start, agreeing, texts)["terms"] == 0
    three = TaskSpec("stance", "multiclass", ("a", "b", "c"))
    assert term_disagreement(three, Calibration.identity([three]), posts, texts) is None
    with pytest.raises(ValueError, match="199 texts for 200 predicted posts"):
        term_disagreement(TASK, start, posts, texts[:-1])


def test_the_report_gives_the_interval_of_the_share_em_estimates(tmp_path) -> None:
    start = replace(Calibration.identity([TASK]), priors={"hate": 0.5})
    posts = predictions(200, 1.0)
    moved = prior_adaptation(TASK, start, posts, EvalConfig())
    probabilities = start.probabilities(TASK, posts.logits["hate"])
    low, high = prior_interval(probabilities, 0.5, moved["estimated_prior"])
    assert moved["prior_interval"] == [low, high] and low < moved["estimated_prior"] < high
    report = {"model": "m", "data": "d", "tasks": {"hate": {"as_is": as_is(TASK, start, posts, EvalConfig()),
                                                           "learning_curve": [], "unlabelled": moved}}}  # fmt: skip
    assert f"95% interval {low:.3f}–{high:.3f})" in write_report(report, tmp_path).read_text()
    written = json.loads((tmp_path / "calibration.json").read_text())["tasks"]["hate"]["unlabelled"]
    assert written["prior_interval"] == [low, high]
    assert prior_adaptation(TASK, Calibration.identity([TASK]), posts, EvalConfig())["prior_interval"] is None


def test_a_report_folder_an_evaluation_wrote_too_keeps_the_evaluation_s_files(tmp_path: Path) -> None:
    folder = tmp_path / "report"
    replace_written(folder, ["metrics.json", WRITTEN])  # faim eval's record
    (folder / "metrics.json").write_text("evaluated", encoding="utf-8")
    with pytest.warns(FaimWarning, match=r"is not a record faim calibrate wrote \(no \"writer\": \"faim calibrate\""):
        assert not replace_written(folder, ["calibration.json", WRITTEN], CALIBRATION_WRITER)
    assert not remove_report(folder)  # a calibration measuring no task takes nothing of the evaluation's
    assert (folder / "metrics.json").read_text(encoding="utf-8") == "evaluated"
    assert json.loads((folder / WRITTEN).read_text(encoding="utf-8"))["writer"] == "faim eval"


def test_the_calibrated_range_draws_the_posts_of_a_picture_together_where_groups_are_given() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(60), 10)  # 600 posts, ten to a picture, one verdict to a picture as pooling gives
    logits = np.repeat(rng.normal(0.0, 1.0, 60), 10)
    labels = np.repeat((rng.random(60) < expit(logits[::10])).astype(np.float32), 10)
    labels[::7] = np.nan  # unlabelled posts: the groups are those of the labelled ones
    posts = Predictions(ids=[str(i) for i in range(600)], logits={"hate": logits}, targets={"hate": labels})
    start, config = Calibration.identity([TASK]), EvalConfig()
    (alone,) = learning_curve(TASK, start, posts, config, sizes=[200], draws=4)
    (pooled,) = learning_curve(TASK, start, posts, config, sizes=[200], draws=4, groups=groups)
    # about 60 independent verdicts where 314 posts are measured: a calibrated model's ECE ranges far wider
    assert pooled["ece_if_calibrated_high"] > 1.5 * alone["ece_if_calibrated_high"]
    (unshared,) = learning_curve(TASK, start, posts, config, sizes=[200], draws=4, groups=np.arange(600))
    assert unshared == alone  # a picture to a post draws as posts on their own do


def test_the_report_writes_an_undefined_figure_as_null_in_valid_json(tmp_path: Path) -> None:
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    curve = learning_curve(TASK, start, posts, EvalConfig(), sizes=[50], draws=2)
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()) | {"macro_f1": float("nan")}, "learning_curve": curve}
    write_report({"model": "m", "data": "d", "tasks": {"hate": task}}, tmp_path)
    text = (tmp_path / "calibration.json").read_text()
    written = json.loads(text, parse_constant=lambda name: pytest.fail(f"calibration.json holds {name}"))
    assert written["tasks"]["hate"]["as_is"]["macro_f1"] is None and text.endswith("}\n")


def test_whether_chance_parts_the_classes_more_rarely_than_a_tail_is_counted_exactly_and_of_a_million_at_once() -> None:
    tail = (1 - 0.95) / 2
    for posts in range(1, 50):
        for positives in range(posts + 1):
            assert rarer_by_chance(posts, positives, tail) == (1 / math.comb(posts, positives) < tail)
    assert rarer_by_chance(10**6, 5 * 10**5, tail)  # comb(10**6, 5 * 10**5) in full took 17 s
    assert not rarer_by_chance(10**6, 0, tail) and not rarer_by_chance(10**6, 10**6, tail)


def test_tasks_whose_learning_curves_would_take_one_file_each_get_a_plot_of_their_own(tmp_path: Path) -> None:
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": []}
    task["learning_curve"] = learning_curve(TASK, start, posts, EvalConfig(), sizes=[50], draws=2)
    names = ["Hate", "hate", "a:b", "a_b"]  # one file on macOS and Windows; one file anywhere
    write_report({"model": "m", "data": "d", "tasks": dict.fromkeys(names, task)}, tmp_path)
    plots = json.loads((tmp_path / WRITTEN).read_text(encoding="utf-8"))["files"]
    plots = [name for name in plots if name.endswith(".png")]
    assert len({name.casefold() for name in plots}) == len(plots) == 4
    assert "calibration_Hate.png" in plots and all((tmp_path / name).is_file() for name in plots)


def test_a_tasks_plot_keeps_its_name_whichever_of_the_models_tasks_the_data_labels(tmp_path: Path) -> None:
    # a model of tasks Hate and hate: its hate plot was calibration_hate-2.png on data labelling both, and
    # calibration_hate.png on data labelling hate alone
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    task = {"as_is": as_is(TASK, start, posts, EvalConfig())}
    task["learning_curve"] = learning_curve(TASK, start, posts, EvalConfig(), sizes=[50], draws=2)
    names = model_plot_names([TaskSpec("Hate", "binary", ("no", "yes")), TaskSpec("hate", "binary", ("no", "yes"))])
    for labelled in (["Hate", "hate"], ["hate"]):
        write_report({"model": "m", "data": "d", "tasks": dict.fromkeys(labelled, task)}, tmp_path, names)
        plots = json.loads((tmp_path / WRITTEN).read_text(encoding="utf-8"))["files"]
        assert "calibration_hate-2.png" in plots and "calibration_hate.png" not in plots


def test_a_task_or_label_named_like_html_is_shown_as_written_in_its_heading_and_notes(tmp_path: Path) -> None:
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": []}
    task["terms"] = {"terms": 1, "share_holding": [0.5, 0.5], "overall": [0.5, 0.5], "positive": "<b>hate</b>"}
    task["terms"]["shown"] = [{"term": "rat", "posts": [4, 4], "shares": [1.0, 0.0]}]
    text = write_report({"model": "m", "data": "d", "tasks": {"<script>x</script> & co": task}}, tmp_path).read_text()
    assert "## &lt;script&gt;x&lt;/script&gt; &amp; co\n" in text
    assert "<script>" not in text and "<b>" not in text and "0 % &lt;b&gt;hate&lt;/b&gt;)" in text


def test_the_title_writes_a_model_and_data_path_holding_backticks_as_code(tmp_path) -> None:
    # a path holding a backtick closed the code span calibration.md's title wrote it in, and its HTML ran
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": []}
    report = {"model": "runs/`m`", "data": "posts`<img src=x onerror=alert(1)>`.jsonl", "tasks": {"hate": task}}
    title = write_report(report, tmp_path).read_text(encoding="utf-8").splitlines()[0]
    assert title == "# Calibration of `` runs/`m` `` on ``posts`<img src=x onerror=alert(1)>`.jsonl``"


def test_a_task_named_with_a_hash_is_shown_as_written_in_its_heading(tmp_path: Path) -> None:
    # every # of a name was escaped (C\#); a run of them ending the heading, which Markdown reads as its end, alone is
    start, posts = Calibration.identity([TASK]), predictions(160, 3.0)
    task = {"as_is": as_is(TASK, start, posts, EvalConfig()), "learning_curve": []}
    text = write_report({"model": "m", "data": "d", "tasks": {"C#": task, "hate #": task}}, tmp_path).read_text()
    assert "## C#\n" in text and "## hate \\#\n" in text


def test_a_multiclass_task_lacking_a_class_among_its_labels_says_its_macro_f1_counts_that_class_as_0(tmp_path) -> None:
    # its macro-F1, as it was and at each number of labels, could reach two thirds at most, without a word of why
    task = TaskSpec("kind", "multiclass", ("a", "b", "c"))
    rng = np.random.default_rng(0)
    posts = Predictions(
        ids=[str(i) for i in range(120)],
        logits={"kind": rng.normal(0.0, 1.0, (120, 3))},
        targets={"kind": np.arange(120) % 2},
    )
    start = Calibration.identity([task])
    measured = as_is(task, start, posts, EvalConfig())
    report = {"as_is": measured, "learning_curve": learning_curve(task, start, posts, EvalConfig(), [50], draws=2)}
    note = (
        "No labelled post is 'c' (120 posts): each macro-F1 here counts its F1 as 0, and the temperature is fitted "
        "on the other classes' posts alone."
    )
    assert note in task_notes(report)
    assert note in write_report({"model": "m", "data": "d", "tasks": {"kind": report}}, tmp_path).read_text()
    posts.targets["kind"][0] = 2  # every class: no note
    assert not any(
        "No labelled post" in said for said in task_notes({**report, "as_is": as_is(task, start, posts, EvalConfig())})
    )

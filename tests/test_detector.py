"""Calibration of a detector on validation posts: temperature, optional logit shift, threshold; tasks without labels
keep theirs. Scores and embeddings come back in input order whatever order the posts are batched in."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from functools import partial
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch
from conftest import (
    calibrated,
    check_rows_in_input_order,
    export_posts,
    overflowing_posts,
    pooling_detector,
    shared_picture_posts,
    tiny_recipe,
)
from scipy.special import expit, logit
from sklearn.metrics import roc_auc_score

import faim.runtime
from faim import Detector, Recipe, WholePostModel
from faim.data import post as post_module
from faim.data.batch import PostBatch
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.detector import check_heads_correctable, check_recipe_correctable
from faim.encoders.tiny_text import TinyTextEncoder
from faim.fusion import ConcatFusion
from faim.inference import predict
from faim.model import model_device
from faim.notices import FaimWarning
from faim.recipe import validate
from faim.recipe.sections import EvalConfig
from faim.tasks import BinaryHead, MulticlassHead
from faim.tasks.base import Head
from faim.training.loaders import make_loader


def test_without_logit_shift_only_the_temperature_is_fitted(demo_data, tmp_path: Path) -> None:
    detector, _ = calibrated(demo_data, tmp_path, logit_shift=False)
    assert detector.logit_shifts["harmful"] == 0.0 and detector.temperatures["harmful"] != 1.0


def test_logit_shift_is_fitted_and_moves_every_score_by_it(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=True)
    shift = detector.logit_shifts["harmful"]
    assert shift != 0.0
    shifted = np.array([row["harmful"] for row in detector.score(posts)])
    detector.logit_shifts["harmful"] = 0.0
    plain = np.array([row["harmful"] for row in detector.score(posts)])
    assert shifted == pytest.approx(expit(logit(plain) + shift), abs=1e-5)


def test_calibrating_on_posts_without_a_tasks_labels_keeps_both_its_calibrations(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    per_post, pooled = detector.calibration.copy(), detector.pooled.copy()
    unlabelled = [replace(post, labels={}) for post in posts]
    loader = make_loader(detector.model, detector.collator(with_targets=True), unlabelled, 32, shuffle=False)
    predictions = predict(detector.model, loader, link_kind=detector.pooling_kind)
    detector.calibrate_predictions(predictions, EvalConfig(pool_by_image=1.0, logit_shift=True))
    assert detector.calibration == per_post and detector.pooled == pooled
    assert pooled.temperatures["harmful"] != 1.0  # a fitted calibration, not the identity


def test_posts_batched_shortest_text_first_come_back_in_input_order(exported: tuple[Path, Path]) -> None:
    check_rows_in_input_order(Detector.load(exported[0]))


@pytest.mark.parametrize("served", [False, True])
def test_no_posts_give_no_rows_and_an_unknown_task_is_named_with_the_models_tasks(
    served: bool, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    assert scorer.score([]) == []
    with pytest.raises(KeyError, match="no task 'hat'; its tasks: harm, topic, flags"):
        scorer.decisions("hat", np.array([0.5]))


@pytest.mark.parametrize("served", [False, True])
def test_decisions_read_the_values_score_rows_give_and_refuse_probabilities_of_another_width(
    served: bool, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    rows = scorer.score([{"id": "a", "text": "one post"}, {"id": "b", "text": "another"}])
    for task, labels in (("topic", ("a", "b", "c")), ("flags", ("spam", "abuse"))):
        array = np.array([[row[task][label] for label in labels] for row in rows])
        assert np.array_equal(scorer.decisions(task, [row[task] for row in rows]), scorer.decisions(task, array))
        assert np.array_equal(scorer.decisions(task, rows[1][task]), scorer.decisions(task, array[1]))
        assert scorer.decisions(task, [row[task] for row in scorer.score([])]).shape[0] == 0  # the rows of no post
    with pytest.raises(ValueError, match=r"task 'topic' \(multiclass\) has 3 labels \(a, b, c\): .*got \[2, 2\]"):
        scorer.decisions("topic", np.array([[0.3, 0.7], [0.6, 0.4]]))
    with pytest.raises(ValueError, match="task 'flags' .* lack 1 label: 'abuse';"):
        scorer.decisions("flags", [{"spam": 0.9}])
    with pytest.raises(ValueError, match=r"^task 'harm' \(binary\): expected the probability .*, got \[2, 2\]$"):
        scorer.decisions("harm", np.array([[0.3, 0.7], [0.6, 0.4]]))  # both classes' probabilities: not one each
    column = np.array([[row["harm"]] for row in rows])  # one probability per post as a column, as df[["harm"]] gives
    decided = scorer.decisions("harm", [row["harm"] for row in rows])
    assert np.array_equal(scorer.decisions("harm", column), decided[:, None])
    for nan in ([rows[0]["harm"], float("nan")], [[rows[0]["harm"]], [float("nan")]]):
        with pytest.raises(ValueError, match=r"^task 'harm' \(binary\): the probability of post 1 is NaN"):
            scorer.decisions("harm", nan)


@pytest.mark.parametrize("served", [False, True])
@pytest.mark.parametrize("empty", [{"id": "b"}, {"id": "b", "text": "   ", "comments": [""]}])
def test_a_post_holding_nothing_the_model_reads_is_refused_naming_it(
    served: bool, empty: dict, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    posts = [{"id": "a", "text": "a post"}, empty]
    calls = [scorer.score, scorer.embed] + ([] if served else [scorer.predict, scorer.explain])
    for call in calls:
        with pytest.raises(PostError, match=r"^post 1 \(post id='b'\) .*nothing the model reads") as raised:
            call(posts)
        assert raised.value.kind == "empty"


def test_posts_holding_no_picture_or_none_of_the_metadata_the_model_reads_are_warned_of_once_a_call(
    exported: tuple[Path, Path],
) -> None:
    detector = Detector.load(exported[0])
    posts = [{"id": str(n), "text": "a post " * n, "comments": ["yes"], "meta": {"like_count": n}} for n in range(5)]
    batched = [partial(call, batch_size=2) for call in (detector.score, detector.embed, detector.predict)]
    for call, given in [*((call, posts) for call in batched), (detector.explain, posts[:2])]:  # two: explaining is slow
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            call(given)
        assert [str(warning.message) for warning in said] == [
            "the posts given: no post holds any image, which the model reads: each is read without one, as where the "
            "column holding them is not mapped; give them as each post's 'images'",
            "the posts given: no post's metadata holds any field the model reads (likes, shares), only like_count: "
            "each post is read with them missing; give them in each post's meta under those names",
        ]
        assert all(warning.category is FaimWarning for warning in said)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        detector.score(export_posts()[:1])  # a post holding every kind
        explained = detector.explain(posts[:1], warn=False)  # as faim explain, which warns naming its file, calls it
    assert [explanation.post_id for explanation in explained] == ["0"]
    assert not hasattr(detector, "explain_named")  # explain is the one way to explain posts, checking them


@pytest.mark.parametrize("served", [False, True])
@pytest.mark.parametrize("as_post", [False, True])
@pytest.mark.parametrize(
    ("bad", "field"),
    [({"images": ["no-such-picture.png"]}, "images"), ({"meta": {"likes": "many"}}, "meta")],
)
def test_a_post_that_cannot_be_read_is_named_by_its_index_where_it_has_no_origin(
    served: bool, as_post: bool, bad: dict, field: str, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    given = [{"id": "a", "text": "a post"}, {"id": "b", "text": "another"} | bad]
    posts = [Post(**post) for post in given] if as_post else given
    calls = [scorer.score, scorer.embed] + ([] if served else [scorer.predict, scorer.explain])
    for call in calls:
        with pytest.raises(PostError, match=rf"^post 1 \(post id='b'\) field '{field}': "):
            call(posts)
    (error,) = scorer.readable(posts)[1]
    assert str(error).startswith(f"post 1 (post id='b') field '{field}': ")
    assert [row["id"] for row in scorer.score(posts[:1])] == ["a"]
    with pytest.raises(PostError, match=rf"^file.jsonl:3 \(post id='b'\) field '{field}': "):
        scorer.score([Post(**post, origin=f"file.jsonl:{line}") for line, post in enumerate(given, 2)])


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"images": ["no-such-picture.png"]}, "field 'images': image 'no-such-picture.png'"),
        ({"comments": ["fine", "cut \ud83d"]}, "field 'comments': holds half of a UTF-16 surrogate pair"),
        ({"meta": {"likes": float("inf")}}, "field 'meta': meta field 'likes' must be finite"),
    ],
)
def test_a_post_the_model_would_stop_at_is_refused_before_it_reads_any_post(
    bad: dict, said: str, exported: tuple[Path, Path]
) -> None:
    detector = Detector.load(exported[0])
    read = []
    detector.model.encoders["text"].register_forward_hook(lambda *_: read.append(1))
    posts = [{"id": str(n), "text": "a post " * n} for n in range(1, 5)]
    posts.append({"id": "last", "text": "the longest post, read last " * 3} | bad)
    for call in (detector.score, detector.embed, detector.predict, detector.explain):
        with pytest.raises(PostError, match=rf"^post 4 \(post id='last'\) {re.escape(said)}"):
            call(posts, **({} if call == detector.explain else {"batch_size": 1}))
    assert not read


@pytest.mark.parametrize("served", [False, True])
def test_a_post_whose_scores_are_not_finite_is_refused_naming_it_and_its_tasks(
    served: bool, overflowing: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(overflowing[1]) if served else Detector.load(overflowing[0])
    posts = overflowing_posts()
    said = r"the model's scores \(logits\) of tasks 'harm', 'topic' are not finite \(NaN or infinite\), "
    with pytest.raises(ValueError, match=rf"^post 1 \(post id='viral'\): {said}.*; leave it out to score the others$"):
        scorer.score(posts, batch_size=2)
    with pytest.raises(ValueError, match=rf"^file.jsonl:3 \(post id='viral'\): {said}"):
        scorer.score([Post(**post, origin=f"file.jsonl:{line}") for line, post in enumerate(posts, 2)])
    rows = scorer.score(posts[::2])
    assert [row["id"] for row in rows] == ["a", "b"] and all(0 <= row["harm"] <= 1 for row in rows)


def test_explaining_a_post_whose_scores_are_not_finite_is_refused_naming_it_and_its_tasks(
    overflowing: tuple[Path, Path],
) -> None:
    detector = Detector.load(overflowing[0])
    said = r"the model's scores \(logits\) of tasks 'harm', 'topic' are not finite \(NaN or infinite\)"
    with pytest.raises(PostError, match=rf"^post 1 \(post id='viral'\): {said}") as refused:
        detector.explain(overflowing_posts())
    assert refused.value.kind == "scores"
    failed: list[PostError] = []
    explained = detector.explain(overflowing_posts(), failed=failed)
    assert [explanation.post_id for explanation in explained] == ["a", "b"]
    assert [(error.post_id, error.kind) for error in failed] == [("viral", "scores")]


@pytest.mark.parametrize("failed", [(), "", frozenset()])
def test_explaining_into_a_failed_that_cannot_be_appended_to_is_refused_before_any_post_is_explained(
    failed: object,
) -> None:
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    with torch.no_grad():
        for weight in model.heads["hate"].parameters():
            weight.fill_(float("nan"))  # every post's scores are not finite
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    said = f"failed: expected a list the errors are appended to, got {type(failed).__name__}: pass failed=[]"
    with mock.patch("faim.detector.explain_post") as explain_post, pytest.raises(TypeError, match=re.escape(said)):
        detector.explain([{"text": "a post"}], failed=failed)
    explain_post.assert_not_called()
    errors: list[PostError] = []
    assert detector.explain([{"text": "a post"}], failed=errors) == []
    assert [error.kind for error in errors] == ["scores"]


@pytest.mark.parametrize("served", [False, True])
def test_a_post_whose_id_was_taken_away_after_it_was_built_is_refused_naming_its_origin(
    served: bool, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    posts = [Post("a", "a post", origin="file.jsonl:2"), Post("b", "another", origin="file.jsonl:3")]
    posts[1].id = None  # as a data source's plug-in may set it: its row's id would be None
    for call in [scorer.score, scorer.embed, scorer.readable] + ([] if served else [scorer.explain]):
        with pytest.raises(ValueError, match=r"^file.jsonl:3 field 'id': missing; give each post an id"):
            call(posts)


@pytest.mark.parametrize("served", [False, True])
def test_a_post_whose_id_was_set_to_a_number_after_it_was_built_is_scored_with_it_as_text(
    served: bool, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    posts = [Post(7, "a post", origin="file.jsonl:2"), Post("b", "another", origin="file.jsonl:3")]
    posts[1].id = 8  # as a data source's plug-in may set it: its row's id would be the number
    assert [row["id"] for row in scorer.score(posts)] == ["7", "8"]


@pytest.mark.parametrize("served", [False, True])
def test_the_ids_of_the_posts_scored_are_made_text_once(served: bool, exported: tuple[Path, Path]) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    posts = [Post("a", "a post"), Post("b", "another")]
    posts[1].id = 8
    with mock.patch.object(post_module, "normalised", wraps=post_module.normalised) as normalised:
        rows = scorer.score(posts)
    assert [row["id"] for row in rows] == ["a", "8"] and normalised.call_count == len(posts)


@pytest.mark.parametrize("served", [False, True])
@pytest.mark.parametrize("batch_size", [0, -1])
def test_a_batch_size_below_one_is_refused_naming_it(
    served: bool, batch_size: int, exported: tuple[Path, Path]
) -> None:
    scorer = faim.runtime.load(exported[1]) if served else Detector.load(exported[0])
    calls = [scorer.score, scorer.embed, scorer.predict]
    for call in calls:
        with pytest.raises(ValueError, match=rf"^batch_size must be at least 1, got {batch_size}$"):
            call([{"id": "a", "text": "a post"}], batch_size=batch_size)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_model_put_in_half_precision_is_refused_before_it_reads_a_post_saying_to_put_it_back(
    dtype: torch.dtype, exported: tuple[Path, Path]
) -> None:
    detector = Detector.load(exported[0])
    detector.model.to(dtype)
    posts = export_posts()[:2]
    said = rf"^{re.escape(str(exported[0]))}: the model's weights are {dtype} \(model.half\(\) or model.to\(dtype\)\), "
    for call in (detector.score, detector.embed, detector.predict, detector.explain):
        with pytest.raises(ValueError, match=said + r".*: call detector.model.float\(\) first$"):
            call(posts)
    detector.model.float()
    assert [row["id"] for row in detector.score(posts)] == ["full", "text-only"]


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([("hate", "binary", 2)], r"\): 1 head without a task: 'topic'; give"),
        (
            [("hat", "binary", 2), ("topic", "multiclass", 3)],
            r"\): 1 task without a head: 'hat'; 1 head without a task: 'hate'; give",
        ),
        ([("hate", "multiclass", 2), ("topic", "multiclass", 3)], "task 'hate' is multiclass but its head is binary"),
        ([("hate", "binary", 2), ("topic", "multiclass", 2)], "task 'topic' has 2 labels but its head gives 3 classes"),
        ([("hate", "binary", 2), ("topic", "multiclass", 1)], "task 'topic' has 1 label but its head gives 3 classes"),
        (
            [("hate", "binary", 3), ("topic", "multiclass", 3)],
            r"task 'hate' is binary but has 3 labels \('a', 'b', 'c'\); give it two: \(negative, positive\)",
        ),
        ([("hate", "binary", 1), ("topic", "multiclass", 3)], r"task 'hate' is binary but has 1 label \('a',\)"),
    ],
)
def test_tasks_that_do_not_match_the_heads_are_refused_naming_what_differs(tasks: list, message: str) -> None:
    model = WholePostModel(
        {"text": TinyTextEncoder(dim=8)},
        ConcatFusion({"text": 8}),
        {"hate": BinaryHead(8), "topic": MulticlassHead(8, num_classes=3)},
    )
    specs = [TaskSpec(name, kind, tuple("abc"[:size])) for name, kind, size in tasks]
    with pytest.raises(ValueError, match=message):
        Detector(model, specs)


@pytest.mark.parametrize(
    ("tasks", "given"),
    [
        (TaskSpec("hate", "binary", ("no", "yes")), "one TaskSpec"),
        ({"hate": TaskSpec("hate", "binary", ("no", "yes"))}, "dict"),
        (None, "NoneType"),
        ({TaskSpec("hate", "binary", ("no", "yes"))}, r"set, whose order changes from run to run"),
        (frozenset({TaskSpec("hate", "binary", ("no", "yes"))}), r"frozenset, whose order changes from run to run"),
    ],
    ids=["one spec", "a mapping of them", "none", "a set", "a frozenset"],
)
def test_one_task_spec_a_mapping_a_set_or_no_iterable_given_as_the_tasks_is_refused_asking_for_a_list(
    tasks: object, given: str
) -> None:
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    message = rf"^expected a list of TaskSpec, one per head \(hate\), got {given}: pass \[TaskSpec\(\.\.\.\), \.\.\.\]$"
    with pytest.raises(TypeError, match=message):
        Detector(model, tasks)


def test_tasks_given_as_a_generator_are_read_once_into_the_list_a_list_gives() -> None:
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    specs = [TaskSpec("hate", "binary", ("no", "yes"))]
    detector = Detector(model, (spec for spec in specs))
    assert detector.tasks == specs
    assert detector.calibration.thresholds == {"hate": 0.5}
    posts = [{"id": "a", "text": "a post"}]
    assert detector.score(posts) == Detector(model, specs).score(posts)


def test_reading_posts_pooled_by_picture_is_refused_by_a_detector_that_does_not_pool_as_scoring_them_so_is() -> None:
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    posts = [{"id": "a", "text": "a post"}]
    for call in (detector.readable, detector.score):
        with pytest.raises(ValueError, match=r"^<python>: the recipe has no eval.pool_by_image; score its posts one "):
            call(posts, pool_by_image=True)
    assert [post.id for post in detector.readable(posts)[0]] == ["a"]


@pytest.mark.parametrize("given", [0.9, 1, "yes"])
def test_a_pool_by_image_that_is_not_true_or_false_is_refused_as_a_cosine_the_model_would_not_pool_at(
    given: object, tmp_path: Path
) -> None:
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    said = rf"^pool_by_image: expected True or False, got {re.escape(repr(given))} \(.+\): posts are pooled at the "
    posts = [{"id": "a", "text": "a post"}]
    for call in (partial(detector.readable, posts), partial(detector.score, posts)):
        with pytest.raises(TypeError, match=said):
            call(pool_by_image=given)
    with pytest.raises(TypeError, match=said):  # before the dump or its output folder is looked at
        faim.score_dump(detector, tmp_path / "no-dump.jsonl", tmp_path / "out", pool_by_image=given)
    assert not (tmp_path / "out").exists()
    assert detector.score(posts, pool_by_image=np.bool_(False)) == detector.score(posts, pool_by_image=None)


def test_scoring_embedding_or_explaining_leaves_every_module_in_the_mode_it_was_in() -> None:
    torch.manual_seed(0)
    fusion = ConcatFusion({"text": 8}, dropout=0.5)
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, fusion, {"hate": BinaryHead(8)}).train()
    model.heads["hate"].eval()  # one kept in eval mode while the rest trains
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    modes = {name: module.training for name, module in model.named_modules()}
    posts = [{"id": "a", "text": "a post"}]
    for call in (detector.score, detector.embed, detector.explain):
        call(posts)
        assert {name: module.training for name, module in model.named_modules()} == modes, call.__name__
    assert detector.score(posts) == detector.score(posts)  # scored without dropout all the same


def test_explaining_moves_each_post_to_where_the_models_weights_are_before_the_model_reads_it(monkeypatch) -> None:
    torch.manual_seed(0)
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    moved, read = [], []
    to, encode = PostBatch.to, model.encode

    def spied_to(batch: PostBatch, device: torch.device) -> PostBatch:
        moved.append((device, to(batch, device)))
        return moved[-1][1]

    def spied_encode(batch: PostBatch, *args, **kwargs):
        read.append(batch)
        return encode(batch, *args, **kwargs)

    monkeypatch.setattr(PostBatch, "to", spied_to)
    monkeypatch.setattr(model, "encode", spied_encode)
    detector.explain([{"id": "a", "text": "a post"}, {"id": "b", "text": "another post"}])
    assert [device for device, _ in moved] == [model_device(model)] * 2
    assert read and all(any(batch is on_device for _, on_device in moved) for batch in read)


def test_a_correction_weight_in_calibrated_logits_becomes_raw_pooled_logits_and_then_stays(
    demo_data, tmp_path: Path
) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    for post in posts[::8]:
        post.text = f"{post.text} this is fake"
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    predictions = predict(detector.model, loader, link_kind=detector.pooling_kind)
    assert predictions.corrections.sum() == len(posts[::8])
    config = EvalConfig(pool_by_image=1.0, logit_shift=True)
    detector.calibrate_predictions(predictions, config)
    temperature = detector.pooled.temperatures["harmful"]  # pooled without the crowd's corrections
    detector.calibrate_predictions(predictions, config, {"harmful": 1.5})
    raw = detector.pooled.correction_weights["harmful"]
    assert raw == pytest.approx(1.5 * temperature)
    detector.calibrate_predictions(predictions, config)  # a refit (faim calibrate) keeps the raw weight
    assert detector.pooled.correction_weights == {"harmful": raw}


def test_weighing_the_crowds_corrections_needs_a_detector_that_pools(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    predictions = predict(detector.model, loader, embeddings=True)
    with pytest.raises(ValueError, match="needs eval.pool_by_image"):
        detector.correction_weights(predictions, ["a"] * len(posts), 0.05)


def test_a_task_whose_training_posts_hold_one_class_or_one_group_gets_no_correction_weight(
    demo_data, tmp_path: Path
) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    predictions = predict(detector.model, loader, link_kind=detector.pooling_kind, embeddings=True)
    one_class = replace(predictions, targets={"harmful": np.zeros(len(posts))})
    assert detector.correction_weights(one_class, [f"g{i % 3}" for i in range(len(posts))], 0.05) == {"harmful": 0.0}
    assert detector.correction_weights(predictions, ["g"] * len(posts), 0.05) == {"harmful": 0.0}


def test_heads_corrected_on_labels_the_model_reverses_rank_them_and_survive_saving(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=True)
    reversed_posts = [replace(post, labels={"harmful": 1 - post.labels["harmful"]}) for post in posts]
    loader = make_loader(detector.model, detector.collator(with_targets=True), reversed_posts, 32, shuffle=False)
    predictions = predict(detector.model, loader, embeddings=True)
    y = predictions.targets["harmful"]
    with pytest.raises(ValueError, match="whole-post embeddings"):
        detector.correct_heads(replace(predictions, embeddings=None), EvalConfig())
    unlabelled = detector.predict(reversed_posts, embeddings=True)  # Detector.predict reads no labels
    with pytest.raises(ValueError, match=r"hold no labels .*detector.calibrate\(batches, config\) over batches of"):
        detector.correct_heads(unlabelled, EvalConfig())
    assert detector.correct_heads(predictions, EvalConfig(logit_shift=True)) == ["harmful"]
    corrected = predict(detector.model, loader).logits["harmful"]
    # fitted on these posts: that the correction is in the head, not how it does on others (tests/calibration)
    assert roc_auc_score(y, corrected) > 0.7 > 0.5 > roc_auc_score(y, predictions.logits["harmful"])
    scores = [row["harmful"] for row in detector.score(reversed_posts)]
    trained_from = Recipe.from_dict(tiny_recipe(demo_data, tmp_path / "run"))  # its head says nothing of a correction
    for saved, recipe in (("from_model", None), ("with_recipe", trained_from)):
        detector.save(tmp_path / saved, recipe)
        assert "correction: true" in (tmp_path / saved / "recipe.yaml").read_text()
        assert [row["harmful"] for row in Detector.load(tmp_path / saved).score(reversed_posts)] == scores
    pooling, _ = pooling_detector(demo_data, tmp_path / "pooling")
    with pytest.raises(ValueError, match="pools posts by picture cannot have its heads corrected"):
        pooling.correct_heads(predictions, EvalConfig())


class OtherBinaryHead(Head):
    """A binary head of someone else's: it holds no correction."""

    task_type = "binary"

    def loss(self, logits, target):
        return logits.sum()


def test_only_faims_binary_head_can_be_corrected(demo_data, tmp_path: Path) -> None:
    detector, _ = calibrated(demo_data, tmp_path, logit_shift=False)
    detector.model.heads["harmful"] = OtherBinaryHead(8, 1)
    with pytest.raises(ValueError, match="task 'harmful' has a OtherBinaryHead head; only faim's binary head"):
        detector.check_correctable()


def test_every_binary_task_whose_head_cannot_be_corrected_is_named_at_once() -> None:
    tasks = [TaskSpec(name, "binary", ("no", "yes")) for name in ("hate", "spam", "scam")]
    heads = {"hate": OtherBinaryHead, "spam": BinaryHead, "scam": Head}
    said = "model: task 'hate' has a OtherBinaryHead head, task 'scam' has a Head head; only faim's binary head can"
    with pytest.raises(ValueError, match=f"^{re.escape(said)} hold a correction$"):
        check_heads_correctable("model", tasks, heads, pooled=False)


def test_a_model_without_a_binary_task_has_no_head_to_correct() -> None:
    model = WholePostModel(
        {"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"topic": MulticlassHead(8, num_classes=3)}
    )
    detector = Detector(model, [TaskSpec("topic", "multiclass", ("a", "b", "c"))])
    with pytest.raises(ValueError, match=r"^<python>: no binary task to correct the head of; its tasks: topic \(multi"):
        detector.check_correctable()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"eval": {"pool_by_image": 1.0}}, "^model: a model that pools posts by picture cannot have its heads"),
        ({"head": "multiclass"}, r"^model: no binary task to correct the head of; its tasks: harmful \(multiclass\)"),
    ],
)
def test_a_recipe_says_its_heads_cannot_be_corrected_before_the_model_is_built(
    demo_data, tmp_path: Path, change: dict, said: str
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= change.get("eval", {})
    recipe["model"]["heads"]["harmful"]["type"] = change.get("head", "binary")
    with pytest.raises(ValueError, match=said):
        check_recipe_correctable(Recipe.from_dict(recipe), "model")
    check_recipe_correctable(Recipe.from_dict(tiny_recipe(demo_data, tmp_path / "run")), "model")


def test_posts_holding_more_pictures_or_comments_than_the_model_reads_are_warned_of_once(
    exported: tuple[Path, Path],
) -> None:
    detector = Detector.load(exported[0])
    given = next(post for post in export_posts() if post.get("images") and post.get("meta"))
    picture = given["images"][0]
    read = {"id": "read", "text": "a post", "images": [picture] * 8, "comments": ["ok"] * 8, "meta": given["meta"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FaimWarning)
        alone = detector.score([read])
    more = [read | {"id": "pictures", "images": [picture] * 12}, read | {"id": "comments", "comments": ["ok"] * 10}]
    with pytest.warns(FaimWarning) as said:
        rows = detector.score([read, *more])
    assert [str(warning.message) for warning in said if warning.category is FaimWarning] == [
        "the posts given: 2 posts hold more pictures or comments than the model reads of a post (up to 12): it reads "
        "the first 8 of each alone (the recipe's train.max_elements: 8), the rest unread; a model trained with a "
        "larger train.max_elements reads more"
    ]
    assert rows[1]["harm"] == pytest.approx(alone[0]["harm"])  # read from its first pictures, as the warning says


@pytest.mark.parametrize("head", ["binary", "multiclass"])
def test_scoring_pooled_a_model_with_a_task_named_picture_group_is_refused_rather_than_giving_the_group_for_its_scores(
    head: str, demo_data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["eval"] |= {"pool_by_image": 1.0, "logit_shift": True}
    recipe["model"]["heads"] = {"picture_group": {"type": head, "labels": ["no", "yes"]}}
    del recipe["data"]
    monkeypatch.setattr(validate, "check_score_columns", lambda *_: None)  # a model saved before recipes refused it
    detector = faim.build(recipe)
    detector.pooled = detector.calibration.copy()
    posts = shared_picture_posts(demo_data)[:8]
    with pytest.raises(ValueError, match=r"^<dict>: a task named 'picture_group' would take the place of each "):
        detector.score(posts, pool_by_image=True)
    assert [set(row) for row in detector.score(posts)] == [{"id", "picture_group"}] * 8

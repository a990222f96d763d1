"""Predictions: picking rows keeps every field of each row together; which posts the crowd's words are read in;
batches reach the model where its weights are."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from conftest import pooling_detector, tiny_recipe

import faim
from faim import Detector, WholePostModel
from faim.data.batch import PostBatch
from faim.data.targets import TaskSpec
from faim.encoders.tiny_text import TinyTextEncoder
from faim.fusion import ConcatFusion
from faim.inference import Predictions, predict
from faim.tasks import BinaryHead
from faim.training.loaders import make_loader


def test_rows_picks_every_field_of_the_rows_asked_for_in_that_order() -> None:
    predictions = Predictions(
        ["a", "b", "c"],
        {"harm": np.array([0.1, 0.2, 0.3])},
        {"harm": np.array([0.0, 1.0, np.nan])},
        [{"n": 0}, {"n": 1}, {"n": 2}],
        np.arange(6.0).reshape(3, 2),
        np.arange(3.0).reshape(3, 1),
        np.array([True, False, True]),
        np.array([True, False, False]),
    )
    picked = predictions.rows(np.array([2, 0]))
    assert picked.ids == ["c", "a"] and picked.meta == [{"n": 2}, {"n": 0}]
    assert picked.logits["harm"].tolist() == [0.3, 0.1]
    assert np.isnan(picked.targets["harm"][0]) and picked.targets["harm"][1] == 0.0
    assert picked.embeddings.tolist() == [[4.0, 5.0], [0.0, 1.0]]
    assert picked.link_embeddings.tolist() == [[2.0], [0.0]] and picked.link_present.tolist() == [True, True]
    assert picked.corrections.tolist() == [False, True]


def test_rows_keeps_absent_fields_absent() -> None:
    picked = Predictions(["a"], {"harm": np.array([0.5])}, meta=[{}]).rows(np.array([0]))
    assert picked.embeddings is None and picked.link_embeddings is None and picked.link_present is None
    assert picked.corrections is None


def test_posts_that_question_their_picture_are_told_unless_the_text_is_masked(demo_data, tmp_path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    posts[3].text = "is this real?"
    posts[5].comments = ["photoshopped, obviously"]
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    told = predict(detector.model, loader).corrections
    assert np.flatnonzero(told).tolist() == [3, 5]
    assert not predict(detector.model, loader, drop=["text"]).corrections.any()
    assert np.array_equal(predict(detector.model, loader, drop=["image"]).corrections, told)


def test_predictions_over_no_post_hold_every_task_shaped_as_over_some(demo_data, tmp_path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path)
    recipe["model"]["heads"]["kind"] = {"type": "multiclass", "labels": ["a", "b", "c"], "hidden_dim": 32}
    detector = faim.build(recipe)
    none, one = detector.predict([]), detector.predict([{"id": "a", "text": "hello"}])
    assert {task: array.shape for task, array in none.logits.items()} == {"harmful": (0,), "kind": (0, 3)}
    assert {task: array.shape[1:] for task, array in one.logits.items()} == {"harmful": (), "kind": (3,)}
    assert none.logits["kind"].dtype == one.logits["kind"].dtype == np.float32


class Given(Exception):
    """Raised by a model once it is given a batch, to stop there."""


def test_batches_are_moved_to_the_device_the_models_weights_are_on(monkeypatch) -> None:
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    model.to("meta")  # as a model moved to a GPU after loading: none of its weights on the CPU
    devices = []

    def encode(batch: PostBatch, *args: object) -> None:
        text = batch.elements["text"]
        devices.append({tensor.device.type for tensor in (text.post_index, *text.values.values())})
        raise Given

    monkeypatch.setattr(model, "encode", encode)
    posts = [{"id": "a", "text": "a post"}]
    for run in (
        lambda: detector.score(posts),
        lambda: detector.embed(posts),
        lambda: predict(model, [detector.collator()(detector.readable(posts)[0])]),
    ):
        with pytest.raises(Given):
            run()
    assert devices == [{"meta"}] * 3


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_model_in_half_precision_is_refused_before_a_batch_is_read(dtype: torch.dtype) -> None:
    """Evaluation, faim calibrate, training's crowd corrections and scoring a dump run the model here, as the
    detector's calls do."""
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    model.to(dtype)
    read = []

    def batches() -> Iterator[PostBatch]:
        read.append(True)
        yield detector.collator()(detector.readable([{"id": "a", "text": "a post"}])[0])

    with pytest.raises(ValueError, match=rf"^the model's weights are {dtype} .*: call detector.model.float\(\) first$"):
        predict(model, batches())
    assert not read

"""Probabilities read for decisions: a NaN, or a value outside 0 to 1, is refused naming the task, the post and the
label, never decided."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from faim.data.post import Post
from faim.decisions import decision_probabilities, nonfinite_tasks, refuse_nonfinite

HARM = SimpleNamespace(name="harm", type="binary", labels=["ok", "harm"])
TOPIC = SimpleNamespace(name="topic", type="multiclass", labels=["a", "b", "c"])


@pytest.mark.parametrize(
    ("task", "probabilities", "message"),
    [
        (HARM, [0.9, float("nan")], r"^task 'harm' \(binary\): the probability of post 1 is NaN, "),
        (HARM, float("nan"), r"^task 'harm' \(binary\): the probability is NaN, "),
        (
            TOPIC,
            np.array([[0.1, 0.2, 0.7], [np.nan, 0.1, np.nan]]),
            r"^task 'topic' \(multiclass\): the probability of post 1, label 'a' is NaN \(2 NaNs in all\), ",
        ),
        (TOPIC, {"a": 0.1, "b": np.nan, "c": 0.1}, r"^task 'topic' \(multiclass\): the probability of label 'b' is "),
    ],
)
def test_a_nan_probability_is_refused_naming_the_task_post_and_label(task, probabilities, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decision_probabilities(task, probabilities)


@pytest.mark.parametrize(
    ("task", "probabilities", "message"),
    [
        (HARM, [0.9, 2.3], r"^task 'harm' \(binary\): the probability of post 1 is 2\.3, outside 0 to 1 \(a logit"),
        (HARM, -0.4, r"^task 'harm' \(binary\): the probability is -0\.4, outside 0 to 1 \(a logit\?\), "),
        (
            TOPIC,
            np.array([[0.1, 0.2, 0.7], [1.5, np.nan, -2.0]]),
            r"^task 'topic' \(multiclass\): the probability of post 1, label 'a' is 1\.5, outside 0 to 1 \(a logit\?\) "
            r"\(3 NaN or outside 0 to 1 in all\), which cannot be decided",
        ),
        (HARM, [np.inf], r"^task 'harm' \(binary\): the probability of post 0 is inf, outside 0 to 1 "),
    ],
)
def test_a_probability_outside_0_to_1_is_refused_naming_the_task_post_and_label(
    task, probabilities, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        decision_probabilities(task, probabilities)


def test_a_probability_a_float32_sigmoid_rounds_past_0_or_1_is_decided() -> None:
    """onnxruntime's float32 sigmoid gives 1.0000001 for some logits near 18, as an exported model scores them."""
    above = np.nextafter(np.float32(1), np.float32(2))
    assert above > 1
    np.testing.assert_array_equal(decision_probabilities(HARM, np.array([above, np.float32(0.5)])), [above, 0.5])
    assert decision_probabilities(HARM, -1e-9) == -1e-9
    with pytest.raises(ValueError, match=r"is 1\.00001, outside 0 to 1"):
        decision_probabilities(HARM, 1.00001)


def test_probabilities_come_from_any_iterable_as_score_rows_give_them() -> None:
    rows = [
        {"harm": 0.2, "topic": {"a": 0.1, "b": 0.7, "c": 0.2}},
        {"harm": 0.9, "topic": {"a": 0.6, "b": 0.3, "c": 0.1}},
    ]
    assert decision_probabilities(HARM, (row["harm"] for row in rows)).tolist() == [0.2, 0.9]
    topic = decision_probabilities(TOPIC, (row["topic"] for row in rows))
    assert topic.tolist() == [[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]]


def test_a_mapping_holding_a_label_the_task_has_not_is_refused_naming_it() -> None:
    # the probability of 'd' (a class of another model, say) was dropped and the post decided among the others
    with pytest.raises(ValueError) as refused:
        decision_probabilities(TOPIC, [{"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}])
    assert str(refused.value) == (
        "task 'topic' (multiclass): the probabilities hold 1 label the task has not: 'd'; give one per label: a, b, c"
    )
    with pytest.raises(ValueError, match=r"lack 1 label: 'c' and hold 1 label the task has not: 'C'; give one per"):
        decision_probabilities(TOPIC, [{"a": 0.1, "b": 0.2, "C": 0.3}])


@pytest.mark.parametrize("task", [HARM, TOPIC])
def test_the_rows_score_gives_are_refused_saying_to_give_the_tasks_values_from_them(task) -> None:
    rows = [
        {"id": "1", "harm": 0.2, "topic": {"a": 0.1, "b": 0.7, "c": 0.2}},
        {"id": "2", "harm": 0.9, "topic": {"a": 0.6, "b": 0.3, "c": 0.1}},
    ]
    said = (
        f"task {task.name!r} ({task.type}): given the rows score gives (each post's id and scores), not the task's "
        f"probabilities; give those: [row[{task.name!r}] for row in rows]"
    )
    for given in (rows, rows[0], iter(rows)):
        with pytest.raises(ValueError) as refused:
            decision_probabilities(task, given)
        assert str(refused.value) == said


def test_a_frame_series_or_tensor_is_read_as_the_array_it_gives() -> None:
    frame = pd.DataFrame({"harm": [0.2, 0.9], "a": [0.1, 0.6], "b": [0.7, 0.3], "c": [0.2, 0.1]})
    assert decision_probabilities(TOPIC, frame[["a", "b", "c"]]).tolist() == [[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]]
    assert decision_probabilities(HARM, frame["harm"]).tolist() == [0.2, 0.9]
    assert decision_probabilities(HARM, frame[["harm"]]).tolist() == [[0.2], [0.9]]  # a column
    assert decision_probabilities(HARM, torch.tensor([0.2, 0.9], dtype=torch.float64)).tolist() == [0.2, 0.9]
    rows = pd.Series([{"a": 0.1, "b": 0.7, "c": 0.2}])  # score rows' mappings in a series
    assert decision_probabilities(TOPIC, rows).tolist() == [[0.1, 0.7, 0.2]]
    assert decision_probabilities(TOPIC, frame[["c", "a", "b"]]).tolist() == [[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]]
    with pytest.raises(ValueError, match=r"^task 'topic' \(multiclass\): a frame's columns \(harm, a, b\) are not"):
        decision_probabilities(TOPIC, frame[["harm", "a", "b"]])
    with pytest.raises(ValueError, match=r"^task 'harm' \(binary\): expected probabilities as numbers: "):
        decision_probabilities(HARM, torch.tensor([0.2, 0.9], dtype=torch.bfloat16))  # which numpy cannot hold


@pytest.mark.parametrize(
    ("task", "probabilities", "text"),
    [
        (HARM, "0.5", r"'0\.5'"),
        (HARM, ["0.2", "0.9"], r"'0\.2' \(2 values of text in all\)"),
        (HARM, np.array(["0.7"]), r"'0\.7'"),
        (HARM, [0.2, b"0.9"], r"b'0\.9'"),
        (TOPIC, {"a": "0.1", "b": 0.7, "c": 0.2}, r"'0\.1'"),
        (HARM, np.str_("0.9"), r"'0\.9'"),
        (HARM, [0.2, np.array([["0.3"]])], r"'0\.3'"),
    ],
    ids=["one string", "a list of them", "an array of them", "bytes among numbers", "a label's", "numpy's", "nested"],
)
def test_a_probability_given_as_text_is_refused_naming_the_task(task, probabilities, text: str) -> None:
    message = rf"^task '{task.name}' \({task.type}\): expected probabilities as numbers, got text: {text}; "
    with pytest.raises(ValueError, match=message):
        decision_probabilities(task, probabilities)


def test_only_the_posts_and_tasks_whose_logits_are_not_finite_are_named_infinite_ones_too() -> None:
    logits = {
        "harm": np.array([0.3, np.inf, 1.0, -np.inf]),
        "topic": np.array([[0.0] * 3, [1, 2, 3], [np.nan, 0, 0], [4] * 3]),
    }
    assert nonfinite_tasks([HARM, TOPIC], logits) == {1: ["harm"], 2: ["topic"], 3: ["harm"]}
    posts = [Post(str(index), text="x", origin=f"post {index}") for index in range(4)]
    said = r"^post 1 \(post id='1'\): the model's scores \(logits\) of task 'harm' are not finite \(NaN or infinite\)"
    with pytest.raises(ValueError, match=rf"{said}.* \(3 posts in all\); leave them out to score the others$"):
        refuse_nonfinite(posts, [HARM, TOPIC], logits)
    refuse_nonfinite(posts[:1], [HARM, TOPIC], {name: values[:1] for name, values in logits.items()})

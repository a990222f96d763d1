"""Raw label values into class indices and targets, per task type."""

from __future__ import annotations

import math

import pytest

from faim.data.collate import post_targets
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.targets import TaskSpec

BINARY = TaskSpec("hate", "binary", ("not-hate", "hate"))
MULTICLASS = TaskSpec("truth", "multiclass", ("false", "half", "true"))


@pytest.mark.parametrize("value", [1, 1.0, True, "1", "hate", " hate ", "yes", "TRUE"])
def test_a_binary_label_is_read_in_each_of_its_forms(value) -> None:
    assert BINARY.target(value, "x") == 1.0


def test_a_multiclass_label_is_a_name_or_an_index_and_an_unlabelled_post_is_marked() -> None:
    assert [MULTICLASS.index(v, "x") for v in ("half", 2, "0")] == [1, 2, 0]
    assert MULTICLASS.missing() == -100 and math.isnan(BINARY.missing())


def test_a_value_that_is_no_label_names_the_place_and_the_forms_a_label_takes() -> None:
    with pytest.raises(ValueError) as raised:
        BINARY.target(0.98, "ethos.csv:165 (post id='163') field 'labels.hate'")
    message = str(raised.value)
    assert message.startswith("ethos.csv:165 (post id='163') field 'labels.hate': label 0.98 for task 'hate' is not")
    assert "['not-hate', 'hate']" in message and "0 to 1" in message and "true/false" in message
    expected = r"label 3 for task 'truth' is not one of \['false', 'half', 'true'\] or a class index from 0 to 2$"
    with pytest.raises(ValueError, match=expected):
        MULTICLASS.index(3, "row 2")


def test_a_post_whose_label_is_no_label_is_named_once_by_the_post_error() -> None:
    post = Post.from_dict({"id": "163", "text": "t", "labels": {"hate": 0.98}}, 0)
    with pytest.raises(PostError) as raised:
        post_targets(post, [BINARY])
    assert "field 'labels.hate': label 0.98 for task 'hate' is not one of" in str(raised.value)


def test_a_json_list_string_given_a_multilabel_task_says_where_such_lists_are_read() -> None:
    topics = TaskSpec("topics", "multilabel", ("spam", "scam"))
    assert topics.target(["spam", "scam"], "x") == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"only in a CSV or TSV cell: elsewhere give a list$"):
        topics.target('["spam", "scam"]', "posts.jsonl:1")
    with pytest.raises(ValueError, match=r"from 0 to 1$"):
        topics.target("ham", "posts.jsonl:1")

"""Raw label values into class indices and targets, per task type."""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np
import pytest

from faim.data.collate import post_targets
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.sources import read_posts
from faim.data.targets import TaskSpec, refuse_flag_rows

BINARY = TaskSpec("hate", "binary", ("not-hate", "hate"))
MULTICLASS = TaskSpec("truth", "multiclass", ("false", "half", "true"))


def test_a_task_of_a_type_no_head_has_is_refused_naming_the_valid_types() -> None:
    with pytest.raises(
        ValueError,
        match=r"^task 'h': type 'binar' is not binary, multiclass or multilabel \(did you mean 'binary'\?\)$",
    ):
        TaskSpec("h", "binar", ("no", "yes"))
    with pytest.raises(ValueError, match=r"^task 'h': type None is not binary, multiclass or multilabel$"):
        TaskSpec("h", None, ("no", "yes"))


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
    expected = r"label -1 for task 'truth' is not one of \['false', 'half', 'true'\] or a class index from 0 to 2$"
    with pytest.raises(ValueError, match=expected):
        MULTICLASS.index(-1, "row 2")


@pytest.mark.parametrize("task", [MULTICLASS, BINARY], ids=["multiclass", "binary"])
@pytest.mark.parametrize("as_read", [int, float, str], ids=["int", "float", "text"])
def test_labels_numbered_from_one_are_refused_at_the_last_saying_indices_are_numbered_from_0(
    tmp_path, task: TaskSpec, as_read
) -> None:
    count = len(task.labels)
    rows = "".join(f"{n},t,{n}\n" for n in range(1, count + 1))
    (tmp_path / "posts.csv").write_text(f"id,text,label\n{rows}", encoding="utf-8")
    posts = list(read_posts(tmp_path / "posts.csv", {"labels": {task.name: "label"}}))
    assert [post_targets(post, [task])[task.name] for post in posts[:-1]] == list(range(1, count))
    last = posts[-1].labels[task.name]
    posts[-1].labels[task.name] = as_read(last)
    with pytest.raises(PostError) as raised:
        post_targets(posts[-1], [task])
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'posts.csv'}:{count + 1} (post id='{count}') field 'labels.{task.name}': ")
    assert message.endswith(
        f"; class indices are numbered from 0 ({task.labels[0]!r} is 0), so labels numbered from 1 are read one "
        "class off: number them from 0, or give the labels by name"
    )


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


@pytest.mark.parametrize("as_read", [int, float, str], ids=["int", "float", "text"])
def test_labels_named_by_numbers_are_read_by_name_and_a_number_naming_none_is_refused(as_read) -> None:
    stars = TaskSpec("stars", "multiclass", ("1", "2", "3"))  # a recipe's labels: [1, 2, 3]
    assert [stars.index(as_read(n), "x") for n in (1, 2, 3)] == [0, 1, 2]
    with pytest.raises(
        ValueError, match=r"^x: label '?0'? for task 'stars' is not one of \['1', '2', '3'\] \(its labels"
    ):
        stars.index(as_read(0), "x")
    signs = TaskSpec("spam", "binary", ("-1", "1"))
    assert [signs.target(as_read(n), "x") for n in (-1, 1)] == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"^x: label '?0'? for task 'spam' is not one of \['-1', '1'\] \(its labels"):
        signs.index(as_read(0), "x")
    assert TaskSpec("h", "binary", ("0", "1")).index(1, "x") == 1  # names that are their own indices read either way


def test_a_boolean_is_a_label_of_a_binary_task_alone() -> None:
    assert [BINARY.index(flag, "x") for flag in (False, True)] == [0, 1]
    refused = (
        r"^x: label (np\.)?True_? for task 'truth' is not one of \['false', 'half', 'true'\] .*; a boolean is a binary"
    )
    for flag in (True, np.True_):
        with pytest.raises(ValueError, match=refused):
            MULTICLASS.index(flag, "x")
    with pytest.raises(ValueError, match=r"^x: label False for task 'topics' is not one of"):
        TaskSpec("topics", "multilabel", ("spam", "scam")).target([False], "x")


def test_labels_of_a_multilabel_task_run_together_in_one_text_say_to_give_them_as_a_list(tmp_path) -> None:
    rows = 'id,text,tags\na,t,"spam, scam"\nb,t,"[""spam"", ""scam""]"\n'
    (tmp_path / "posts.csv").write_text(rows, encoding="utf-8")
    topics = TaskSpec("tags", "multilabel", ("spam", "scam"))
    run_together, listed = read_posts(tmp_path / "posts.csv", {"labels": {"tags": "tags"}})
    assert post_targets(listed, [topics]) == {"tags": [1.0, 1.0]}
    with pytest.raises(PostError) as raised:
        post_targets(run_together, [topics])
    assert str(raised.value).endswith(
        "label 'spam, scam' for task 'tags' is not one of ['spam', 'scam'] or a class index from 0 to 1; several "
        'labels are given as a list (in a CSV or TSV cell written as a JSON list: ["spam", "scam"])'
    )


def test_labels_written_as_decimals_are_numbered_and_signs_or_superscripts_are_no_index() -> None:
    decimals = TaskSpec("stars", "multiclass", ("1.0", "2.0", "3.0"))  # a recipe's labels: [1.0, 2.0, 3.0]
    assert decimals.numbered
    assert [decimals.index(value, "x") for value in ("2.0", 1, 1.0, np.float64(3.0), "3")] == [1, 0, 0, 2, 2]
    with pytest.raises(ValueError, match=r"^x: label 0 for task 'stars' is not one of \['1.0', '2.0', '3.0'\] \(its"):
        decimals.index(0, "x")  # read as the class 1.0 before
    assert not TaskSpec("t", "multiclass", ("0.0", "1", "b")).numbered
    for odd in ("--1", "²", "1²"):
        with pytest.raises(ValueError, match=rf"^x: label '{odd}' for task 'truth' is not one of"):
            MULTICLASS.index(odd, "x")
    with pytest.raises(ValueError, match=r"^x: label 'z' for task 's' is not one of \['²', 'b'\] or a class index"):
        TaskSpec("s", "multiclass", ("²", "b")).index("z", "x")


def test_a_label_is_its_head_label_whether_its_accents_are_composed_or_not() -> None:
    composed, decomposed = "haïssable", unicodedata.normalize("NFD", "haïssable")
    assert composed != decomposed
    for labels, given in [((composed,), decomposed), ((decomposed,), composed)]:
        task = TaskSpec("tâche", "multiclass", ("neutre", *labels))
        assert task.index(given) == 1
        assert TaskSpec("tâche", "multilabel", ("neutre", *labels)).target([given, "neutre"]) == [1.0, 1.0]


def test_a_row_of_flags_of_a_one_label_task_is_refused_as_such_not_as_labels_numbered_from_one() -> None:
    spam = TaskSpec("spam", "multilabel", ("spam",))
    said = (
        "x: labels [1] for task 'spam' give 1, which is not one of ['spam'] or a class index from 0 to 0; a multilabel "
        "task's labels are a list of its label names or class indices; a row of 0s and 1s, one for each of its labels, "
        'is no such list: give the labels it marks, ["spam"]'
    )
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):  # said to be numbered from 1 before
        spam.target([1], "x")
    assert spam.target([0]) == spam.target(["spam"]) == [1.0]  # its class index: as refuse_flag_rows reads it
    with pytest.raises(ValueError, match="labels numbered from 1 are read one class off"):  # one label, not a row
        TaskSpec("t", "multiclass", ("a",)).target(1)


def test_a_multilabel_list_giving_a_label_twice_is_refused_and_a_multi_hot_row_is_told_to_name_labels(tmp_path) -> None:
    rows = 'id,text,topics\na,t,"[1, 0, 1]"\nb,t,"[""spam"", ""spam""]"\nc,t,"[2, 0]"\n'
    (tmp_path / "posts.csv").write_text(rows, encoding="utf-8")
    topics = TaskSpec("topics", "multilabel", ("spam", "scam", "drugs"))
    multi_hot, named_twice, indices = read_posts(tmp_path / "posts.csv", {"labels": {"topics": "topics"}})
    assert post_targets(indices, [topics]) == {"topics": [1.0, 0.0, 1.0]}
    with pytest.raises(PostError) as raised:
        post_targets(multi_hot, [topics])  # read as the classes 1 and 0 ('scam', 'spam') before
    assert str(raised.value).endswith(
        "field 'labels.topics': labels [1, 0, 1] for task 'topics' give 'scam' (class 1) twice; a multilabel task's "
        "labels are a list of its label names or class indices, each once; a row of 0s and 1s, one for each of its "
        'labels, is no such list: give the labels it marks, ["spam", "drugs"]'
    )
    twice = r"labels \['spam', 'spam'\] for task 'topics' give 'spam' \(class 0\) twice; a"
    with pytest.raises(PostError, match=twice):
        post_targets(named_twice, [topics])
    with pytest.raises(
        ValueError, match=r"^x: labels \[0, 0\] for task 'topics' give 'spam' \(class 0\) twice; [^;]*$"
    ):
        topics.target([0, 0], "x")


def test_a_multilabel_task_of_two_labels_reads_both_indices_and_both_names_as_both_labels(tmp_path) -> None:
    # a Hugging Face Sequence(ClassLabel) column gives a post of both labels as [0, 1], which a user cannot rewrite
    rows = '{"id": "a", "text": "t", "flags": [0, 1]}\n{"id": "b", "text": "t", "flags": [1]}\n'
    (tmp_path / "posts.jsonl").write_text(rows, encoding="utf-8")
    flags = TaskSpec("flags", "multilabel", ("spam", "drugs"))
    both, second = read_posts(tmp_path / "posts.jsonl", {"labels": {"flags": "flags"}})
    assert post_targets(both, [flags]) == {"flags": [1.0, 1.0]}
    assert post_targets(second, [flags]) == {"flags": [0.0, 1.0]}
    assert flags.target([1, 0]) == [1.0, 1.0] and flags.target(["1", "0"]) == [1.0, 1.0]
    named = TaskSpec("flags", "multilabel", ("0", "1"))  # labels named 0 and 1, matched as names
    assert named.target(["0", "1"]) == [1.0, 1.0] and named.target(["1"]) == [0.0, 1.0]


def test_labels_of_two_flags_in_every_post_are_refused_as_multi_hot_and_lists_of_indices_are_read(tmp_path) -> None:
    flags = TaskSpec("flags", "multilabel", ("spam", "drugs"))
    rows = '{"id": "a", "text": "t", "flags": [1, 0]}\n{"id": "b", "text": "t", "flags": [0, 1]}\n'
    (tmp_path / "hot.jsonl").write_text(rows, encoding="utf-8")
    posts = read_posts(tmp_path / "hot.jsonl", {"labels": {"flags": "flags"}})
    with pytest.raises(ValueError) as raised:  # read as both labels in each post before
        refuse_flag_rows([flags], posts, "hot.jsonl")
    assert str(raised.value) == (
        f"{tmp_path / 'hot.jsonl'}:1 (post id='a') field 'labels.flags': labels [1, 0]: every labelled post of "
        "hot.jsonl gives task 'flags' a pair of 0s and 1s, which reads either as class indices ([0, 1] or [1, 0]: "
        'both labels) or as a row of flags, one for each of its 2 labels (multi-hot: ["spam"] for this one); give '
        'the labels each post carries by name (["spam", "drugs"], ["spam"], ["drugs"] or [])'
    )
    indices = [*posts, Post("c", labels={"flags": [1]}), Post("d", labels={"flags": None})]
    refuse_flag_rows([flags], indices, "mixed")  # a list of one index: the lists are indices
    refuse_flag_rows([TaskSpec("flags", "multilabel", ("1", "2"))], posts, "numbered")


class ReadUpTo(list):
    """Posts that may be read up to ``last`` alone: a check deciding by the first ones reads no further."""

    def __init__(self, posts: list[Post], last: int) -> None:
        super().__init__(posts)
        self.last = last

    def __iter__(self):
        for place, post in enumerate(super().__iter__()):
            assert place <= self.last, f"post {place} read, past post {self.last}"
            yield post


def test_flag_rows_are_looked_for_up_to_the_first_list_of_indices_and_only_of_a_task_of_two_labels() -> None:
    flags = TaskSpec("flags", "multilabel", ("spam", "drugs"))
    posts = [Post("a", labels={}), Post("b", labels={"flags": [0, 1]}), Post("c", labels={"flags": [1]})]
    refuse_flag_rows([flags], ReadUpTo([*posts, *[Post(str(i), labels={"flags": [0]}) for i in range(5)]], 2), "x")
    one = TaskSpec("one", "multilabel", ("spam",))  # [0] is its one label, no row of flags: [1] is no class of it
    refuse_flag_rows([one], [Post("a", labels={"one": [0]}), Post("b", labels={"one": [0]})], "x")
    assert one.target([0]) == [1.0]
    three = TaskSpec("three", "multilabel", ("spam", "scam", "drugs"))  # rows of three flags each give a class twice
    refuse_flag_rows([three], ReadUpTo([Post("a", labels={"three": [0, 1, 2]})], -1), "x")

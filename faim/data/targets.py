"""Turn raw label values from posts into training targets, per task."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from faim.data.post import ClassName, Post, list_as_text, post_name
from faim.decisions import check_task_type
from faim.notices import warn

TRUE_WORDS = {"1", "true", "yes"}
FALSE_WORDS = {"0", "false", "no"}
FLAGS = {"0", "1", "0.0", "1.0"}
"""A 0 or a 1 as a row of them marking a multilabel task's labels (multi-hot) writes it (``TaskSpec.flag_row``)."""


WHOLE_NUMBER = re.compile(r"-?[0-9]+")
"""A whole number in ASCII decimal digits, signed or not (``"2"``, ``"-1"``; not ``"--1"`` nor ``"²"``)."""

NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
"""A number in ASCII decimal digits, whole or not (``"2"``, ``"-1"``, ``"2.0"``), as a recipe's labels may spell one."""


def spells_int(text: str) -> bool:
    """Whether ``text`` spells a whole number in decimal digits, signed or not (``"2"``, ``"-1"``), which ``int``
    reads."""
    return WHOLE_NUMBER.fullmatch(text.strip()) is not None


@dataclass(frozen=True)
class TaskSpec:
    """A named task: its head type and label names (index order).

    Binary tasks have two label names, ``[negative, positive]``.
    """

    name: str
    type: str
    labels: tuple[str, ...]
    numbered: bool = field(init=False, repr=False, compare=False)
    """Whether a label spells a number other than its own class index (``labels: [1, 2, 3]``, star ratings; ``[-1,
    1]``; ``[1.0, 2.0]``): a number given such a task is then read as a label alone, never as a class index, which
    would read ``1`` as the class named ``2``. Set once, as every label value read looks it up."""
    composed: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The labels composed (NFC), as a value is compared with them: a label whose accents a file writes as marks after
    their letters (NFD, as macOS names files and some exports write text) is the head's label written composed, and
    the reverse."""
    class_labels: dict[tuple[str, tuple[str, ...]], list[int] | None] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    """The label each class of a dataset's ``ClassLabel`` column is read as, by column and class names, where its
    names are all labels of this task (``by_class_name``); ``None`` where some is not. Set once for each column, as
    each of its values read looks it up."""

    def __post_init__(self) -> None:
        """Refuse a type no head has (``faim.decisions.check_task_type``), as a recipe refuses a head's: a misspelt one
        would be read as a multilabel task's.

        Raises:
            ValueError: Naming the task, its type and the valid ones.
        """
        check_task_type(self.name, self.type)
        numbered = any(
            NUMBER.fullmatch(label.strip()) and float(label) != index for index, label in enumerate(self.labels)
        )
        object.__setattr__(self, "numbered", numbered)
        object.__setattr__(self, "composed", tuple(unicodedata.normalize("NFC", label) for label in self.labels))

    def index(self, value: Any, where: str | None = None) -> int:
        """Map one label value (label name, composed or not, index, or for a binary task bool-like) to a class index;
        raise naming ``where`` (``None``: the caller names the place, as ``PostError`` does). A value spelling a label
        is that label, a class of a dataset's ``ClassLabel`` column (``faim.data.post.ClassName``) the label of its
        name where every class of the column is named by one (``by_class_name``); a number is a class index only where
        no label is a number other than its own index (``numbered``)."""
        if isinstance(value, bool) and self.type == "binary":
            return int(value)
        if isinstance(value, ClassName) and (read := self.by_class_name(value)) is not None:
            return read[value]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = str(value).strip()
        if (composed := unicodedata.normalize("NFC", text)) in self.composed:
            return self.composed.index(composed)
        numbered = self.numbered
        if numbered and NUMBER.fullmatch(text) and (same := self.numbered_as(float(text))) is not None:
            return same
        if not numbered and spells_int(text) and 0 <= int(text) < len(self.labels):
            return int(text)
        if self.type == "binary" and text.lower() in TRUE_WORDS | FALSE_WORDS and not (numbered and spells_int(text)):
            return int(text.lower() in TRUE_WORDS)
        if numbered:
            forms = f"one of {list(self.labels)} (its labels are numbers, so a number is read as a label, not an index)"
        else:
            forms = f"one of {list(self.labels)} or a class index from 0 to {len(self.labels) - 1}"
        if self.type == "binary":
            forms += " or true/false, yes/no (a share of annotators, say, is decided into one of them first)"
        if isinstance(value, (bool, np.bool_)):
            hint = "; a boolean is a binary task's label alone: give the class by name"
        else:
            hint = "" if numbered else self.counted_from_one(text)
        problem = f"label {value!r} for task {self.name!r} is not {forms}{hint}"
        if self.type == "multilabel":
            problem += list_as_text(value, "labels") + self.run_together(text)
        raise ValueError(f"{where}: {problem}" if where else problem)

    def by_class_name(self, value: ClassName) -> list[int] | None:
        """The label each class of the column ``value`` is of is read as, by its name, where every class the column
        holds is named by a label of this task; ``None`` where some is not, the column read by index as any other:
        a class named otherwise (``normal`` of ``normal, hate`` for labels ``hate, offensive``) would fall on the label
        another class is read as. A column whose names are read in another order than their indices is warned of,
        once: a model an earlier faim trained on it read it by index."""
        key = (value.column, value.names)
        if key in self.class_labels:
            return self.class_labels[key]
        names = [unicodedata.normalize("NFC", name) for name in value.names]
        read = [self.composed.index(name) for name in names] if all(name in self.composed for name in names) else None
        self.class_labels[key] = read
        if read is not None and read != list(range(len(read))):
            pairs = enumerate(zip(value.names, read, strict=True))
            classes = ", ".join(f"class {index} {name!r} as label {label}" for index, (name, label) in pairs)
            warn(
                f"task {self.name!r}: column {value.column!r} holds classes of a dataset (ClassLabel), read by their "
                f"names in another order than their indices ({classes}); a model an earlier faim trained on it read "
                "them by index, each as the label of its index, so its figures on them change"
            )
        return read

    def numbered_as(self, number: float) -> int | None:
        """The class whose label spells ``number`` as a number (``2`` or ``2.0`` of ``labels: [1.0, 2.0]``), if any."""
        return next(
            (i for i, label in enumerate(self.labels) if NUMBER.fullmatch(label) and float(label) == number), None
        )

    def run_together(self, text: str) -> str:
        """What to say of a multilabel task's label ``text`` that is several of its labels separated by commas,
        semicolons or bars (``spam, scam``): how several are given; empty for any other."""
        parts = [part.strip() for part in re.split(r"[,;|]", text)]
        if len(parts) < 2 or not all(part in self.labels for part in parts):
            return ""
        listed = json.dumps(parts)
        return f"; several labels are given as a list (in a CSV or TSV cell written as a JSON list: {listed})"

    def counted_from_one(self, text: str) -> str:
        """What to say of a label ``text`` that is the number of labels, one past the last class index: the mark of
        labels numbered from 1, whose smaller numbers are read as indices of the class after theirs; empty for any
        other."""
        if text != str(len(self.labels)):
            return ""
        return (
            f"; class indices are numbered from 0 ({self.labels[0]!r} is 0), so labels numbered from 1 are read one "
            "class off: number them from 0, or give the labels by name"
        )

    def target(self, value: Any, where: str | None = None) -> Any:
        """The target for one post: float 0/1 (binary), class index (multiclass) or multi-hot list (of a list of
        labels, or of one: a string is one label, whatever it spells, as ``faim.data.columns.ColumnMap.to_post``
        reads it outside a CSV or TSV cell); a list giving one label twice, by name or index, is refused
        (``given_twice``)."""
        if self.type == "binary":
            return float(self.index(value, where))
        if self.type == "multiclass":
            return self.index(value, where)
        values = value if isinstance(value, (list, tuple)) else [value]
        hot = [0.0] * len(self.labels)
        for item in values:
            index = self.listed_index(item, values, where)
            if hot[index]:
                problem = self.given_twice(values, index)
                raise ValueError(f"{where}: {problem}" if where else problem)
            hot[index] = 1.0
        return hot

    def listed_index(self, item: Any, values: list | tuple, where: str | None = None) -> int:
        """The class index of ``item``, one of a multilabel task's labels ``values`` (``index``); where ``values`` is a
        row of 0s and 1s (``flag_row``) of which ``item`` is no class (``[1]`` of a task of one label), refused as
        such a row (``flags_note``), not as a label numbered from 1.

        Raises:
            ValueError: Naming ``where``, as ``index`` does.
        """
        if not self.flag_row(values):
            return self.index(item, where)
        try:
            return self.index(item)
        except ValueError:
            classes = f"one of {list(self.labels)} or a class index from 0 to {len(self.labels) - 1}"
            problem = (
                f"labels {list(values)!r} for task {self.name!r} give {item!r}, which is not {classes}; a multilabel "
                f"task's labels are a list of its label names or class indices{self.flags_note(values)}"
            )
            raise ValueError(f"{where}: {problem}" if where else problem) from None

    def given_twice(self, values: list | tuple, index: int) -> str:
        """Why a multilabel task refuses ``values`` that give the class ``index`` twice: a list of its labels holds
        each once, and one that does not is most likely a row of 0s and 1s, one for each label (multi-hot), which
        would read as the class indices 0 and 1 (``[1, 0, 1]`` as the first two labels, not the first and last)."""
        problem = (
            f"labels {list(values)!r} for task {self.name!r} give {self.labels[index]!r} (class {index}) twice; a "
            "multilabel task's labels are a list of its label names or class indices, each once"
        )
        return problem + self.flags_note(values) if self.flag_row(values) else problem

    def flags_note(self, values: list | tuple) -> str:
        """What an error refusing a multilabel task's labels ``values``, a row of 0s and 1s (``flag_row``), adds: that
        such a row is no list of labels, and the labels it marks."""
        multi_hot = "a row of 0s and 1s, one for each of its labels, is no such list"
        return f"; {multi_hot}: give the labels it marks, {self.marked(values)}"

    def flag_row(self, value: Any) -> bool:
        """Whether ``value`` is a multilabel task's labels given as a row of 0s and 1s, one for each of its labels
        (multi-hot: ``[1, 0, 1]``), where a list of its labels is expected: not one of a dataset's classes
        (``ClassName``), which are class indices."""
        if not isinstance(value, (list, tuple)) or len(value) != len(self.labels):
            return False
        return all(not isinstance(item, (bool, ClassName)) and str(item).strip() in FLAGS for item in value)

    def marked(self, flags: list | tuple) -> str:
        """The labels a row of 0s and 1s (``flag_row``) marks, as a JSON list."""
        return json.dumps([label for label, flag in zip(self.labels, flags, strict=True) if float(str(flag))])

    def missing(self) -> Any:
        """The target of an unlabelled post (ignored by the loss)."""
        if self.type == "binary":
            return math.nan
        if self.type == "multiclass":
            return -100
        return [math.nan] * len(self.labels)

    def labelled(self, target: Any) -> Any:
        """Boolean mask of the rows of a stacked target (tensor or array) that carry a label for this task.

        A multilabel row counts when any of its labels is present; metrics skip the missing ones per label.
        """
        if self.type == "multiclass":
            return target != -100
        present = target == target  # NaN marks "unlabelled" in binary and multilabel targets
        return present.any(-1) if self.type == "multilabel" else present

    def sole_label(self, y: np.ndarray) -> str | None:
        """The label every labelled post is of, where the class indices ``y`` of a binary task's labelled posts hold one
        class alone (its AUROC and average precision cannot be measured); ``None`` where they hold both."""
        classes = np.unique(y)
        return self.labels[int(classes[0])] if len(classes) == 1 else None

    def absent_labels(self, y: np.ndarray) -> list[str]:
        """The labels of a multiclass task no labelled post is of, by the class indices ``y`` of its labelled posts
        (its macro AUROC cannot be measured, and its macro-F1 counts each one's F1 as 0)."""
        return [label for index, label in enumerate(self.labels) if not (y == index).any()]

    def stack(self, targets: list[Any]) -> torch.Tensor:
        """Batch targets into the tensor the head's loss expects."""
        dtype = torch.long if self.type == "multiclass" else torch.float32
        return torch.tensor(targets, dtype=dtype)


def refuse_flag_rows(tasks: Iterable[TaskSpec], posts: Sequence[Post], name: str) -> None:
    """Refuse the posts of ``name`` every labelled one of which gives a multilabel task of two labels a row of 0s and
    1s, one for each label (``TaskSpec.flag_row``: multi-hot), decided over them all, not post by post: ``[1, 0]``
    reads as the class indices 1 and 0, both labels, where a file of rows of flags means the first alone; a list of
    indices (a Hugging Face ``Sequence(ClassLabel)`` column's) is read as such where some post's is not such a row
    (``[1]``, ``[]``), the posts read up to the first such post alone. A row of flags of another task is none of its
    lists of labels: of three labels or more, it gives a class twice (``given_twice``), of one, ``[1]`` is no class
    and ``[0]`` is its label. A task whose labels are numbers (``numbered``) reads them as labels alone.

    Raises:
        ValueError: Naming the first such post by its origin (file and row) and id, the field, its labels, and the
            labels it marks read either way.
    """
    for task in tasks:
        if task.type != "multilabel" or task.numbered or len(task.labels) != 2:
            continue
        if (first := first_flag_row(task, posts)) is None:
            continue
        post, value = first
        named = ", ".join(json.dumps(labels) for labels in (list(task.labels), *[[label] for label in task.labels]))
        raise ValueError(
            f"{post_name(post.origin, post.id)} field 'labels.{task.name}': labels {list(value)!r}: every labelled "
            f"post of {name} gives task {task.name!r} a pair of 0s and 1s, which reads either as class indices ([0, 1] "
            "or [1, 0]: both labels) or as a row of flags, one for each of its 2 labels (multi-hot: "
            f"{task.marked(value)} for this one); give the labels each post carries by name ({named} or [])"
        )


def first_flag_row(task: TaskSpec, posts: Iterable[Post]) -> tuple[Post, Any] | None:
    """The first labelled post of ``posts`` and its labels for ``task``, where each labelled one gives a row of flags
    (``TaskSpec.flag_row``); ``None`` where none is labelled or some is not such a row, read up to the first such."""
    first = None
    for post in posts:
        value = post.labels.get(task.name)
        if value is None:
            continue
        if not task.flag_row(value):
            return None
        first = first or (post, value)
    return first

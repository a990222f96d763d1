"""From calibrated probabilities to what users read: decisions per task and the rows ``score`` returns. Needs numpy
only, so ``Detector`` and the exported runtime (``faim.runtime``) give the same rows and decisions from one place.

A task here is anything with ``name``, ``type`` (``"binary"``, ``"multiclass"``, ``"multilabel"``) and ``labels``:
``faim.data.targets.TaskSpec``, or the runtime's own record of an exported task.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from contextlib import suppress
from typing import Any, Protocol, TypeVar

import numpy as np

from faim.data.post import Post, post_name
from faim.registry import TASK_TYPES, suggest
from faim.wording import plural


class Task(Protocol):
    name: str
    type: str
    labels: Sequence[str]


Named = TypeVar("Named", bound=Task)


def check_task_type(name: str, task_type: Any) -> None:
    """Refuse ``task_type``, the type of the task ``name``, where it is none of ``TASK_TYPES`` (a misspelt one,
    ``"binar"``), as a recipe refuses a head's.

    Raises:
        ValueError: Naming the task, its type, the closest valid one and the valid ones.
    """
    if task_type not in TASK_TYPES:
        raise ValueError(
            f"task {name!r}: type {task_type!r} is not {', '.join(TASK_TYPES[:-1])} or {TASK_TYPES[-1]}"
            f"{suggest(str(task_type), list(TASK_TYPES))}"
        )


def task_spec(tasks: Sequence[Named], name: str, model: str) -> Named:
    """The task of ``tasks`` called ``name``.

    Raises:
        KeyError: Naming ``model`` and its tasks.
    """
    for task in tasks:
        if task.name == name:
            return task
    raise KeyError(f"{model}: no task {name!r}; its tasks: {', '.join(task.name for task in tasks)}")


def decide(task_type: str, probabilities: np.ndarray, threshold: float | None) -> np.ndarray:
    """Decisions of one task: 0/1 at ``threshold`` for a binary task, the arg-max class for a multiclass one, each
    label at 0.5 for a multilabel one (``threshold`` is read for binary tasks only)."""
    probabilities = np.asarray(probabilities)
    if task_type == "binary":
        return (probabilities >= threshold).astype(np.int64)
    if task_type == "multiclass":
        return probabilities.argmax(-1)
    return (probabilities >= 0.5).astype(np.int64)


def decision_probabilities(task: Task, probabilities: Any) -> np.ndarray:
    """``probabilities`` of ``task`` as ``decide`` reads them: an array, or what ``score`` rows give the task, a
    number per post for a binary task and otherwise a mapping of label to probability per post (one post's alone, or
    a list, array or other iterable of them), read in the task's label order; a multiclass or multilabel task's as
    ``[C]`` or ``[N, C]``, one column per label, or as a pandas frame whose columns are its labels, in any order.

    Raises:
        ValueError: Naming the task, for the rows ``score`` gives (saying to take the task's values from them), values
            that are not numbers (text among them, even text spelling a number: the first and how many), a mapping
            lacking one of its labels, a frame whose columns are not its labels, a binary task's wider than one
            column, a multiclass or multilabel task's of another shape, or a NaN or a value outside 0 to 1 (naming
            its post and label).
    """
    try:
        values = listed(by_label_columns(task, probabilities))
    except (TypeError, RuntimeError) as error:  # a tensor numpy cannot take (bfloat16, on a GPU), say
        raise not_numbers(task, error) from None
    if is_score_row(task, values) or isinstance(values, Sequence) and any(is_score_row(task, row) for row in values):
        raise ValueError(
            f"task {task.name!r} ({task.type}): given the rows score gives (each post's id and scores), not the "
            f"task's probabilities; give those: [row[{task.name!r}] for row in rows]"
        )
    if task.type != "binary":
        if isinstance(values, Mapping):
            values = label_order(task, values)
        elif isinstance(values, Sequence) and values and all(isinstance(value, Mapping) for value in values):
            values = [label_order(task, value) for value in values]
    given_texts = texts(values)
    if given_texts:
        count = f" ({plural(len(given_texts), 'value')} of text in all)" if len(given_texts) > 1 else ""
        raise ValueError(
            f"task {task.name!r} ({task.type}): expected probabilities as numbers, got text: {given_texts[0]!r}{count};"
            " give numbers (float(value) reads one)"
        )
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise not_numbers(task, error) from None
    if task.type == "binary" and (array.ndim > 2 or array.ndim == 2 and array.shape[1] != 1):  # [N, 2], say
        raise ValueError(
            f"task {task.name!r} (binary): expected the probability of {task.labels[-1]!r} per post, of shape [N] (or "
            f"a column, [N, 1]), got {list(array.shape)}"
        )
    if task.type != "binary" and array.size == 0 and array.ndim == 1:  # the rows of no post, as score([]) gives
        array = array.reshape(0, len(task.labels))
    if task.type != "binary" and (array.ndim not in (1, 2) or array.shape[-1] != len(task.labels)):
        raise ValueError(
            f"task {task.name!r} ({task.type}) has {plural(len(task.labels), 'label')} ({', '.join(task.labels)}): "
            f"expected probabilities of shape [{len(task.labels)}] or [N, {len(task.labels)}], got {list(array.shape)}"
        )
    refuse_undecidable(task, array)
    return array


def is_score_row(task: Task, value: Any) -> bool:
    """Whether ``value`` is a row ``score`` gives (``{"id": ..., task: ...}``), not a mapping of ``task``'s labels."""
    return isinstance(value, Mapping) and {"id", task.name} <= value.keys() and "id" not in task.labels


def by_label_columns(task: Task, probabilities: Any) -> Any:
    """``probabilities`` with a frame's columns (a pandas ``DataFrame``'s, named by label) in the task's label order,
    for a multiclass or multilabel task; anything else as given.

    Raises:
        ValueError: Naming the task, for a frame whose columns are not the task's labels.
    """
    columns = getattr(probabilities, "columns", None)
    if columns is None or task.type == "binary":
        return probabilities
    if sorted(map(str, columns)) != sorted(task.labels):
        raise ValueError(
            f"task {task.name!r} ({task.type}): a frame's columns ({', '.join(map(str, columns))}) are not the task's "
            f"labels ({', '.join(task.labels)}); name them so, or give an array in the labels' order"
        )
    return probabilities[[column for label in task.labels for column in columns if str(column) == label]]


def texts(values: Any) -> list[str | bytes]:
    """The strings and bytes among ``values`` (as ``decision_probabilities`` reads them: a number, or nested lists,
    tuples or arrays of them), which ``np.asarray`` would read as the numbers they spell. Lists of numbers alone are
    told at once, as numpy reads them, not value by value."""
    if isinstance(values, (str, bytes)):
        return [str(values) if isinstance(values, str) else bytes(values)]  # np.str_ and np.bytes_ as plain ones
    if isinstance(values, (list, tuple)):
        with suppress(ValueError, TypeError):  # ragged: looked into value by value
            if np.asarray(values).dtype.kind not in "USO":
                return []
        return [text for value in values for text in texts(value)]
    if isinstance(values, np.ndarray) and values.dtype.kind in "USO":
        return [text for value in values.ravel().tolist() for text in texts(value)]  # a 0-d array too
    return []


def not_numbers(task: Task, error: Exception) -> ValueError:
    """The error refusing probabilities of ``task`` that numpy does not read as numbers (``error`` says why)."""
    return ValueError(f"task {task.name!r} ({task.type}): expected probabilities as numbers: {error}")


def listed(probabilities: Any) -> Any:
    """``probabilities`` as ``np.asarray`` reads them: what is an array or gives one (a numpy array, a pandas frame or
    series, a tensor) as that array, an array of objects (``score`` rows' mappings) as a list of them; an iterable that
    is not a sequence (a generator of ``score`` rows' values, say) as a list; anything else (a number, a mapping, a
    list, a set, whose order is no post's) as given."""
    if hasattr(probabilities, "__array__"):
        array = np.asarray(probabilities)
        return array.tolist() if array.dtype == object else array
    if isinstance(probabilities, Iterable) and not isinstance(probabilities, (str, bytes, Mapping, Sequence, Set)):
        return list(probabilities)
    return probabilities


ROUNDING = 1e-6
"""How far outside 0 to 1 a probability may fall and still be decided: a float32 sigmoid (an exported model's, run by
onnxruntime) gives 1.0000001 for some logits near 18."""


def refuse_undecidable(task: Task, probabilities: np.ndarray) -> None:
    """Refuse ``probabilities`` of ``task`` (as ``decision_probabilities`` shapes them) holding a NaN, which no
    threshold or arg-max decides, or a value outside 0 to 1 by more than ``ROUNDING``, which is no probability (a
    logit, say: ``predict``'s).

    Raises:
        ValueError: Naming the task, the first such value's post (its row, where there are rows) and label (a
            multiclass or multilabel task's), the value, and how many such values there are.
    """
    refused = np.argwhere(~((probabilities >= -ROUNDING) & (probabilities <= 1 + ROUNDING)))
    if not len(refused):
        return
    first = [int(i) for i in refused[0]]
    where = []
    if probabilities.ndim >= (1 if task.type == "binary" else 2):  # a row per post (a binary column's too)
        where.append(f"post {first[0]}")
    if task.type != "binary":
        where.append(f"label {task.labels[first[-1]]!r}")
    of = f" of {', '.join(where)}" if where else ""
    value = probabilities[tuple(first)]
    what = "NaN" if np.isnan(value) else f"{float(value)!r}, outside 0 to 1 (a logit?)"
    nans = all(np.isnan(probabilities[tuple(index)]) for index in refused)
    count = f" ({len(refused)} {'NaNs' if nans else 'NaN or outside 0 to 1'} in all)" if len(refused) > 1 else ""
    raise ValueError(
        f"task {task.name!r} ({task.type}): the probability{of} is {what}{count}, which cannot be decided; give a "
        "number from 0 to 1 for each"
    )


def label_order(task: Task, probabilities: Mapping[str, Any]) -> list[Any]:
    """One post's probabilities of a multiclass or multilabel ``task``, a mapping of label to probability (a ``score``
    row's value), in the task's label order.

    Raises:
        ValueError: Naming the task, the labels the mapping lacks and those it holds the task has not (the
            probabilities of another model, or of a label misspelt, which deciding among the others would pass over).
    """
    missing = [label for label in task.labels if label not in probabilities]
    extra = [label for label in probabilities if label not in task.labels]
    problems = []
    if missing:
        problems.append(f"lack {plural(len(missing), 'label')}: {', '.join(map(repr, missing))}")
    if extra:
        problems.append(f"hold {plural(len(extra), 'label')} the task has not: {', '.join(map(repr, extra))}")
    if problems:
        raise ValueError(
            f"task {task.name!r} ({task.type}): the probabilities {' and '.join(problems)}; "
            f"give one per label: {', '.join(task.labels)}"
        )
    return [probabilities[label] for label in task.labels]


def nonfinite_tasks(tasks: Sequence[Task], logits: Mapping[str, np.ndarray]) -> dict[int, list[str]]:
    """Each post whose raw logits (``logits``: task → ``[N]`` or ``[N, C]``, a row per post) of some of ``tasks`` are
    not all finite (NaN or infinite, as where a model overflows on a value beyond those it was trained on), by its
    row, with those tasks' names in ``tasks``' order; the other posts are left out."""
    found: dict[int, list[str]] = {}
    for task in tasks:
        values = np.asarray(logits[task.name])
        for row in np.flatnonzero(~np.isfinite(values).all(axis=tuple(range(1, values.ndim)))):
            found.setdefault(int(row), []).append(task.name)
    return dict(sorted(found.items()))


def nonfinite_scores(names: Sequence[str]) -> str:
    """What is said of a post whose logits of the tasks ``names`` are not finite (``nonfinite_tasks``)."""
    tasks = f"{'tasks' if len(names) > 1 else 'task'} {', '.join(map(repr, names))}"
    return f"the model's scores (logits) of {tasks} are not finite (NaN or infinite), so the post has no probabilities"


def refuse_nonfinite(posts: Sequence[Post], tasks: Sequence[Task], logits: Mapping[str, np.ndarray]) -> None:
    """Refuse the logits of ``posts`` (in the order of the logits' rows, each named as an error names it: by its origin
    and id, ``post_name``) where those of some post are not finite (``nonfinite_tasks``): no probability is made of
    them.

    Raises:
        ValueError: Naming the first such post and its tasks, and how many such posts there are.
    """
    found = nonfinite_tasks(tasks, logits)
    if not found:
        return
    row, names = next(iter(found.items()))
    post = posts[row]
    count = f" ({plural(len(found), 'post')} in all)" if len(found) > 1 else ""
    them = "them" if len(found) > 1 else "it"
    raise ValueError(
        f"{post_name(post.origin, post.id)}: {nonfinite_scores(names)}{count}; leave {them} out to score the others"
    )


def score_rows(
    ids: Sequence[str], tasks: Sequence[Task], probabilities: Mapping[str, np.ndarray]
) -> list[dict[str, Any]]:
    """One row per post: ``{"id", task: P(positive)}`` for a binary task, ``{task: {label: p}}`` otherwise."""
    rows = []
    for i, post_id in enumerate(ids):
        row: dict[str, Any] = {"id": post_id}
        for task in tasks:
            value = probabilities[task.name][i]
            row[task.name] = float(value) if task.type == "binary" else dict(zip(task.labels, map(float, value)))
        rows.append(row)
    return rows

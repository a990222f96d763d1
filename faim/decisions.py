"""From calibrated probabilities to what users read: decisions per task and the rows ``score`` returns. Needs numpy
only, so ``Detector`` and the exported runtime (``faim.runtime``) give the same rows and decisions from one place.

A task here is anything with ``name``, ``type`` (``"binary"``, ``"multiclass"``, ``"multilabel"``) and ``labels``:
``faim.data.targets.TaskSpec``, or the runtime's own record of an exported task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np


class Task(Protocol):
    name: str
    type: str
    labels: Sequence[str]


Named = TypeVar("Named", bound=Task)


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

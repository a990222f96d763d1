"""Whether an int8 export is good enough: an fp32 export and its int8 copy (``faim.export.quantize``) scored on the
same labelled posts, each task's macro-F1 under both and the posts per second of each."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.eval.metrics import binary_metrics, multiclass_metrics, multilabel_metrics
from faim.runtime.bundle import probabilities_name
from faim.runtime.model import ExportedModel

TIMED_POSTS = 64
"""The fewest posts whose speed says something of the graphs: halves of two batches of 16 or more for each export.
On fewer, each export's first runs (onnxruntime warming up) and the clock's resolution make the figure."""


@dataclass
class QuantizationCheck:
    """fp32 against int8 on the same posts.

    Attributes:
        macro_f1: Task → ``(fp32, int8)`` macro-F1 on the labelled posts.
        posts_per_second: ``(fp32, int8)``, scoring the posts in the same process, interleaved halves.
        posts: Posts scored.
        unreadable: Posts left out because they cannot be read (a missing picture), counted.
        unmeasured: The tasks no post scored is labelled for, in the model's order: int8 is not checked on them.
    """

    macro_f1: dict[str, tuple[float, float]]
    posts_per_second: tuple[float, float]
    posts: int
    unreadable: int
    unmeasured: list[str]

    @property
    def drop(self) -> float:
        """The largest fall of macro-F1 from fp32 to int8 over the tasks (negative: int8 did better)."""
        return max(fp32 - int8 for fp32, int8 in self.macro_f1.values())

    @property
    def timed(self) -> bool:
        """Whether enough posts were scored for ``posts_per_second`` to measure the graphs (``TIMED_POSTS``)."""
        return self.posts >= TIMED_POSTS

    @property
    def speedup(self) -> float:
        return self.posts_per_second[1] / self.posts_per_second[0]


def compare_exports(
    fp32: ExportedModel, int8: ExportedModel, posts: list[Post], batch_size: int = 16
) -> QuantizationCheck:
    """Score ``posts`` with both exports (halves interleaved, so a drift in the machine's speed weighs on both) and
    measure each task's macro-F1 on the posts labelled for it.

    Raises:
        ValueError: When no post can be read (``check_readable``), or none is labelled for any task.
    """
    readable, errors = fp32.readable(posts)
    check_readable(readable, errors)
    half = len(readable) // 2
    seconds, outputs = [0.0, 0.0], [[], []]
    for part in (readable[:half], readable[half:]):
        for index, model in enumerate((fp32, int8)):
            start = time.perf_counter()
            outputs[index].append(model.predict(part, batch_size)[1])
            seconds[index] += time.perf_counter() - start
    merged = [{name: np.concatenate([o[name] for o in parts if o]) for name in parts[-1]} for parts in outputs]
    scores, unmeasured = {}, []
    for entry in fp32.tasks:
        task = TaskSpec(entry.name, entry.type, entry.labels)
        labelled = [i for i, post in enumerate(readable) if post.labels.get(task.name) is not None]
        if not labelled:
            unmeasured.append(task.name)
            continue
        where = [f"{readable[i].origin or readable[i].id}" for i in labelled]
        targets = np.array([task.target(readable[i].labels[task.name], at) for i, at in zip(labelled, where)])
        scores[task.name] = tuple(
            macro_f1(task, entry.threshold, targets, out[probabilities_name(task.name)][labelled]) for out in merged
        )
    if not scores:
        raise ValueError("no post is labelled for any task of the model; the int8 check needs labelled posts")
    rates = tuple(len(readable) / spent for spent in seconds)
    return QuantizationCheck(scores, rates, len(readable), len(errors), unmeasured)


def check_readable(readable: list[Post], errors: list[PostError], where: str | None = None) -> None:
    """Refuse posts of which none can be read (``errors`` theirs, ``readable`` none): the int8 check would measure
    nothing.

    Args:
        where: The posts, as the error names them first (a file, a recipe's split).

    Raises:
        ValueError: Counting the posts, with the first one's error (which names its file and row).
    """
    if errors and not readable:
        named = f"{where}: " if where else ""
        raise ValueError(
            f"{named}all {len(errors)} posts could not be read, so the int8 check has none to measure; the first: "
            f"{errors[0]}"
        )


def macro_f1(task: TaskSpec, threshold: float | None, targets: np.ndarray, probabilities: np.ndarray) -> float:
    """A task's macro-F1 (a binary task at its threshold, a multiclass one by arg-max, a multilabel one at 0.5)."""
    if task.type == "binary":
        return binary_metrics(targets, probabilities, threshold)["macro_f1"]
    if task.type == "multiclass":
        return multiclass_metrics(targets, probabilities, task.labels)["macro_f1"]
    return multilabel_metrics(targets, probabilities, task.labels, [0.5] * len(task.labels))["macro_f1"]

"""ETHOS binary hate speech comments as a source: ``Ethos_Dataset_Binary.csv``.

The file is UTF-8, ``;``-separated with a ``comment;isHate`` header; comments holding ``;`` or quotes are
quoted CSV-style. ``isHate`` is the share of annotators who judged the comment hateful: 0.5 or more is hate.
The dataset has no official split: a deterministic stratified one is drawn (see ``faim.data.splits``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

from faim.data.native import read_found
from faim.data.post import Post
from faim.data.splits import StratifiedFileSource
from faim.registry import register_source

LABELS = ["not-hate", "hate"]
THRESHOLD = 0.5


@register_source("ethos")
class EthosSource(StratifiedFileSource):
    """The ETHOS folder holding ``Ethos_Dataset_Binary.csv``.

    Ids are 0-based row indices; ``meta["hate_score"]`` keeps the annotators' score.

    Args:
        root: The folder holding ``Ethos_Dataset_Binary.csv``.
        validation_fraction: Share of each class held out for validation.
        seed: Seed of the stratified split.
        task: Name the labels (1 hate, 0 not; ``LABELS``) are stored under in ``Post.labels``.
    """

    FILE = "Ethos_Dataset_Binary.csv"
    LAYOUT = "root must be the ETHOS folder holding Ethos_Dataset_Binary.csv (comment;isHate, separated by ;)"

    def __init__(self, root: str, validation_fraction: float = 0.1, seed: int = 0, task: str = "hate") -> None:
        super().__init__(root, validation_fraction, seed)
        self.task = task

    def stratum(self, post: Post) -> int:
        """The binary label."""
        return post.labels[self.task]

    def posts_in(self, path: Path) -> Iterator[Post]:
        """Every post of a file in the ``Ethos_Dataset_Binary.csv`` format, found there, in file order.

        Raises:
            ValueError: When ``comment`` or ``isHate`` is missing, or a score is not a number in [0, 1] (naming
                file, line and value).
        """
        for index, (line, row) in enumerate(read_found(path, delimiter=";", required=("comment", "isHate"))):
            origin = f"{path}:{line}"
            score = _score(row["isHate"], origin)
            yield Post(
                id=str(index),
                text=row["comment"] or None,
                labels={self.task: int(score >= THRESHOLD)},
                meta={"hate_score": score},
                origin=origin,
            )


def _score(cell: str, origin: str) -> float:
    try:
        score = float(cell)
    except ValueError:
        score = math.nan
    if not 0 <= score <= 1:
        raise ValueError(f"{origin}: unknown label {cell!r}: isHate must be a score between 0 and 1")
    return score

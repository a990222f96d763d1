"""Davidson et al. (2017) hate and offensive language tweets as a source: ``labeled_data.csv``.

The dataset has no official split: a deterministic stratified one is drawn from the annotators' 3-way class
(see ``faim.data.splits``), the same whichever label view is chosen, so binary and 3-way models are validated
on the same tweets. Tweets are read as the file holds them, with the HTML escapes Twitter's API gave them (6,633 of
24,783 hold one: ``&amp;``, ``&#128514;`` for 😂, ``&#8220;`` for “), which posts to score hold as characters.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from faim.data.native import check_choice, label_index, read_found
from faim.data.post import Post
from faim.data.splits import StratifiedFileSource
from faim.registry import register_source

CLASSES = ("0", "1", "2")
LABELS = {
    "three_way": ["hate", "offensive", "neither"],
    "binary": ["not-hate", "hate"],
    "abusive": ["neither", "hate-or-offensive"],
    "hate_vs_neither": ["not-hate", "hate"],
}
POSITIVE = {"binary": {0}, "hate_vs_neither": {0}, "abusive": {0, 1}}  # the 3-way classes a two-label view counts as 1
OFFENSIVE = 1


@register_source("davidson")
class DavidsonSource(StratifiedFileSource):
    """The Davidson et al. folder holding ``labeled_data.csv`` (columns ``tweet`` and ``class``).

    Ids are the file's unnamed first column (the original row numbers, which have gaps); ``meta["class"]``
    keeps the 3-way class whichever label view is chosen.

    Args:
        root: The folder holding ``labeled_data.csv``.
        validation_fraction: Share of each class held out for validation.
        seed: Seed of the stratified split.
        task: Name the integer labels are stored under in ``Post.labels``.
        labels: ``"three_way"``: the file's ``class``, 0 hate, 1 offensive, 2 neither (``LABELS["three_way"]``);
            ``"binary"``: 1 hate, 0 offensive or neither (``LABELS["binary"]``); ``"abusive"``: 1 hate or
            offensive, 0 neither (``LABELS["abusive"]``), for training beside datasets whose "hate" takes in
            abuse Davidson's annotators called offensive; ``"hate_vs_neither"``: 1 hate, 0 neither, and the
            offensive tweets left out of every split (the splits are the other views' otherwise), for training
            beside such datasets without teaching that abuse they call hate is not.
    """

    FILE = "labeled_data.csv"
    LAYOUT = "root must be the Davidson et al. (2017) folder holding labeled_data.csv (tweet and class columns)"

    def __init__(
        self, root: str, validation_fraction: float = 0.1, seed: int = 0, task: str = "hate", labels: str = "three_way"
    ) -> None:
        super().__init__(root, validation_fraction, seed)
        check_choice("davidson", "labels", labels, list(LABELS))
        self.task = task
        self.labels = labels

    def posts(self, split: str) -> list[Post]:
        """The posts of ``split``, in file order; the offensive tweets left out under ``hate_vs_neither``."""
        posts = super().posts(split)
        if self.labels == "hate_vs_neither":
            return [post for post in posts if post.meta["class"] != OFFENSIVE]
        return posts

    def describe(self, split: str) -> str:
        left_out = "; offensive tweets left out" if self.labels == "hate_vs_neither" else ""
        return super().describe(split) + left_out

    def stratum(self, post: Post) -> int:
        """The 3-way class."""
        return post.meta["class"]

    def posts_in(self, path: Path) -> Iterator[Post]:
        """Every post of a file in the ``labeled_data.csv`` format, found there, in file order.

        Raises:
            ValueError: When ``tweet`` or ``class`` is missing, or a class is not 0, 1 or 2 (naming file and line).
        """
        for index, (line, row) in enumerate(read_found(path, required=("tweet", "class"))):
            origin = f"{path}:{line}"
            klass = label_index(row["class"], CLASSES, origin)
            yield Post(
                id=row.get("") or str(index),
                text=row["tweet"] or None,
                labels={self.task: klass if self.labels == "three_way" else int(klass in POSITIVE[self.labels])},
                meta={"class": klass},
                origin=origin,
            )

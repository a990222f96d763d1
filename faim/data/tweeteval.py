"""TweetEval's native layout as a source: ``{split}_text.txt`` and ``{split}_labels.txt``, one per line.

The files are read exactly as TweetEval's own code does, ``read().split("\\n")[:-1]``, so the empty
tweets some splits hold (7 in hate/train) stay aligned with their labels; they become posts without
text (masked downstream). Tweets are read as the files hold them, HTML escapes included (``&amp;``, ``&gt;``: 308
of hate's 10,000 training and validation tweets).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from faim.data.inputs import data_path
from faim.data.native import FilePerSplit
from faim.data.post import Post
from faim.data.tabular import sha256_files
from faim.registry import register_source, source_path
from faim.wording import plural

TEXT_FILES = {"train": "train_text.txt", "validation": "val_text.txt", "test": "test_text.txt"}
LAYOUT = (
    "root must be a TweetEval task folder (tweeteval/datasets/hate) holding train_text.txt, train_labels.txt, "
    "val_text.txt, val_labels.txt and, where there is one, test_text.txt and test_labels.txt"
)
"""What a TweetEval task folder holds, as an error naming a file not there says it."""


@register_source("tweeteval")
class TweetEvalSource(FilePerSplit):
    """One TweetEval task folder (e.g. ``tweeteval/datasets/hate``).

    Args:
        root: The task folder holding ``train_text.txt``, ``train_labels.txt``, ``val_*``, ``test_*``.
        task: Name the integer labels are stored under in ``Post.labels``.
    """

    SPLIT_FILES = TEXT_FILES
    LAYOUT = LAYOUT

    def __init__(self, root: str, task: str = "hate") -> None:
        self.root = data_path(root)
        self.task = task
        self.recipe_path = source_path()

    def posts_in(self, path: Path) -> Iterator[Post]:
        """Posts of a ``*_text.txt`` file found there, labelled from the sibling ``*_labels.txt`` when it exists; ids
        are 0-based line indices.

        Raises:
            ValueError: When the two files differ in length or a label is not an integer.
        """
        texts = _lines(path)
        labels_path = _labels_path(path)
        labels = _lines(labels_path) if labels_path.is_file() else [""] * len(texts)
        if len(labels) != len(texts):
            raise ValueError(f"tweeteval: {path} has {plural(len(texts), 'line')} but {labels_path} has {len(labels)}")
        for index, (text, label) in enumerate(zip(texts, labels, strict=True)):
            if label.strip() and not label.strip().lstrip("-").isdigit():
                raise ValueError(f"tweeteval: {labels_path}:{index + 1}: label {label!r} is not an integer")
            yield Post(
                id=str(index),
                text=text or None,
                labels={self.task: int(label)} if label.strip() else {},
                origin=f"{path}:{index + 1}",
            )

    def describe(self, split: str) -> str:
        """The text file of ``split``."""
        return str(self.location(split))

    def fingerprint(self, split: str) -> str:
        """sha256 of the split's text and label files."""
        text = self.location(split)
        return sha256_files([p for p in (text, _labels_path(text)) if p.is_file()])


def _labels_path(text: Path) -> Path:
    return text.with_name(text.name.removesuffix("_text.txt") + "_labels.txt")


def _lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return handle.read().split("\n")[:-1]

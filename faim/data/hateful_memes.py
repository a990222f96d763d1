"""Facebook's Hateful Memes layout as a source: ``{split}.jsonl`` files and an ``img/`` folder.

Each line is ``{"id", "img": "img/01235.png", "text", "label"}``; the test files may lack ``label``, and a line
without an id (absent, null or empty) takes its place in the file as its id, as a file read by the ``jsonl``
source does (``faim.data.post.post_id``). Phase 2
of the challenge ships ``train``, ``dev_seen``/``dev_unseen`` and ``test_seen``/``test_unseen``; phase 1
shipped ``train``, ``dev`` and ``test``. The test file is the one matching the chosen validation file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from faim.data.columns import ColumnMap
from faim.data.inputs import check_exists, data_path
from faim.data.native import check_choice, unknown_split
from faim.data.post import Post, post_id
from faim.data.tabular import jsonl_rows, sha256_files
from faim.registry import register_source, source_path
from faim.wording import plural

VALIDATION = ("dev_seen", "dev_unseen", "dev")
LABELS = ["not-hateful", "hateful"]
KEYS = ("img", "text")
CHOSEN_BY = {"train": "root", "validation": "validation", "test": "validation"}
"""Split → the recipe key that picks its file (the folder holds ``train.jsonl``; the validation stem picks the rest)."""
LAYOUT = (
    "root must be the Hateful Memes folder holding train.jsonl, the dev and test files (dev_seen.jsonl, "
    "dev_unseen.jsonl, test_seen.jsonl, test_unseen.jsonl; phase 1: dev.jsonl, test.jsonl) and img/, and validation "
    "the stem of a dev file it holds"
)
"""What a Hateful Memes folder holds, as an error naming a file not there says it."""


@register_source("hateful_memes")
class HatefulMemesSource:
    """A Hateful Memes folder holding ``train.jsonl``, the dev and test files, and ``img/``.

    Images stay relative (``img/01235.png``), resolved against the folder of the ``.jsonl`` file.

    Args:
        root: The dataset folder.
        task: Name the labels (1 hateful, 0 not; ``LABELS``) are stored under in ``Post.labels``.
        validation: The validation file's stem: ``dev_seen``, ``dev_unseen`` or ``dev``; the test split is
            ``test_seen``, ``test_unseen`` or ``test`` accordingly.
    """

    def __init__(self, root: str, task: str = "hateful", validation: str = "dev_seen") -> None:
        check_choice("hateful_memes", "validation", validation, VALIDATION)
        self.root = data_path(root)
        self.task = task
        self.validation = validation
        self.files = {"train": "train", "validation": validation, "test": validation.replace("dev", "test")}
        self.recipe_path = source_path()

    def splits(self) -> list[str]:
        """Train and validation, and test when its file exists."""
        return [split for split in self.files if split != "test" or self.location(split).is_file()]

    def location(self, split: str) -> Path:
        """The ``.jsonl`` file of ``split``.

        Raises:
            KeyError: On a split other than train, validation and test, naming the source by its recipe path, the
                folder and the splits it holds (``unknown_split``).
        """
        if split not in self.files:
            raise unknown_split(self.recipe_path, split, self.splits(), self.root)
        return self.root / f"{self.files[split]}.jsonl"

    def posts(self, split: str) -> list[Post]:
        """All posts of ``split``, in file order.

        Raises:
            FileNotFoundError: When the split's file is not there (``check_split``).
        """
        self.check_split(split)
        return list(self.iter_posts(self.location(split)))

    def check_split(self, split: str) -> None:
        """Find the ``.jsonl`` file of ``split``, reading none of it: a validation file the folder lacks (``dev`` in
        phase 2's, which holds ``dev_seen``) is named before another split is read.

        Raises:
            KeyError: On a split other than train, validation and test (``location``).
            FileNotFoundError: Naming, by its recipe path, the key that picks the file (``CHOSEN_BY``:
                ``data.validation: hm/dev.jsonl does not exist``, ``data.root`` for ``train.jsonl``), the file and what
                the folder holds (``LAYOUT``).
        """
        check_exists(self.location(split), f"{self.recipe_path}.{CHOSEN_BY[split]}", LAYOUT)

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Posts of a Hateful Memes ``.jsonl`` file; a missing or null ``label`` leaves the post unlabelled, and a
        missing ``id`` (``faim.data.post.post_id``) gives the post its place among the file's posts, from 0.

        Raises:
            FileNotFoundError: When the file does not exist.
            ValueError: On invalid JSON, a line without ``img`` or ``text``, or a label other than 0 and 1 (naming
                file and line).
        """
        path = check_exists(Path(path))
        _, rows = jsonl_rows(path, ColumnMap())
        for index, (line, row) in enumerate(rows):
            origin = f"{path}:{line}"
            missing = [key for key in KEYS if key not in row]
            if missing:
                raise ValueError(f"{origin}: missing {plural(len(missing), 'key')}: {', '.join(missing)}")
            label = row.get("label")
            if label not in (None, 0, 1):
                raise ValueError(f"{origin}: unknown label {label!r}; valid: 0, 1")
            yield Post(
                id=post_id(row.get("id"), index, f"{origin} field 'id'"),
                text=row["text"] or None,
                images=[row["img"]] if row["img"] else [],
                labels={} if label is None else {self.task: int(label)},
                origin=origin,
                image_root=path.absolute().parent,
            )

    def describe(self, split: str) -> str:
        """The ``.jsonl`` file of ``split``."""
        return str(self.location(split))

    def fingerprint(self, split: str) -> str:
        """sha256 of the split's ``.jsonl`` file and the task name (image bytes are not read)."""
        return sha256_files([self.location(split)], extra=json.dumps({"task": self.task}))

"""Deterministic train/validation splits for datasets published as one file without a split (Davidson, ETHOS)."""

from __future__ import annotations

import json
import math
import random
from abc import abstractmethod
from collections import defaultdict
from collections.abc import Hashable, Sequence

from faim.data.inputs import data_path
from faim.data.native import FilePerSplit
from faim.data.post import Post
from faim.data.tabular import sha256_files
from faim.registry import source_path


def stratified_split(labels: Sequence[Hashable], validation_fraction: float, seed: int) -> list[str]:
    """``"train"`` or ``"validation"`` for each item, holding out ``round(n * fraction)`` items of every class.

    Each class's indices are shuffled by a ``random.Random`` seeded with ``seed`` and the class (string seeds
    hash with sha512, not Python's randomised ``hash``), so the split depends only on the labels, their order,
    the fraction and the seed: the same in every process, and a class's held-out items do not move when
    another class changes.
    """
    by_class: dict[Hashable, list[int]] = defaultdict(list)
    for index, label in enumerate(labels):
        by_class[label].append(index)
    assignment = ["train"] * len(labels)
    for label, indices in by_class.items():
        random.Random(f"{seed}:{label}").shuffle(indices)
        for index in indices[: math.floor(len(indices) * validation_fraction + 0.5)]:
            assignment[index] = "validation"
    return assignment


class StratifiedFileSource(FilePerSplit):
    """Base of registered sources whose data is one file in ``root``, split by ``stratified_split``: a dataset folder
    (``faim.data.native.FilePerSplit``) whose train and validation splits are read from that file, found, and a split
    it does not give refused, by its recipe path (``data.sources[1]: no split 'test' under ...``) as the other
    folders' are.

    Subclasses set ``FILE`` (a base of other sources may leave it to its own subclasses) and ``LAYOUT``, call this
    constructor from their own (whose arguments are the recipe keys) and implement ``posts_in`` and ``stratum``.
    The fingerprint covers every constructor argument but ``root``.

    Args:
        root: The folder holding ``FILE``.
        validation_fraction: Share of each stratum held out for validation, strictly between 0 and 1.
        seed: Seed of the split.

    Raises:
        ValueError: When ``validation_fraction`` is out of range.
    """

    FILE: str
    LAYOUT: str
    """What ``root`` holds, as an error naming a file not there says it (``faim.data.inputs.check_exists``)."""
    registry_name: str  # set by ``register_source``

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Read the train and validation splits of a subclass from its one ``FILE``; a subclass without one (a base
        of other sources) reads none until a subclass of it sets one."""
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "FILE"):
            cls.SPLIT_FILES = dict.fromkeys(("train", "validation"), cls.FILE)

    def __init__(self, root: str, validation_fraction: float, seed: int) -> None:
        if not 0 < validation_fraction < 1:
            raise ValueError(
                f"{self.registry_name}: validation_fraction must be in (0, 1), got {validation_fraction!r}"
            )
        self.root = data_path(root)
        self.validation_fraction = validation_fraction
        self.seed = seed
        self.recipe_path = source_path()

    @abstractmethod
    def stratum(self, post: Post) -> Hashable:
        """The class a post is stratified by."""

    def posts(self, split: str) -> list[Post]:
        """The posts of ``split``, in file order.

        Raises:
            KeyError: On a split other than train and validation, naming the source's recipe path (``check_split``).
            FileNotFoundError: When the data file is not there (``check_split``).
        """
        posts = super().posts(split)
        assignment = stratified_split([self.stratum(post) for post in posts], self.validation_fraction, self.seed)
        return [post for post, name in zip(posts, assignment, strict=True) if name == split]

    def describe(self, split: str) -> str:
        """The data file and how ``split`` is drawn from it."""
        held_out = f"{self.validation_fraction:g} held out, seed {self.seed}"
        return f"{self.location(split)} ({split} of a stratified split: {held_out})"

    def fingerprint(self, split: str) -> str:
        """sha256 of the file, the split name and the arguments choosing the split's posts and labels."""
        options = {key: value for key, value in vars(self).items() if key not in ("root", "recipe_path")}
        return sha256_files([self.location(split)], extra=json.dumps({"split": split, **options}, sort_keys=True))

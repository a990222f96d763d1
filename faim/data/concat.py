"""Several sources as one: extra training data (Davidson beside TweetEval) without touching validation.

A recipe names the member sources as it would name one::

    data:
      type: concat
      sources:
        - {type: tweeteval, root: ../shared/data/tweeteval_hate, task: hate}
        - {type: davidson, root: ../shared/data/davidson2017, task: hate, labels: binary}

Training posts come from every member; validation and test posts from the first member only (``evaluate_on:
first``), so figures stay comparable with the first member's own recipes, or from every member (``all``).
Post ids are prefixed with the member's position and type (``1-davidson/412``) so they stay unique, and
``meta["source"]`` names the member (``1-davidson``): ``eval.slice: source`` reports each member apart, and
``train.balance: sources`` draws each member's training posts equally often.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import faim.data.sources  # noqa: F401  (registers every source a member may name)
from faim.data.native import unknown_split
from faim.data.post import SOURCE, Post, normalise_posts
from faim.data.sources import check_split
from faim.registry import BuildError, build_source_spec, member_path, register_source, source_path

EVALUATE_ON = ("first", "all")


@register_source("concat")
class ConcatSource:
    """The training posts of several sources together.

    Args:
        sources: Member ``data:`` mappings, each with its ``type:`` and that source's arguments; at least two.
        evaluate_on: Which members give the splits other than train: ``"first"`` or ``"all"``.

    Raises:
        ValueError: On fewer than two members or an unknown ``evaluate_on``; a ``faim.registry.BuildError`` naming the
            member by its recipe path on a member without ``type``, a nested ``concat``, or one its class refuses.
    """

    def __init__(self, sources: list[dict[str, Any]], evaluate_on: str = "first") -> None:
        if not isinstance(sources, list) or len(sources) < 2:
            raise ValueError("concat: sources must be a list of at least two data: mappings")
        if evaluate_on not in EVALUATE_ON:
            raise ValueError(f"concat: evaluate_on must be one of {', '.join(EVALUATE_ON)}, got {evaluate_on!r}")
        self.recipe_path = source_path()
        self.names: list[str] = []
        self.members: list[Any] = []
        for index, spec in enumerate(sources):
            where = member_path(f"sources[{index}]")
            if not isinstance(spec, dict) or "type" not in spec:
                raise BuildError(f"{where}: a concat member must be a data: mapping with a type:")
            if spec["type"] == "concat":
                raise BuildError(f"{where}: a concat member cannot be a concat itself; list its sources here instead")
            self.members.append(build_source_spec(spec, where))
            self.names.append(f"{index}-{spec['type']}")
        self.evaluate_on = evaluate_on

    def contributors(self, split: str) -> list[int]:
        """Indices of the members that give ``split``'s posts."""
        candidates = range(len(self.members)) if split == "train" or self.evaluate_on == "all" else [0]
        return [index for index in candidates if split in self.members[index].splits()]

    def splits(self) -> list[str]:
        """Train when any member has it; the other splits when a contributing member has them."""
        names = dict.fromkeys(split for member in self.members for split in member.splits())
        return [split for split in names if self.contributors(split)]

    def posts(self, split: str) -> list[Post]:
        """The contributing members' posts of ``split``, member after member, ids prefixed, ``meta["source"]`` set.

        Raises:
            KeyError: When no contributing member has ``split`` (``check_split``).
            FileNotFoundError: Before any is read, naming the split and the file of a member that is not there
                (``check_split``).
            ValueError: Naming a member's post whose id was taken away (``member_posts``).
        """
        self.check_split(split)
        return [
            replace(post, id=f"{self.names[index]}/{post.id}", meta=post.meta | {SOURCE: self.names[index]})
            for index in self.contributors(split)
            for post in self.member_posts(index, split)
        ]

    def check_split(self, split: str) -> None:
        """Find the files of ``split`` of every member giving its posts (``faim.data.sources.check_split``), reading
        none: a member's file not there is named before another member's posts are read.

        Raises:
            KeyError: When no contributing member has ``split``, naming the concat by its recipe path and the splits
                there are (``faim.data.native.unknown_split``).
            FileNotFoundError: Naming the split and the file of a member that is not there.
        """
        indices = self.contributors(split)
        if not indices:
            raise unknown_split(self.recipe_path, split, self.splits())
        for index in indices:
            check_split(self.members[index], split)

    def member_posts(self, index: int, split: str) -> list[Post]:
        """The posts of ``split`` of the member at ``index``, each id text and each field as a ``Post`` reads it
        (``normalise_posts``).

        Raises:
            ValueError: Naming the first whose id was taken away after it was built, which its prefixed id would hold
                as ``None``, or a field set to a value of the wrong type (``normalise_posts``).
        """
        posts = self.members[index].posts(split)
        normalise_posts(posts)
        return posts

    def split_inputs(self, split: str) -> list[Path]:
        """The files the members giving ``split``'s posts read it from, member after member, as a member reading
        files by a mapping lists them (``faim.data.tabular.FileSource.split_inputs``): none of another member's,
        which reads files of its own."""
        readers = [self.members[index] for index in self.contributors(split)]
        return [file for member in readers if hasattr(member, "split_inputs") for file in member.split_inputs(split)]

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Posts of a file in the first member's format (the format new data to evaluate comes in)."""
        return self.members[0].iter_posts(path)

    def describe(self, split: str) -> str:
        """The contributing members' descriptions, joined with ``+``."""
        return " + ".join(self.members[index].describe(split) for index in self.contributors(split))

    def fingerprint(self, split: str) -> str:
        """sha256 over the contributing members' names and fingerprints."""
        digest = hashlib.sha256()
        for index in self.contributors(split):
            digest.update(f"{self.names[index]}:{self.members[index].fingerprint(split)}\n".encode())
        return digest.hexdigest()

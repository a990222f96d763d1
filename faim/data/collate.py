"""Collate posts into a ``PostBatch``: pick each kind's elements, decode images, preprocess, attach targets.

The collator is a picklable callable, so it runs inside DataLoader worker processes; the model never
sees raw files. A post that cannot be prepared (an unreadable image, a bad label) raises ``PostError``
naming its origin, id and field, or, with ``on_error="record"``, is left out of the batch and returned
beside it, so a scoring run records the error for that row and goes on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from faim.data.batch import Elements, PostBatch, element_layout
from faim.data.elements import PostError, check_posts, checked_elements, read_each
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.registry import ELEMENT_MODALITIES


def post_targets(post: Post, tasks: list[TaskSpec]) -> dict[str, Any]:
    """Each task's target for one post (the task's "missing" value when unlabelled); raises ``PostError``."""
    targets = {}
    for task in tasks:
        value = post.labels.get(task.name)
        try:
            targets[task.name] = task.missing() if value is None else task.target(value)
        except ValueError as error:
            raise PostError(post, f"labels.{task.name}", str(error)) from error
    return targets


def stack_targets(tasks: list[TaskSpec], per_post: list[dict[str, Any]]) -> dict[str, Any]:
    """Batch per-post targets into one tensor per task."""
    return {task.name: task.stack([targets[task.name] for targets in per_post]) for task in tasks}


@dataclass
class CollateResult:
    """A batch plus the posts left out of it (only with ``on_error="record"``)."""

    batch: PostBatch
    errors: list[PostError]


class PostCollator:
    """Build batches for a model.

    Args:
        preprocessors: Element kind → preprocessor of the encoder that embeds that kind.
        tasks: Tasks whose targets to attach (empty when scoring).
        max_elements: Cap on images and comments taken per post.
        on_error: ``"raise"`` a ``PostError`` for a bad post, or ``"record"`` it and leave it out.
        draft_images: Decode JPEGs at a reduced scale no smaller than the encoder's resize target
            (faster for large photos; pixels differ slightly from a full decode).
    """

    def __init__(
        self,
        preprocessors: dict[str, Callable[[list[Any]], Any]],
        tasks: list[TaskSpec] | tuple[TaskSpec, ...] = (),
        max_elements: int = 8,
        on_error: str = "raise",
        draft_images: bool = False,
    ) -> None:
        unknown = set(preprocessors) - set(ELEMENT_MODALITIES)
        if unknown:
            raise ValueError(f"unknown element kinds {sorted(unknown)}; valid: {sorted(ELEMENT_MODALITIES)}")
        if on_error not in ("raise", "record"):
            raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
        self.preprocessors = preprocessors
        self.tasks = list(tasks)
        self.max_elements = max_elements
        self.on_error = on_error
        self.draft_sizes = {
            kind: getattr(preprocess, "draft_size", None) if draft_images else None
            for kind, preprocess in preprocessors.items()
        }

    def only(self, kinds: list[str]) -> PostCollator:
        """A collator like this one that reads and preprocesses only the elements of ``kinds``."""
        collator = copy.copy(self)
        collator.preprocessors = {kind: self.preprocessors[kind] for kind in kinds}
        collator.draft_sizes = {kind: self.draft_sizes[kind] for kind in kinds}
        return collator

    def using(self, kind: str, preprocessor: Callable[[list[Any]], Any]) -> PostCollator:
        """A collator like this one that preprocesses the elements of ``kind`` with ``preprocessor``."""
        collator = copy.copy(self)
        collator.preprocessors = self.preprocessors | {kind: preprocessor}
        collator.draft_sizes = self.draft_sizes | {
            kind: getattr(preprocessor, "draft_size", None) if self.draft_sizes[kind] else None
        }
        return collator

    def prepare(self, post: Post) -> tuple[dict[str, list[Any]], dict[str, Any]]:
        """Raw elements per kind and targets per task for one post; raises ``PostError``.

        A preprocessor with a ``check(element)`` method has each element checked here, so a bad one is
        reported with the post it came from.
        """
        elements = checked_elements(post, self.preprocessors, self.max_elements, self.draft_sizes)
        return elements, post_targets(post, self.tasks)

    def check(self, posts: list[Post]) -> None:
        """Refuse, before a model reads any of ``posts``, the first ``prepare`` refuses but for a picture that does
        not decode (``check_posts``: its targets read too).

        Raises:
            PostError: Naming the post and the field.
        """
        check_posts(posts, self.preprocessors, self.max_elements, partial(post_targets, tasks=self.tasks))

    def collate(self, posts: list[Post]) -> CollateResult:
        """Prepare every post, then preprocess each kind's elements as one flat batch."""
        if self.on_error == "raise":
            read, errors = [(post, self.prepare(post)) for post in posts], []
        else:
            read, errors = read_each(posts, self.prepare)
        kept, prepared = [post for post, _ in read], [item for _, item in read]
        elements = {}
        for kind, preprocess in self.preprocessors.items():
            per_post = [item[0][kind] for item in prepared]
            post_index, slot_index, num_slots = element_layout([len(x) for x in per_post])
            flat = [element for items in per_post for element in items]
            elements[kind] = Elements(preprocess(flat), post_index, slot_index, num_slots)
        targets = stack_targets(self.tasks, [item[1] for item in prepared])
        batch = PostBatch.of(kept, elements, targets)
        return CollateResult(batch, errors)

    def __call__(self, posts: list[Post]) -> PostBatch:
        """DataLoader entry point (``on_error="raise"``): the batch alone."""
        return self.collate(posts).batch

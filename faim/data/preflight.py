"""Checks of posts made before a model reads any: pictures that are not there (a refusal naming the posts, where
reading them would stop at the first only once the model had read every post before it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from faim.data.elements import PostError, element_refs
from faim.data.images import ImageError, check_picture
from faim.data.post import Post

SHOWN = 5
"""How many posts naming a picture that is not there ``refuse_missing_pictures`` names."""


def refuse_missing_pictures(posts: Sequence[Post], kinds: Sequence[str], limit: int, name: str) -> None:
    """Refuse ``posts`` (of ``name``) some of which name a picture that is not there (missing, a folder or empty, as
    ``faim.data.images.check_picture`` finds without reading it) among the first ``limit`` of each (those a model
    reads of a post), where the model reads pictures (``image`` among ``kinds``). A picture that is there but does not
    decode is found as it is read.

    Raises:
        ValueError: Naming ``name``, how many posts, and the first ``SHOWN`` by origin and id with their picture.
    """
    if "image" not in kinds:
        return
    bad = [error for post in posts if (error := missing_picture(post, limit)) is not None]
    if not bad:
        return
    shown = "; ".join(map(str, bad[:SHOWN])) + (f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
    raise ValueError(
        f"{name}: {len(bad)} of {len(posts)} posts name a picture that is not there (missing, a folder or empty): "
        f"{shown}; mend the paths or the folder they resolve against, or leave those posts out"
    )


def missing_picture(post: Post, limit: int) -> PostError | None:
    """The error of the first of a post's first ``limit`` pictures that is not there (``check_picture``), if any."""
    for ref in element_refs(post, "image", limit):
        try:
            check_picture(ref, post.image_root)
        except ImageError as error:
            return PostError(post, "images", str(error), f"image_{error.kind}")
    return None


def check_source_split(source: Any, split: str, posts: Sequence[Post], kinds: Sequence[str], limit: int) -> None:
    """``refuse_missing_pictures`` of a source's ``split``, named as the source describes it."""
    refuse_missing_pictures(posts, kinds, limit, source.describe(split))


def check_source_splits(source: Any, splits: dict[str, Sequence[Post]], kinds: Sequence[str], limit: int) -> None:
    """``check_source_split`` of each of a recipe's ``splits`` (name → posts), before a model trains on them."""
    for split, posts in splits.items():
        check_source_split(source, split, posts, kinds, limit)

"""DataLoaders for training and prediction: from raw posts, or from cached frozen-encoder embeddings (plus
the raw elements of any kinds whose encoder trains)."""

from __future__ import annotations

import io
import pickle
import types
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Sampler, WeightedRandomSampler

from faim.data.batch import PostBatch
from faim.data.collate import PostCollator, post_targets, stack_targets
from faim.data.post import SOURCE, Post, post_name
from faim.data.targets import TaskSpec
from faim.model import WholePostModel
from faim.preprocess.corrections import questions_or_corrects
from faim.registry import defined_interactively, qualified_name
from faim.training.augment import AugmentingCollator, PostAugmenter, refuse_hidden_augmentation
from faim.training.cache import EmbeddingCache, cached_embeddings


class CachedCollator:
    """Collate post indices into a batch of cached embeddings plus targets.

    Args:
        cache: Embeddings of the frozen kinds.
        posts: The posts the indices point into.
        tasks: Tasks whose targets to attach.
        live: Collator of the kinds not in the cache (their encoders train), or ``None``.
    """

    def __init__(
        self,
        cache: EmbeddingCache,
        posts: list[Post],
        tasks: list[TaskSpec],
        live: Callable[[list[Post]], PostBatch] | None = None,
    ) -> None:
        self.cache = cache
        self.posts = posts
        self.tasks = tasks
        self.live = live
        self.targets = [post_targets(post, tasks) for post in posts]
        self.corrections = [questions_or_corrects(post) for post in posts]  # once, not every epoch

    def __call__(self, indices: list[int]) -> PostBatch:
        posts = [self.posts[i] for i in indices]
        targets = stack_targets(self.tasks, [self.targets[i] for i in indices])
        elements = self.cache.elements(indices) | (self.live(posts).elements if self.live else {})
        return PostBatch.of(posts, elements, targets, [self.corrections[i] for i in indices])


def sources_balanced(posts: list[Post], seed: int) -> WeightedRandomSampler:
    """Draws of ``posts`` (with replacement, ``len(posts)`` an epoch) under which the posts of each ``meta["source"]``
    are drawn equally often in all, whatever their numbers; seeded, so a run draws the same posts each time.

    Raises:
        ValueError: When a post names no source (only a ``concat`` source sets it), naming the post (``post_name``).
    """
    missing = next((post for post in posts if SOURCE not in post.meta), None)
    if missing is not None:
        where = post_name(missing.origin, missing.id)
        raise ValueError(f"{where}: no meta.source to balance on (a concat source sets it)")
    counts = Counter(post.meta[SOURCE] for post in posts)
    weights = [1.0 / counts[post.meta[SOURCE]] for post in posts]
    return WeightedRandomSampler(weights, len(posts), replacement=True, generator=torch.Generator().manual_seed(seed))


def loader_posts(loader: DataLoader) -> list[Post] | None:
    """The posts a loader reads, in order: those its cached embeddings' collator indexes (``CachedCollator``), or its
    dataset where that is a sequence of posts (as ``make_loader`` makes them); ``None`` for any other loader (one over
    indices with its own collate function, say), whose posts its collate function alone knows."""
    collate = loader.collate_fn
    if isinstance(collate, CachedCollator):
        return collate.posts
    dataset = loader.dataset
    is_posts = isinstance(dataset, Sequence) and all(isinstance(post, Post) for post in dataset)
    return list(dataset) if is_posts else None


def posts_encoded(loader: DataLoader) -> int | None:
    """How many of ``loader``'s posts a frozen encoder encoded when ``make_loader`` read their cached embeddings
    (0: every embedding was found stored); ``None`` where no kind is cached, so every encoder reads the posts."""
    collate = loader.collate_fn
    return collate.cache.encoded if isinstance(collate, CachedCollator) else None


class SessionReferences(pickle.Pickler):
    """A pickler into memory that notes, in ``found``, the classes and functions defined in an interactive session
    (``faim.registry.defined_interactively``) that what it pickles refers to by name: an instance's class, a
    function, or one held by an object or a ``functools.partial``, which a process started by ``spawn`` cannot
    find."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO())
        self.found: list[str] = []

    def reducer_override(self, obj: Any) -> Any:
        """Note ``obj`` where it is a class or function defined interactively; pickle it as pickle does."""
        if isinstance(obj, (type, types.FunctionType)) and defined_interactively(obj):
            self.found.append(qualified_name(obj))
        return NotImplemented


def refuse_unpicklable_preprocessors(model: WholePostModel, collator: PostCollator, num_workers: int) -> None:
    """Refuse, before any worker process starts, a preprocessor of ``collator`` that pickle cannot copy into the
    ``num_workers`` processes a loader started by ``spawn`` gives it to (a closure or a lambda an encoder's
    ``preprocessor()`` returns), or one of a class they cannot import (``defined_interactively``), where the loader
    would fail as it starts with an error naming neither.

    Raises:
        ValueError: Naming the element kind, its encoder's class, pickle's error and the remedies.
    """
    for kind, preprocessor in collator.preprocessors.items():
        pickler = SessionReferences()
        try:
            pickler.dump(preprocessor)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise ValueError(
                f"element kind {kind!r}: the preprocessor its encoder ({type(model.encoder_for(kind)).__name__}) "
                f"gives cannot be pickled ({error}), and train.num_workers: {num_workers} needs it to be, to give it "
                "to its DataLoader worker processes; return an instance of a class defined at a module's top level "
                "from preprocessor(), or set train.num_workers: 0"
            ) from error
        if pickler.found:
            raise ValueError(
                f"element kind {kind!r}: the preprocessor its encoder ({type(model.encoder_for(kind)).__name__}) "
                f"gives is or holds a class or function defined in this interactive session ({pickler.found[0]}), "
                f"which the DataLoader worker processes of train.num_workers: {num_workers} cannot import; define it "
                "in a module they import, or set train.num_workers: 0"
            )


def make_loader(
    model: WholePostModel,
    collator: PostCollator,
    posts: list[Post],
    batch_size: int,
    shuffle: bool,
    num_workers: int = 0,
    cache_dir: str | Path | None = None,
    label: str = "posts",
    augment: PostAugmenter | None = None,
    sampler: Sampler | None = None,
) -> DataLoader:
    """A loader over ``posts``; with ``cache_dir``, the kinds of frozen encoders come from cached embeddings.

    Kinds whose encoder trains are collated from the posts in every batch (in the main process when some
    kinds are cached); ``augment`` perturbs the posts of each batch before they are; ``sampler`` (over post
    indices) draws the posts instead of ``shuffle``. Targets are checked for every post up front, so a bad label
    fails before training starts.

    Raises:
        HiddenAugmentationError: When ``augment`` perturbs an input the model does not read, or the input of a kind
            whose embeddings are cached; before anything is embedded.
    """
    cached = model.frozen_kinds if cache_dir is not None else []
    if augment is not None:
        refuse_hidden_augmentation(augment, model.kinds_with(None), cached)
    if cached:
        cache = cached_embeddings(model, collator, posts, cache_dir, batch_size, num_workers, label, cached)
        live = [kind for kind in model.kinds if kind not in cached]
        live_collator = collator.only(live) if live else None
        if live_collator is not None and augment is not None:
            live_collator = AugmentingCollator(live_collator, augment)
        return DataLoader(
            list(range(len(posts))),
            batch_size=batch_size,
            shuffle=shuffle and sampler is None,
            sampler=sampler,
            collate_fn=CachedCollator(cache, posts, collator.tasks, live_collator),
        )
    for post in posts:
        post_targets(post, collator.tasks)
    if num_workers > 0:
        refuse_unpicklable_preprocessors(model, collator, num_workers)
    return DataLoader(
        posts,
        batch_size=batch_size,
        shuffle=shuffle and sampler is None,
        sampler=sampler,
        collate_fn=collator if augment is None else AugmentingCollator(collator, augment),
        num_workers=num_workers,
        persistent_workers=num_workers > 0,
        multiprocessing_context="spawn" if num_workers > 0 else None,
    )

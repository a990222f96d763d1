"""DataLoaders for training and prediction: from raw posts, or from cached frozen-encoder embeddings (plus
the raw elements of any kinds whose encoder trains)."""

from __future__ import annotations

import io
import pickle
import random
import types
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, Sampler, SequentialSampler, WeightedRandomSampler

from faim.data.batch import PostBatch
from faim.data.collate import PostCollator, post_targets, stack_targets
from faim.data.post import SOURCE, Post, post_name
from faim.data.targets import TaskSpec
from faim.model import WholePostModel
from faim.preprocess.corrections import questions_or_corrects
from faim.registry import defined_interactively, qualified_name
from faim.training.augment import AugmentingCollator, PostAugmenter, refuse_hidden_augmentation
from faim.training.cache import EmbeddingCache, cached_embeddings
from faim.training.workers import post_loader


class CachedCollator:
    """Collate post indices into a batch of cached embeddings plus targets.

    Args:
        cache: Embeddings of the frozen kinds.
        posts: The posts the indices point into.
        tasks: Tasks whose targets to attach.
        live: Collator of the kinds not in the cache (their encoders train), or ``None``.
        augment: Perturbs the posts ``live`` collates, each with the seed drawn with its index: the collator is then
            given ``(index, seed)`` pairs (``EpochDraws``), not indices.
    """

    def __init__(
        self,
        cache: EmbeddingCache,
        posts: list[Post],
        tasks: list[TaskSpec],
        live: Callable[[list[Post]], PostBatch] | None = None,
        augment: PostAugmenter | None = None,
    ) -> None:
        self.cache = cache
        self.posts = posts
        self.tasks = tasks
        self.live = live
        self.augment = augment
        self.targets = [post_targets(post, tasks) for post in posts]
        self.corrections = [questions_or_corrects(post) for post in posts]  # once, not every epoch

    def __call__(self, drawn: list[int] | list[tuple[int, int]]) -> PostBatch:
        indices = [index for index, _ in drawn] if self.augment else drawn
        posts = [self.posts[i] for i in indices]
        targets = stack_targets(self.tasks, [self.targets[i] for i in indices])
        live = posts if self.augment is None else self.augment(posts, [seed for _, seed in drawn])
        elements = self.cache.elements(indices) | (self.live(live).elements if self.live else {})
        return PostBatch.of(posts, elements, targets, [self.corrections[i] for i in indices])


class EpochDraws(Sampler):
    """The indices ``sampler`` draws, each epoch's drawn alike whatever was drawn before it: the generator of
    ``sampler`` (a ``RandomSampler`` or ``WeightedRandomSampler`` given one of its own; one drawing nothing at random
    has none) is seeded anew, by ``seed`` and the epoch, as an epoch starts. With ``seeded``, each index comes with
    the seed its post is augmented with (``PostAugmenter``), as an ``(index, seed)`` pair.

    The epoch is the one its trainer is at as it reads it (``epochs``, given by ``faim.training.epochs.TrainerEpochs``
    as ``trainer.fit`` starts), the one Lightning sets as a training epoch starts (``set_epoch``), so a run resumed at
    an epoch draws it
    as the run it continues would have, on one device or several, and reading the loader before training (as a
    fusion fitted on it does) changes nothing; else one more than the last read (each read draws afresh). A loader's
    sampler is read in the process that reads the loader, never in its worker processes, so what an epoch draws
    does not depend on how many there are (``train.num_workers``).
    """

    def __init__(self, sampler: Sampler[int], seed: int, seeded: bool = False) -> None:
        self.sampler = sampler
        self.seed = seed
        self.seeded = seeded
        self.epoch = 0
        self.epochs: Callable[[], int] | None = None

    def set_epoch(self, epoch: int) -> None:
        """Draw epoch ``epoch`` when next read (Lightning calls it as each training epoch starts)."""
        self.epoch = epoch

    def __iter__(self) -> Iterator[int | tuple[int, int]]:
        epoch = self.epoch if self.epochs is None else self.epochs()
        rng = random.Random(f"{self.seed}:{epoch}")
        self.epoch = epoch + 1
        generator = getattr(self.sampler, "generator", None)
        if generator is not None:
            generator.manual_seed(rng.getrandbits(63))
        for index in self.sampler:
            yield (index, rng.getrandbits(64)) if self.seeded else index

    def __len__(self) -> int:
        return len(self.sampler)


class Drawn(Dataset):
    """``items`` read by the ``(index, seed)`` pairs an ``EpochDraws`` with seeds draws: ``(items[index], seed)``."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = items

    def __getitem__(self, drawn: tuple[int, int]) -> tuple[Any, int]:
        index, seed = drawn
        return self.items[index], seed

    def __len__(self) -> int:
        return len(self.items)


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
    seed: int = 0,
) -> DataLoader:
    """A loader over ``posts``; with ``cache_dir``, the kinds of frozen encoders come from cached embeddings.

    Kinds whose encoder trains are collated from the posts in every batch (in the main process when some
    kinds are cached); ``augment`` perturbs the posts of each batch before they are; ``sampler`` (over post
    indices, drawing with a generator of its own where it draws at random) draws the posts instead of ``shuffle``.
    Targets are checked for every post up front, so a bad label fails before training starts.

    What the loader draws at random (the order ``shuffle`` gives, what ``sampler`` draws, how ``augment`` perturbs
    each post, its worker processes' seeds) comes from ``seed`` and the epoch (``EpochDraws``), never from torch's
    global generator, which it leaves as it is: a seeded run draws alike with any ``num_workers``, and the model's
    own draws (dropout) with it.

    Raises:
        HiddenAugmentationError: When ``augment`` perturbs an input the model does not read, or the input of a kind
            whose embeddings are cached; before anything is embedded.
    """
    cached = model.frozen_kinds if cache_dir is not None else []
    if augment is not None:
        refuse_hidden_augmentation(augment, model.kinds_with(None), cached)
    if shuffle and sampler is None:
        sampler = RandomSampler(range(len(posts)), generator=torch.Generator())
    if sampler is not None or augment is not None:
        sampler = EpochDraws(sampler or SequentialSampler(range(len(posts))), seed, seeded=augment is not None)
    generator = torch.Generator().manual_seed(seed)  # the worker processes' seeds
    if cached:
        cache = cached_embeddings(model, collator, posts, cache_dir, batch_size, num_workers, label, cached)
        live = [kind for kind in model.kinds if kind not in cached]
        indices = list(range(len(posts)))
        return DataLoader(
            indices if augment is None else Drawn(indices),
            batch_size=batch_size,
            sampler=sampler,
            generator=generator,
            collate_fn=CachedCollator(cache, posts, collator.tasks, collator.only(live) if live else None, augment),
        )
    for post in posts:
        post_targets(post, collator.tasks)
    if num_workers > 0:
        refuse_unpicklable_preprocessors(model, collator, num_workers)
    return post_loader(
        posts if augment is None else Drawn(posts),
        batch_size=batch_size,
        sampler=sampler,
        generator=generator,
        collate_fn=collator if augment is None else AugmentingCollator(collator, augment),
        num_workers=num_workers,
        persistent_workers=num_workers > 0,
        multiprocessing_context="spawn" if num_workers > 0 else None,
    )

"""Training-time augmentation with evasion-style perturbations (``train.augment``): each training post, in every
epoch, gets each listed perturbation with its probability, so the model learns from text written the way evaders
write it. Validation and evaluation posts are never augmented."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from faim.data.batch import PostBatch
from faim.data.post import Post
from faim.perturb import check_augmentation, get_perturbation, perturb_posts
from faim.registry import ELEMENT_MODALITIES


class PostAugmenter:
    """A picklable callable ``(posts, seeds) -> posts`` returning perturbed copies (inputs are never modified), each
    post's perturbations drawn from its own seed: the same post and seed are perturbed alike in whichever process,
    a DataLoader worker or the main one, perturbs them. A loader draws the seeds with its posts (``EpochDraws``), so
    they differ from epoch to epoch and not with ``train.num_workers``.

    Args:
        probabilities: Perturbation name (``faim.perturb.PERTURBATIONS``) to the probability that a post
            gets it, at the perturbation's default strength; a post may get several, applied in this order.

    Raises:
        ValueError: For an unknown perturbation name or a probability outside ``[0, 1]``.
    """

    def __init__(self, probabilities: Mapping[str, float]) -> None:
        check_augmentation(probabilities)
        self.probabilities = dict(probabilities)

    @property
    def modalities(self) -> set[str]:
        """The modalities the perturbations change (``"text"``, ``"image"``)."""
        return {get_perturbation(name).modality for name in self.probabilities}

    def __call__(self, posts: list[Post], seeds: list[int]) -> list[Post]:
        augmented = []
        for post, seed in zip(posts, seeds, strict=True):
            rng = random.Random(seed)
            for name, probability in self.probabilities.items():
                if rng.random() < probability:
                    (post,) = perturb_posts([post], name, seed=rng.getrandbits(64))
            augmented.append(post)
        return augmented


class AugmentingCollator:
    """``collate(augment(posts, seeds))``: a DataLoader ``collate_fn`` over ``(post, seed)`` pairs (a loader drawing
    ``EpochDraws`` with seeds reads them so, ``Drawn``) that augments the posts of each batch first."""

    def __init__(self, collate: Callable[[list[Post]], PostBatch], augment: PostAugmenter) -> None:
        self.collate = collate
        self.augment = augment

    def __call__(self, drawn: list[tuple[Post, int]]) -> PostBatch:
        return self.collate(self.augment([post for post, _ in drawn], [seed for _, seed in drawn]))


class HiddenAugmentationError(ValueError):
    """Augmentation the model would never see, so training would silently run without it: a perturbation of an
    input the model's fusion does not read, or of the input of a frozen encoder whose embeddings come from a cache."""


def refuse_hidden_augmentation(augment: PostAugmenter, kinds: list[str], cached_kinds: list[str]) -> None:
    """Raise ``HiddenAugmentationError`` when a perturbation of ``augment`` changes an input none of ``kinds``
    (those the model's fusion reads, ``WholePostModel.kinds_with``) reads, or the input of any of ``cached_kinds``."""
    read = {ELEMENT_MODALITIES[kind] for kind in kinds}
    unread = [name for name in augment.probabilities if get_perturbation(name).modality not in read]
    if unread:
        raise HiddenAugmentationError(
            f"{', '.join(unread)} perturb{'s' if len(unread) == 1 else ''} an input this model does not read (it "
            f"reads {', '.join(kinds)}): remove {'it' if len(unread) == 1 else 'them'}"
        )
    hidden = augmented_kinds(augment, cached_kinds)
    if hidden:
        raise HiddenAugmentationError(
            f"it perturbs the {', '.join(hidden)} input, whose encoder is frozen with its embeddings cached, so the "
            "perturbed posts would never reach it: set freeze: false on that encoder, or train.cache_embeddings: false"
        )


def augmented_kinds(augment: PostAugmenter, kinds: list[str]) -> list[str]:
    """The element kinds among ``kinds`` whose inputs the augmentation changes (``text`` and ``comments`` for text
    perturbations, ``image`` for picture ones)."""
    return [kind for kind in kinds if ELEMENT_MODALITIES.get(kind) in augment.modalities]

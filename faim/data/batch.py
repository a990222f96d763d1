"""Batches of posts as flat per-kind element inputs plus scatter indices.

A batch of B posts holds, for each element kind ("text", "image", "comments"), only the elements that
exist, flattened: ``values`` (model inputs, or embeddings when cached), and for each element the post it
belongs to and its slot within that post. The model encodes the flat values once and scatters them into
``[B, num_slots, d]`` with a mask, so absent elements cost nothing and are masked by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from faim.data.post import Post
from faim.preprocess.corrections import questions_or_corrects


@dataclass
class Elements:
    """One kind's elements across a batch.

    Attributes:
        values: Preprocessed inputs (a tensor, a dict of tensors with leading dim N, or a list of those for
            encoders stacked on one kind), or ``[N, d]`` embeddings when ``encoded`` is true.
        post_index: ``[N]`` index of the post each element belongs to.
        slot_index: ``[N]`` position of the element within its post.
        num_slots: Width of the padded ``[B, num_slots, d]`` layout (0 when no post has this kind).
        encoded: Whether ``values`` are already embeddings (cached frozen-encoder outputs).
    """

    values: Any
    post_index: torch.Tensor
    slot_index: torch.Tensor
    num_slots: int
    encoded: bool = False

    def to(self, device: torch.device) -> Elements:
        """The same elements with every tensor on ``device``."""
        values = moved(self.values, device)
        return Elements(values, self.post_index.to(device), self.slot_index.to(device), self.num_slots, self.encoded)

    def scatter(self, embeddings: torch.Tensor, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Place ``[N, d]`` embeddings into ``([B, num_slots, d], mask [B, num_slots])``."""
        dim = embeddings.shape[-1]
        padded = embeddings.new_zeros(batch_size, self.num_slots, dim)
        mask = torch.zeros(batch_size, self.num_slots, dtype=torch.bool, device=embeddings.device)
        if embeddings.shape[0]:
            padded[self.post_index, self.slot_index] = embeddings
            mask[self.post_index, self.slot_index] = True
        return padded, mask


@dataclass
class PostBatch:
    """A collated batch: post ids, per-kind elements, per-task targets, per-post metadata, and whether each post
    questions or corrects what it shares (``faim.preprocess.corrections``; empty when not told)."""

    ids: list[str]
    elements: dict[str, Elements]
    targets: dict[str, torch.Tensor] = field(default_factory=dict)
    meta: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[bool] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        posts: list[Post],
        elements: dict[str, Elements],
        targets: dict[str, torch.Tensor],
        corrections: list[bool] | None = None,
    ) -> PostBatch:
        """The batch of ``posts``: their ids, metadata and corrections (read from the posts unless given, as a
        collator that sees the same posts every epoch reads them once), with their collated elements and targets."""
        if corrections is None:
            corrections = [questions_or_corrects(post) for post in posts]
        return cls([post.id for post in posts], elements, targets, [post.meta for post in posts], corrections)

    @property
    def size(self) -> int:
        return len(self.ids)

    def to(self, device: torch.device) -> PostBatch:
        """The same batch with every tensor on ``device`` (ids, meta and corrections stay as they are)."""
        elements = {kind: elements.to(device) for kind, elements in self.elements.items()}
        targets = {k: v.to(device) for k, v in self.targets.items()}
        return PostBatch(self.ids, elements, targets, self.meta, self.corrections)


def element_layout(counts: list[int]) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Scatter indices for posts holding ``counts[i]`` elements each."""
    post_index = [i for i, n in enumerate(counts) for _ in range(n)]
    slot_index = [s for n in counts for s in range(n)]
    return (
        torch.tensor(post_index, dtype=torch.long),
        torch.tensor(slot_index, dtype=torch.long),
        max(counts, default=0),
    )


def moved(values: Any, device: torch.device) -> Any:
    """``values`` as a preprocessor gives them (a tensor, a dict, list or tuple of such values, or values of its own)
    with every tensor on ``device``: what has a ``to`` (a tensor, a tokenizer's ``BatchEncoding``) is moved with it,
    and what has none (strings, numbers, arrays) is kept as it is, for the encoder to place."""
    if isinstance(values, dict):
        return {key: moved(value, device) for key, value in values.items()}
    if isinstance(values, list):
        return [moved(value, device) for value in values]
    if isinstance(values, tuple):  # a named tuple is built from its fields
        items = [moved(value, device) for value in values]
        return type(values)(*items) if hasattr(values, "_fields") else tuple(items)
    to = getattr(values, "to", None)
    return to(device) if callable(to) else values

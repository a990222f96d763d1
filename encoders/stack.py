"""Several encoders reading the same elements, their embeddings side by side: a recipe's
``text: [{type: hf_text, ...}, {type: use_text}, {type: ngram_text}]`` stacks complementary encoders on one kind."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from faim.encoder import Encoder, Preprocessor


class StackedPreprocessor:
    """Each member's preprocessor over the same elements: a list of their inputs (picklable)."""

    def __init__(self, members: list[Preprocessor]) -> None:
        self.members = members
        sizes = [getattr(member, "draft_size", None) for member in members]
        if all(size is not None for size in sizes):  # a JPEG decodes no smaller than the largest target
            self.draft_size = max(sizes)

    def check(self, element: Any) -> None:
        """Every member's own check of one element (raises ``ValueError``)."""
        for member in self.members:
            check = getattr(member, "check", None)
            if check is not None:
                check(element)

    def __call__(self, elements: list[Any]) -> list[Any]:
        return [member(elements) for member in self.members]


class StackedEncoder(Encoder):
    """Encoders of one modality over the same elements; the embedding is theirs concatenated, in order.

    Args:
        members: At least two encoders of one modality. It is frozen (its embeddings cached) when every member is;
            members that learn from the training elements (``needs_fit``) are fitted on them.
    """

    def __init__(self, members: Sequence[Encoder]) -> None:
        super().__init__()
        modalities = sorted({member.modality for member in members})
        if len(members) < 2 or len(modalities) != 1:
            raise ValueError(f"a stack needs two or more encoders of one modality, got {len(members)} of {modalities}")
        self.members = nn.ModuleList(members)
        self.modality = modalities[0]  # type: ignore[misc]
        self.output_dim = sum(member.output_dim for member in members)
        self.frozen = all(member.frozen for member in members)
        self.needs_fit = any(member.needs_fit for member in members)  # type: ignore[misc]

    def fit(self, elements: list[Any]) -> None:
        for member in self.members:
            if member.needs_fit:
                member.fit(elements)

    def preprocessor(self) -> Preprocessor:
        return StackedPreprocessor([member.preprocessor() for member in self.members])

    def forward(self, inputs: list[Any]) -> torch.Tensor:
        """``[N, output_dim]``: each member's embedding of its own inputs, side by side."""
        return torch.cat([member(part).float() for member, part in zip(self.members, inputs)], dim=-1)

    def identity(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "members": [member.identity() for member in self.members]}

    def export_assets(self, directory: Path) -> dict[str, Any]:
        """Each member's assets in a folder of its own; ``{"members": [each member's overrides]}``."""
        return {"members": [member.export_assets(directory / str(i)) for i, member in enumerate(self.members)]}


def encoder_parts(encoder: nn.Module) -> list[nn.Module]:
    """The encoders whose embeddings make up ``encoder``'s, side by side in order: a stack's members, or the encoder
    itself."""
    return list(encoder.members) if isinstance(encoder, StackedEncoder) else [encoder]


def part_inputs(encoder: nn.Module, inputs: Any) -> list[Any]:
    """Each of ``encoder_parts(encoder)``'s own inputs, from what ``encoder``'s preprocessor made of its elements."""
    return list(inputs) if isinstance(encoder, StackedEncoder) else [inputs]

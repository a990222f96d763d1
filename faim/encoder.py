"""What every encoder provides: ``modality``, ``output_dim``, a picklable preprocessor, and freezing; a text encoder
that reads its text as embedded pieces also says where those embeddings are (``TokenEmbeddings``), for explanations.

An encoder maps a flat batch of one modality's elements (texts or images, already preprocessed) to
``[N, output_dim]`` embeddings. Preprocessing (tokenising, decoding and resizing images) is split out
into a small picklable callable so it runs in DataLoader workers, apart from the model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

Preprocessor = Callable[[list[Any]], Any]


@dataclass(frozen=True)
class TokenEmbeddings:
    """Where a text encoder's pieces enter it as embeddings, which token attributions (``faim.explain``) are taken
    at: the encoder reads the ids of its ``{"input_ids", "attention_mask"}`` through ``layer`` (a transformers
    backbone may also number positions by where padding pieces are, as RoBERTa's does).

    Attributes:
        layer: The module whose output ``[N, T, H]`` is each piece's embedding.
        blank: The blank piece: the piece id the baseline text reads in place of each piece attributed (the shipped
            encoders' padding piece).
        fixed: Piece ids and mask ``[N, T]`` → ``[N, T]`` booleans: the pieces every text has (sentence markers, a
            prefix put before each text) and padding, which the baseline keeps and which get no attribution.
        names: Piece ids → the pieces as the vocabulary spells them (``##`` or ``▁`` marks included).
        length: A text → how many pieces the encoder's preprocessing makes of it before cutting it to the encoder's
            ``max_length``, markers included (as ``attention_mask`` counts those it reads), so that an explanation
            says of a longer text that the pieces past the limit, unread, get no attribution; ``None`` where it is
            not known, and no text is said to be cut.
    """

    layer: nn.Module
    blank: int
    fixed: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    names: Callable[[list[int]], list[str]]
    length: Callable[[str], int] | None = None

    def attributed(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``[N, T]`` booleans: the pieces of each text that get an attribution (real, not fixed)."""
        return mask.bool() & ~self.fixed(ids, mask)


def markers_and_padding(mask: torch.Tensor, leading: int = 1) -> torch.Tensor:
    """``[N, T]`` booleans for texts read as ``leading`` pieces every text starts with (a start marker, a prefix),
    the text's own pieces, an end marker, then padding on the right (``mask`` 0 there, 1 before): true at all but
    the text's own pieces."""
    fixed = ~mask.bool()
    fixed[:, :leading] = True
    last = mask.long().sum(1) - 1
    fixed[torch.arange(len(mask), device=mask.device)[last >= 0], last[last >= 0]] = True
    return fixed


class Encoder(nn.Module, ABC):
    """Base class of faim encoders.

    Subclasses set ``modality`` ("text" or "image") and ``output_dim``, implement ``forward`` and
    ``preprocessor``, and call ``self.apply_freeze(freeze)`` at the end of ``__init__``.
    """

    modality: ClassVar[str]
    output_dim: int
    frozen: bool = False
    needs_fit: ClassVar[bool] = False
    """Whether the encoder learns from the training elements before training (``fit``)."""
    asset_arguments: ClassVar[tuple[str, ...]] = ()
    """The constructor arguments that say only where (and whether) the weights and assets are read from, as those
    ``export_assets`` returns do: the embedding cache keys what was read (the weights' digest, ``identity``) in their
    place, so a saved model reads the embeddings its training cached. Every other argument keys the cache."""

    @abstractmethod
    def preprocessor(self) -> Preprocessor:
        """Return a picklable callable turning raw elements (``str`` or ``PIL.Image``) into model inputs."""

    def fit(self, elements: list[Any]) -> None:
        """Learn what the encoder derives from the training data before anything is embedded or trained: every
        training element of the kinds it embeds (texts, or picture references). Training calls it for an encoder
        with ``needs_fit``; the default learns nothing.
        """

    def export_assets(self, directory: Path) -> dict[str, Any]:
        """Write what rebuilding this encoder needs besides its weights (configs, tokenizer files) to
        ``directory`` and return the constructor arguments that rebuild it from there.

        The returned dict overrides the recipe's arguments when an artifact is loaded; paths in it are
        relative to the artifact directory. The default (nothing to write, nothing to override) suits
        encoders fully described by their constructor arguments.
        """
        return {}

    def identity(self) -> dict[str, Any]:
        """Describe, for embedding-cache keys, what shapes this encoder's embeddings besides its weights (whose digest
        the key takes) and, for a registered encoder, the arguments it was built with (``asset_arguments`` aside),
        which the key takes too: what was read from the ``asset_arguments`` (a tokenizer's digest), or learnt by
        ``fit``. An encoder whose class is not registered says here every setting its embeddings depend on."""
        return {"class": type(self).__name__}

    def token_embeddings(self) -> TokenEmbeddings | None:
        """Where the pieces of a text enter this encoder as embeddings; ``None`` (the default) for an encoder whose
        output is no function of such embeddings (n-gram counts, pictures) and for a stack of encoders, whose
        members the explanations ask in turn."""
        return None

    def apply_freeze(self, freeze: bool) -> None:
        """Freeze all parameters (and keep the encoder in eval mode) when ``freeze`` is true."""
        self.frozen = freeze
        if freeze:
            for parameter in self.parameters():
                parameter.requires_grad_(False)
            super().train(False)

    def train(self, mode: bool = True) -> Encoder:
        """Switch train/eval mode; a frozen encoder always stays in eval mode (no dropout, fixed norms)."""
        return super().train(mode and not self.frozen)


def check_max_length(who: str, max_length: int, positions: int | None, least: int = 1) -> None:
    """Refuse a text encoder's ``max_length`` (pieces kept per text) below ``least`` (the fewest it can keep: 3 for
    an encoder that always adds two markers to a piece of text, as e5's does) or above ``positions``, the pieces its
    model can number (``None``: a model reading any length): a text that long would end, when scored or trained, in
    an index error deep in the model.

    Raises:
        ValueError: Naming ``who`` (the encoder's type), ``max_length`` and the model's limit.
    """
    if positions is None and max_length < least:
        raise ValueError(f"{who}: max_length {max_length} must be at least {least}")
    if positions is not None and not least <= max_length <= positions:
        raise ValueError(
            f"{who}: max_length {max_length} must be between {least} and {positions}, the positions the model has"
        )


def load_checked_state(module: nn.Module, state: dict[str, torch.Tensor], source: str) -> None:
    """Load ``state`` strictly, raising a ValueError that names ``source`` and the mismatched keys."""
    result = module.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise ValueError(
            f"{source}: weights do not fit the architecture; missing {result.missing_keys[:5]}, "
            f"unexpected {result.unexpected_keys[:5]}"
        )

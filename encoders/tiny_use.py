"""A tiny random USE network with a character tokenizer, built offline in milliseconds, for tests."""

from __future__ import annotations

from typing import Any

import torch

from faim.encoders.text_preprocess import folding_identity
from faim.encoders.use_text import BOS, EOS, UseEncoderBase, UseNetwork
from faim.registry import register_encoder


class CharacterPieces:
    """Each character is a piece: its code point folded into the ids past the sentence markers."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        ids = [3 + ord(character) % (self.vocab_size - 3) for character in text]
        return [BOS] * add_bos + ids + [EOS] * add_eos

    def id_to_piece(self, index: int) -> str:
        """A character read as ``index`` (several share an id): a letter or digit if one is, else the first
        printable ASCII character; ``<s>``, ``</s>`` and ``<unk>`` for the markers and the unknown piece."""
        if index < 3:
            return ("<unk>", "<s>", "</s>")[index]
        characters = [
            chr(code) for code in range(32, 127) if self.encode(chr(code), add_bos=False, add_eos=False) == [index]
        ]
        return next((c for c in characters if c.isalnum()), characters[0] if characters else f"<{index}>")


@register_encoder("tiny_use")
class TinyUseEncoder(UseEncoderBase):
    """The ``use_text`` network at ``dim`` wide with random weights (the quantised table too); deterministic given
    the global torch seed.

    Args:
        dim: Width of the piece embeddings and of the sentence embedding (branches and hidden layers: half).
        max_length: Pieces kept per text, the sentence markers included.
        freeze: Keep the dense layers fixed.
        fold_confusables: Fold homoglyphs before tokenising, as ``use_text`` does.
    """

    def __init__(
        self, dim: int = 16, max_length: int = 32, freeze: bool = False, fold_confusables: bool = False
    ) -> None:
        half = dim // 2
        network = UseNetwork(2, 32, embedding_dim=dim, branch_dim=half, hidden_dim=half, output_dim=dim)
        network.table.copy_(torch.randint(0, 64, network.table.shape, dtype=torch.uint8))
        network.scale.fill_(1 / 32)
        network.low.fill_(-1.0)
        self.dim = dim
        super().__init__(network, CharacterPieces(network.table.shape[0]), max_length, freeze, fold_confusables)

    def identity(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "dim": self.dim, "max_length": self.max_length} | folding_identity(
            self.fold_confusables, False
        )

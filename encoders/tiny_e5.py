"""A tiny random e5 network with a character tokenizer, built offline in milliseconds, for tests."""

from __future__ import annotations

import string
from typing import Any

import torch

from faim.encoders.e5_text import PREFIX, E5EncoderBase, E5Network, E5PieceTokenizer
from faim.preprocess.e5_pieces import MARKER, E5Pieces
from faim.preprocess.packed_e5 import BLOCK
from faim.registry import register_encoder

SPECIAL = {"bos": 0, "pad": 1, "eos": 2}
UNK = 3


def character_pieces() -> E5Pieces:
    """Pieces of one character each (letters, digits, punctuation, the word-start marker) and a few words."""
    pieces = [*string.ascii_lowercase, *string.digits, *string.punctuation, MARKER, f"{MARKER}a", f"{MARKER}the"]
    ids = {piece: 4 + index for index, piece in enumerate(pieces)}
    scores = [0.0] * 4 + [-1.0 - 0.01 * index for index in range(len(pieces))]
    return E5Pieces(ids, scores, {"\u0000": ""}, UNK, min(scores) - 10.0)


@register_encoder("tiny_e5")
class TinyE5Encoder(E5EncoderBase):
    """The ``e5_text`` network at ``dim`` wide (a multiple of 32), one layer, random weights (the 4-bit table too);
    deterministic given the global torch seed.

    Args:
        dim: Width of the hidden states and of the embedding.
        max_length: Pieces kept per text, the markers included.
        freeze: Keep the network fixed.
        fold_confusables: Fold homoglyphs before tokenising, as ``e5_text`` does.
        fold_leetspeak: Then fold leetspeak, as ``e5_text`` does (the pieces know the words ``a`` and ``the``).
    """

    def __init__(
        self,
        dim: int = 32,
        max_length: int = 32,
        freeze: bool = False,
        fold_confusables: bool = False,
        fold_leetspeak: bool = False,
    ) -> None:
        pieces = character_pieces()
        sizes = {"vocabulary": max(pieces.ids.values()) + 1, "hidden": dim, "layers": 1, "heads": 2,
                 "feed_forward": 2 * dim, "positions": max_length, "eps": 1e-12}  # fmt: skip
        network = E5Network(**sizes)
        network.word_nibbles.copy_(torch.randint(0, 256, network.word_nibbles.shape, dtype=torch.uint8))
        network.word_scales.fill_(1 / BLOCK)
        with torch.no_grad():
            network.positions.normal_(0, 0.1)
        self.dim = dim
        tokenizer = E5PieceTokenizer(pieces, SPECIAL, max_length, PREFIX, fold_confusables, fold_leetspeak)
        super().__init__(network, tokenizer, sizes, freeze)

    def identity(self) -> dict[str, Any]:
        return {
            "class": type(self).__name__,
            "dim": self.dim,
            "max_length": self.tokenizer.max_length,
        } | self.tokenizer.foldings

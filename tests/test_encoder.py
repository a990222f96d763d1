"""The pieces a text encoder's token attributions leave out: sentence markers, a leading prefix and padding, by
position."""

from __future__ import annotations

import torch
from torch import nn

from faim.encoder import TokenEmbeddings, markers_and_padding


def test_the_leading_pieces_the_last_real_one_and_padding_are_fixed_in_each_row() -> None:
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    fixed = markers_and_padding(mask, leading=2)
    assert fixed.int().tolist() == [[1, 1, 0, 0, 0, 1], [1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]]
    assert markers_and_padding(mask[:2], leading=9).all() and mask.sum() == 12  # the mask itself is left as it was


def test_attributed_pieces_are_the_real_ones_not_fixed() -> None:
    pieces = TokenEmbeddings(nn.Identity(), 0, lambda ids, mask: markers_and_padding(mask), lambda ids: [])
    ids = torch.tensor([[1, 7, 8, 9, 2, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0]])
    assert pieces.attributed(ids, mask).int().tolist() == [[0, 1, 1, 1, 0, 0]]

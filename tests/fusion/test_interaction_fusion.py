"""Tests specific to the Hate-CLIPper interaction fusion: kinds, modes and output sizes."""

from __future__ import annotations

import pytest
import torch

from faim.fusion import InteractionFusion


def test_missing_kind_names_it_and_the_available_ones() -> None:
    with pytest.raises(ValueError, match=r"'image'.*available kinds: comments, text"):
        InteractionFusion({"text": 4, "comments": 3})


def test_custom_kind_names() -> None:
    fusion = InteractionFusion({"caption": 4, "photo": 5}, dim=3, text="caption", image="photo")
    output = fusion(
        {
            "caption": (torch.randn(2, 1, 4), torch.ones(2, 1, dtype=torch.bool)),
            "photo": (torch.randn(2, 2, 5), torch.zeros(2, 2, dtype=torch.bool)),
        }
    )
    assert output.shape == (2, 9)
    with pytest.raises(ValueError, match=r"'text'.*available kinds: caption, photo"):
        InteractionFusion({"caption": 4, "photo": 5})


def test_unknown_mode_lists_valid_modes() -> None:
    with pytest.raises(ValueError, match=r"'outer'.*cross, align"):
        InteractionFusion({"text": 4, "image": 4}, mode="outer")


def test_same_kind_for_both_sides_rejected() -> None:
    with pytest.raises(ValueError, match="different kinds"):
        InteractionFusion({"text": 4, "image": 4}, image="text")


@pytest.mark.parametrize(("mode", "expected"), [("cross", 5 * 5 + 3), ("align", 5 + 3)])
def test_output_dim_keeps_other_kinds(mode: str, expected: int) -> None:
    assert InteractionFusion({"text": 4, "image": 6, "comments": 3}, dim=5, mode=mode).output_dim == expected


def test_cross_is_outer_product_and_align_its_diagonal() -> None:
    dims = {"text": 4, "image": 6}
    elements = {kind: (torch.randn(3, 2, dim), torch.ones(3, 2, dtype=torch.bool)) for kind, dim in dims.items()}
    torch.manual_seed(0)
    cross = InteractionFusion(dims, dim=5, mode="cross", dropout=0.0)
    torch.manual_seed(0)
    align = InteractionFusion(dims, dim=5, mode="align", dropout=0.0)
    matrix = cross(elements).view(3, 5, 5)
    torch.testing.assert_close(torch.diagonal(matrix, dim1=1, dim2=2), align(elements))

"""A value a component's constructor refuses is named by the component's recipe path."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tiny_recipe

import faim


@pytest.mark.parametrize(
    ("path", "key", "value", "expected"),
    [
        (("fusion",), "num_heads", 3, r"model\.fusion: dim \(32\) must be a positive multiple of num_heads \(3\)"),
        (("encoders", "text"), "dim", -5, r"model\.encoders\.text: .*negative dimension"),
        (("heads", "harmful"), "hidden_dim", -1, r"model\.heads\.harmful: "),
    ],
)
def test_a_value_a_component_refuses_is_named_by_its_path(
    path: tuple[str, ...], key: str, value: int, expected: str, tmp_path: Path
) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path / "run")
    section = recipe["model"]
    for step in path:
        section = section[step]
    section[key] = value
    with pytest.raises(ValueError, match=expected):
        faim.build(recipe)


@pytest.mark.parametrize(
    ("encoders", "expected"),
    [
        ({"text": {"type": "tiny_image"}}, r"^model\.encoders\.text: element kind 'text' needs a text encoder, got im"),
        ({"comments": "image"}, r"^model\.encoders\.comments: element kind 'comments' needs a text encoder, got image"),
        (
            {"text": [{"type": "tiny_text"}, {"type": "tiny_image"}]},
            r"^model\.encoders\.text: a stack needs two or more encoders of one modality, got 2 of \['image', 'text'\]",
        ),
    ],
)
def test_an_encoder_of_the_wrong_modality_is_named_by_its_path(encoders: dict, expected: str, tmp_path: Path) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path / "run")
    recipe["model"]["encoders"] |= encoders
    with pytest.raises(ValueError, match=expected):
        faim.build(recipe)

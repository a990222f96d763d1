"""Perturbed copies of posts: every perturbation by name, what each changes, seeds, and name errors."""

from __future__ import annotations

import copy
import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from faim.data.images import load_image
from faim.data.post import Post
from faim.perturb import PERTURBATIONS, get_perturbation, perturb_posts

TEXT_NAMES = [name for name in PERTURBATIONS if name.startswith("text.")]
IMAGE_NAMES = [name for name in PERTURBATIONS if name.startswith("image.")]


def _png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def posts(tmp_path: Path) -> list[Post]:
    gradient = np.linspace(0, 255, 64 * 48 * 3).reshape(48, 64, 3).astype(np.uint8)
    Image.fromarray(gradient).save(tmp_path / "photo.jpg")
    first = Post("a", "I hate those people", ["photo.jpg", _png((10, 120, 250))], ["so true", "stop it"], {"hate": 1})
    first.meta, first.image_root = {"topic": "x"}, tmp_path
    return [first, Post("b", None, ["missing.png"], image_root=tmp_path), Post("c", "")]


def test_table_names_strengths_and_modalities() -> None:
    assert TEXT_NAMES == ["text.char_swap", "text.leetspeak", "text.spaces", "text.homoglyphs"]
    assert IMAGE_NAMES == ["image.jpeg", "image.resize", "image.crop", "image.overlay"]
    assert all(p.modality == name.split(".")[0] for name, p in PERTURBATIONS.items())
    with pytest.raises(dataclasses.FrozenInstanceError):
        PERTURBATIONS["image.jpeg"].strength = 50  # type: ignore[misc]


@pytest.mark.parametrize("name", list(PERTURBATIONS))
def test_inputs_are_not_mutated_and_outputs_are_new(posts: list[Post], name: str) -> None:
    before = copy.deepcopy(posts)
    out = perturb_posts(posts, name)
    assert posts == before
    assert [p.id for p in out] == ["a", "b", "c"]
    for old, new in zip(posts, out):
        assert new is not old and new.labels == old.labels and new.labels is not old.labels
        assert new.meta == old.meta and new.images is not old.images and new.comments is not old.comments


@pytest.mark.parametrize("name", TEXT_NAMES)
def test_text_perturbations_change_text_and_comments_only(posts: list[Post], name: str) -> None:
    out = perturb_posts(posts, name, strength=1.0)
    assert out[0].text != posts[0].text and out[0].comments != posts[0].comments
    assert out[0].images == posts[0].images
    assert (out[1].text, out[2].text) == (None, "")  # no text stays no text
    assert perturb_posts(posts, name, strength=0.0) == posts


@pytest.mark.parametrize("name", IMAGE_NAMES)
def test_image_perturbations_store_png_bytes_and_keep_unloadable_refs(posts: list[Post], name: str) -> None:
    out = perturb_posts(posts, name)
    assert out[0].text == posts[0].text and out[0].comments == posts[0].comments
    for ref, original in zip(out[0].images, posts[0].images):
        assert isinstance(ref, bytes) and ref.startswith(b"\x89PNG")
        assert load_image(ref).size == load_image(original, posts[0].image_root).size
    assert out[1].images == ["missing.png"]  # evaluation reports this error as usual
    assert out[2].images == []


@pytest.mark.parametrize("name", ["text.char_swap", "text.spaces", "image.crop", "image.overlay"])
def test_same_seed_same_posts_other_seed_differs(posts: list[Post], name: str) -> None:
    many = [dataclasses.replace(posts[0], id=str(i)) for i in range(8)]
    assert perturb_posts(many, name, seed=1) == perturb_posts(many, name, seed=1)
    assert perturb_posts(many, name, seed=1) != perturb_posts(many, name, seed=2)


def test_unknown_name_suggests_the_closest_and_lists_all() -> None:
    with pytest.raises(
        ValueError, match=r"'text.leetspeek' \(did you mean 'text.leetspeak'\?\); valid: text.char_swap"
    ):
        perturb_posts([], "text.leetspeek")
    with pytest.raises(ValueError, match=r"unknown perturbation 'blur'; valid: .*image.overlay"):
        get_perturbation("blur")

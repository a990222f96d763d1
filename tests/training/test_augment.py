"""Training-time augmentation (``train.augment``): fresh, seeded perturbations of training posts only, checked in
the recipe, refused where the model would never see them (an input it does not read, or cached embeddings), and a
run that trains with it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import tiny_recipe
from torch.utils.data import RandomSampler, SequentialSampler

import faim
from faim.api import train_recipe as train
from faim.artifact import read_recipe
from faim.assembly import build_source
from faim.data.post import Post
from faim.recipe import Recipe, as_recipe
from faim.recipe.errors import RecipeError
from faim.training.augment import HiddenAugmentationError, PostAugmenter, augmented_kinds
from faim.training.loaders import EpochDraws, make_loader
from faim.training.run import check_augmentation, recipe_loader

POSTS = [Post(id=str(i), text=f"those people should leave {i}", comments=["go home now"]) for i in range(40)]


def test_every_post_gets_a_perturbation_of_probability_one_and_the_inputs_stay() -> None:
    seeds = list(range(len(POSTS)))
    augmented = PostAugmenter({"text.leetspeak": 1.0})(POSTS, seeds)
    assert all(new.text != old.text for new, old in zip(augmented, POSTS))  # 15 letters with a digit each
    assert sum(new.comments != old.comments for new, old in zip(augmented, POSTS)) > 20  # comments change too
    assert POSTS[0].text == "those people should leave 0"
    assert PostAugmenter({"text.leetspeak": 0.0})(POSTS, seeds) == POSTS


def test_each_post_is_perturbed_as_its_own_seed_draws_whatever_posts_it_comes_with() -> None:
    swaps = PostAugmenter({"text.char_swap": 0.5})
    seeds = [7 * n for n in range(len(POSTS))]
    augmented = swaps(POSTS, seeds)
    assert 5 < sum(new.text != old.text for new, old in zip(augmented, POSTS)) < 35
    assert swaps(POSTS[::-1], seeds[::-1]) == augmented[::-1]  # in another batch, or another process, alike
    assert swaps(POSTS, [seed + 1 for seed in seeds]) != augmented  # the next epoch draws other seeds


def test_an_epoch_draws_alike_whatever_was_drawn_before_it() -> None:
    draws = EpochDraws(RandomSampler(range(40), generator=torch.Generator()), seed=3, seeded=True)
    first, second = list(draws), list(draws)  # read twice: each read draws afresh
    assert sorted(index for index, _ in first) == list(range(40)) and first != second
    draws.set_epoch(0)  # as Lightning sets it as an epoch starts, after a fusion read the loader, or resumed
    assert list(draws) == first
    draws.set_epoch(1)
    assert list(draws) == second
    assert list(EpochDraws(SequentialSampler(range(4)), seed=3)) == [0, 1, 2, 3]


def test_bad_names_and_probabilities_are_explained() -> None:
    with pytest.raises(ValueError, match=r"unknown perturbation 'text.leet' \(did you mean 'text.leetspeak'\?\)"):
        PostAugmenter({"text.leet": 0.5})
    with pytest.raises(ValueError, match=r"'text.spaces': probability must be between 0 and 1, got 1.5"):
        PostAugmenter({"text.spaces": 1.5})


def test_the_recipe_checks_its_augment_section(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", augment={"text.leet": 0.5})
    with pytest.raises(RecipeError, match=r"train.augment: unknown perturbation 'text.leet'"):
        as_recipe(recipe)
    recipe["train"]["augment"] = ["text.leetspeak"]
    with pytest.raises(RecipeError, match=r"train.augment: expected dict"):
        as_recipe(recipe)


def test_perturbations_map_to_the_kinds_they_change() -> None:
    kinds = ["comments", "image", "meta", "text"]
    assert augmented_kinds(PostAugmenter({"text.spaces": 0.1}), kinds) == ["comments", "text"]
    assert augmented_kinds(PostAugmenter({"image.crop": 0.1}), kinds) == ["image"]


def frozen_text_run(demo_data, tmp_path: Path, **train: object) -> tuple[Recipe, faim.Detector, list[Post]]:
    """The tiny recipe with its text encoder frozen (so its embeddings are cached), its detector and 8 posts."""
    recipe = tiny_recipe(demo_data, tmp_path / "run", **train)
    recipe["model"]["encoders"]["text"]["freeze"] = True
    recipe = as_recipe(recipe)
    return recipe, faim.build(recipe), build_source(recipe.data).posts("train")[:8]


def test_augmenting_a_cached_frozen_kind_is_refused(demo_data, tmp_path: Path) -> None:
    recipe, detector, posts = frozen_text_run(demo_data, tmp_path, augment={"text.spaces": 0.3})
    with pytest.raises(RecipeError, match=r"train.augment: it perturbs the comments, text input, whose encoder"):
        check_augmentation(recipe, detector.model)
    with pytest.raises(HiddenAugmentationError, match=r"it perturbs the comments, text input, whose encoder"):
        recipe_loader(recipe, detector, posts, True, "train", augment=True)
    recipe_loader(recipe, detector, posts, False, "validation")  # evaluation loaders never augment


def test_training_refuses_augmenting_a_cached_frozen_kind_before_anything_is_written_or_embedded(
    demo_data, tmp_path: Path
) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", augment={"text.spaces": 0.3})
    recipe["model"]["encoders"]["text"]["freeze"] = True
    with pytest.raises(RecipeError, match=r"^<dict>: train.augment: it perturbs the comments, text input, whose"):
        train(recipe)
    assert not (tmp_path / "run").exists()


def test_make_loader_refuses_augmenting_a_cached_kind_before_embedding(demo_data, tmp_path: Path) -> None:
    _, detector, posts = frozen_text_run(demo_data, tmp_path)
    collator = detector.collator(with_targets=True)
    cache = tmp_path / "cache"
    spaces = PostAugmenter({"text.spaces": 1.0})
    with pytest.raises(HiddenAugmentationError, match="comments, text input"):
        make_loader(detector.model, collator, posts, 8, False, cache_dir=cache, augment=spaces)
    assert not cache.exists()  # refused before anything was embedded
    crop = PostAugmenter({"image.crop": 1.0})  # the image encoder trains, so its input may be perturbed
    plain = next(iter(make_loader(detector.model, collator, posts, 8, False, cache_dir=cache)))
    cropped = next(iter(make_loader(detector.model, collator, posts, 8, False, cache_dir=cache, augment=crop)))
    assert torch.equal(plain.elements["text"].values, cropped.elements["text"].values)  # cached, untouched
    assert not torch.equal(plain.elements["image"].values, cropped.elements["image"].values)


def test_only_the_training_loader_perturbs_live_inputs(demo_data, tmp_path: Path) -> None:
    recipe = as_recipe(tiny_recipe(demo_data, tmp_path / "run", augment={"text.leetspeak": 1.0}))
    detector = faim.build(recipe)
    posts = [post for post in build_source(recipe.data).posts("train") if post.text][:8]
    plain = next(iter(recipe_loader(recipe, detector, posts, False, "train")))
    augmented = next(iter(recipe_loader(recipe, detector, posts, False, "train", augment=True)))
    assert not torch.equal(plain.elements["text"].values["input_ids"], augmented.elements["text"].values["input_ids"])
    assert torch.equal(plain.targets["harmful"], augmented.targets["harmful"])


def test_a_run_trains_with_augmentation(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=1, augment={"text.char_swap": 0.5})
    result = train(recipe)
    assert result is not None
    assert read_recipe(result.model_dir).train.augment == {"text.char_swap": 0.5}


def test_perturbing_an_input_the_model_does_not_read_is_refused(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", augment={"text.spaces": 0.3, "image.crop": 0.5})
    recipe["model"]["encoders"] = {"text": recipe["model"]["encoders"]["text"]}
    recipe = as_recipe(recipe)
    detector = faim.build(recipe)
    posts = build_source(recipe.data).posts("train")[:8]
    with pytest.raises(RecipeError, match=r"train.augment: image.crop perturbs an input this model does not read"):
        check_augmentation(recipe, detector.model)
    text_only = make_loader(detector.model, detector.collator(with_targets=True), posts, 8, False,
                            augment=PostAugmenter({"text.spaces": 0.3}))  # fmt: skip
    assert next(iter(text_only)).elements["text"].values["input_ids"].shape[0] == 8


def test_perturbing_an_input_the_fusion_does_not_read_is_refused(demo_data, tmp_path: Path) -> None:
    recipe = tiny_recipe(demo_data, tmp_path / "run", augment={"text.spaces": 0.3, "image.crop": 0.5})
    recipe["model"]["encoders"] = {"text": recipe["model"]["encoders"]["text"], "image": {"type": "tiny_image"}}
    recipe["model"]["fusion"] = {"type": "concat", "kinds": ["text"]}  # the picture is encoded, never fused
    recipe = as_recipe(recipe)
    detector = faim.build(recipe)
    posts = build_source(recipe.data).posts("train")[:8]
    with pytest.raises(RecipeError, match=r"train.augment: image.crop perturbs an input this model does not read \("):
        check_augmentation(recipe, detector.model)
    crop = PostAugmenter({"image.crop": 0.5})
    with pytest.raises(HiddenAugmentationError, match=r"image.crop perturbs an input this model does not read"):
        make_loader(detector.model, detector.collator(with_targets=True), posts, 8, False, augment=crop)

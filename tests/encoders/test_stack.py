"""Encoders stacked on one element kind: recipes, training with a fitted member, save and load."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import tiny_recipe

import faim
from faim.api import train_recipe
from faim.artifact import read_recipe
from faim.data.sources import read_posts
from faim.data.targets import TaskSpec
from faim.detector import Detector
from faim.encoders.ngram_text import NgramTextEncoder
from faim.encoders.stack import StackedEncoder
from faim.encoders.tiny_use import TinyUseEncoder
from faim.fusion import ConcatFusion
from faim.model import WholePostModel
from faim.recipe import RecipeError
from faim.tasks import BinaryHead

STACK = [
    {"type": "tiny_text", "dim": 16, "freeze": True},
    {"type": "tiny_use", "dim": 16, "freeze": True},
    {"type": "ngram_text", "dim": 8, "min_df": 1},
]


def stacked_recipe(demo_data: dict[str, Path], out: Path) -> dict:
    recipe = tiny_recipe(demo_data, out, max_epochs=1)
    recipe["model"]["encoders"]["text"] = STACK
    return recipe


def test_a_stack_concatenates_its_members_and_trains_saves_and_loads(demo_data, tmp_path: Path) -> None:
    result = train_recipe(stacked_recipe(demo_data, tmp_path / "run"))
    encoder = result.detector.model.encoders["text"]
    assert isinstance(encoder, StackedEncoder) and encoder.output_dim == 16 + 16 + 8 and encoder.frozen
    assert (tmp_path / "run" / "cache").glob("*.safetensors")  # frozen: its embeddings were cached
    posts = list(read_posts(demo_data["validation"]))[:8]
    loaded = faim.load(result.model_dir)
    assert loaded.score(posts) == result.detector.score(posts)
    written = read_recipe(result.model_dir).model["encoders"]["text"]
    assert [spec["type"] for spec in written] == ["tiny_text", "tiny_use", "ngram_text"]


def test_a_stack_composed_in_code_is_written_as_a_list_and_loads_back(tmp_path: Path) -> None:
    torch.manual_seed(0)
    ngrams = NgramTextEncoder(dim=8, min_df=1)
    ngrams.fit(["a text", "another text", "a third one"])
    stack = StackedEncoder([TinyUseEncoder(dim=16), ngrams])
    model = WholePostModel({"text": stack}, ConcatFusion({"text": 24}), {"x": BinaryHead(24)})
    detector = Detector(model, [TaskSpec("x", "binary", ("no", "yes"))])
    detector.save(tmp_path / "model")
    written = read_recipe(tmp_path / "model").model["encoders"]["text"]
    assert [spec["type"] for spec in written] == ["tiny_use", "ngram_text"] and written[1]["dim"] == 8
    posts = [{"id": "1", "text": "a text"}, {"id": "2", "text": "something else"}]
    assert faim.load(tmp_path / "model").score(posts) == detector.score(posts)


def test_a_one_member_list_and_a_bad_member_are_named(demo_data, tmp_path: Path) -> None:
    recipe = stacked_recipe(demo_data, tmp_path / "run")
    recipe["model"]["encoders"]["text"] = STACK[:1]
    with pytest.raises(RecipeError, match=r"model.encoders.text: a list stacks two or more encoders"):
        faim.build(recipe)
    recipe["model"]["encoders"]["text"] = [STACK[0], {"type": "ngram_txt"}]
    with pytest.raises(RecipeError, match=r"model.encoders.text\[1\].type: unknown encoder 'ngram_txt'"):
        faim.build(recipe)


def test_each_member_of_a_frozen_stack_is_cached_on_its_own(demo_data, tmp_path: Path) -> None:
    from faim.training.cache import cached_embeddings

    recipe = stacked_recipe(demo_data, tmp_path / "run")
    posts = list(read_posts(demo_data["train"]))[:30]
    torch.manual_seed(0)  # both models draw the unchanged members' random weights alike
    detector = faim.build(recipe)
    detector.model.fit_encoders(posts, 8)
    cache = tmp_path / "cache"
    first = cached_embeddings(detector.model, detector.collator(), posts, cache, kinds=["text"])
    stamps = {p: p.stat().st_ino for p in cache.glob("*.safetensors")}
    assert len(stamps) == 3 and first.tensors["text.values"].shape[1] == 40
    recipe["model"]["encoders"]["text"][2]["dim"] = 4  # only the n-gram member changes
    torch.manual_seed(0)
    changed = faim.build(recipe)
    changed.model.fit_encoders(posts, 8)
    second = cached_embeddings(changed.model, changed.collator(), posts, cache, kinds=["text"])
    assert second.tensors["text.values"].shape[1] == 36
    assert {p: p.stat().st_ino for p in stamps} == stamps and len(list(cache.glob("*.safetensors"))) == 4

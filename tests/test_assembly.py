"""A value a component's constructor refuses, or an argument refused on the way, is named by the component's recipe
path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import tiny_recipe

import faim
from faim import registry
from faim.assembly import build_source
from faim.data.sources import JsonlSource
from faim.recipe import RecipeError
from faim.tasks import BinaryHead


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
        ({"text": {"type": "tiny_image"}}, r"^<dict>: model\.encoders\.text: element kind 'text' needs a text enco"),
        ({"comments": "image"}, r"^<dict>: model\.encoders\.comments: element kind 'comments' needs a text enco"),
        (
            {"text": [{"type": "tiny_text"}, {"type": "tiny_image"}]},
            r"^<dict>: model\.encoders\.text: a stack needs two or more encoders of one modality, got 2 of \['imag",
        ),
    ],
)
def test_an_encoder_of_the_wrong_modality_is_named_by_its_path(encoders: dict, expected: str, tmp_path: Path) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path / "run")
    recipe["model"]["encoders"] |= encoders
    with pytest.raises(ValueError, match=expected):
        faim.build(recipe)


def test_a_key_a_plugin_taking_any_key_passes_on_to_a_call_refusing_it_is_named_by_its_path_and_the_plugin(
    tmp_path: Path,
) -> None:
    @faim.register_head("test_passing_on")
    class PassingOn(BinaryHead):
        def __init__(self, input_dim: int, **options: int) -> None:
            super().__init__(input_dim, **options)

    @faim.register_head("test_named_only")
    class NamedOnly(BinaryHead):
        def __init__(self, input_dim: int, hidden_dim: int = 0) -> None:
            super().__init__(input_dim, hidden_dim=hidden_dim)

    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path / "run")
    head = {"hiden_dim": 4, "labels": ["no", "yes"]}
    try:
        recipe["model"]["heads"] = {"harmful": head | {"type": "test_passing_on"}}
        passing_on = r"^<dict>: model\.heads\.harmful: test_assembly\..*PassingOn: "
        with pytest.raises(ValueError, match=passing_on) as refused:
            faim.build(recipe)
        assert str(refused.value).endswith("BinaryHead.__init__() got an unexpected keyword argument 'hiden_dim'")
        assert isinstance(refused.value.__cause__, TypeError)
        recipe["model"]["heads"] = {"harmful": head | {"type": "test_named_only"}}
        with pytest.raises(RecipeError, match=r"model\.heads\.harmful\.hiden_dim: unknown key \(did you mean 'hidd"):
            faim.build(recipe)
    finally:
        registry.HEADS.pop("test_passing_on")
        registry.HEADS.pop("test_named_only")


@pytest.fixture
def forwarding_source() -> Iterator[str]:
    """A registered source plug-in that passes every key it is given on to the ``jsonl`` source: its type name."""

    @faim.register_source("test_forwarding")
    class Forwarding(JsonlSource):
        def __init__(self, **options: str) -> None:
            super().__init__(**options)

    yield "test_forwarding"
    registry.SOURCES.pop("test_forwarding")


def test_a_key_a_source_plugin_passes_on_to_a_call_refusing_it_is_named_by_its_path_and_the_plugin(
    forwarding_source: str, tmp_path: Path
) -> None:
    fine = {"type": "jsonl", "train": str(tmp_path / "t.jsonl")}
    typo = {"type": forwarding_source, "trian": str(tmp_path / "t.jsonl")}
    sections = {
        "data": typo,
        "data.sources[1]": {"type": "concat", "sources": [fine, typo]},
        "data.source.sources[0]": {
            "type": "without",
            "source": {"type": "concat", "sources": [typo, fine]},
            "field": "f",
            "values": ["a"],
        },
        "data.sources[1].source": {
            "type": "concat",
            "sources": [fine, {"type": "without", "source": typo, "field": "f", "values": ["a"]}],
        },
    }
    for where, section in sections.items():
        with pytest.raises(ValueError, match=rf"^{re.escape(where)}: test_assembly\..*Forwarding: ") as refused:
            build_source(section)
        assert str(refused.value).endswith("JsonlSource.__init__() got an unexpected keyword argument 'trian'")
        assert isinstance(refused.value.__cause__, TypeError)


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"type": "hateful_memes", "root": "r", "validation": "dev_sen"}, r"^data: hateful_memes: validation 'dev_s"),
        (
            {
                "type": "concat",
                "sources": [{"type": "jsonl"}, {"type": "hateful_memes", "root": "r", "validation": "x"}],
            },
            r"^data\.sources\[1\]: hateful_memes: validation 'x' is not one of",
        ),
        (
            {"type": "concat", "sources": [{"type": "jsonl"}, {"type": "concat", "sources": []}]},
            r"^data\.sources\[1\]: a concat member cannot be a concat itself",
        ),
        (
            {"type": "concat", "sources": [{"type": "jsonl"}, {"root": "r"}]},
            r"^data\.sources\[1\]: a concat member must be a data: mapping with a type:$",
        ),
    ],
)
def test_a_value_a_source_refuses_is_named_once_by_its_path(section: dict, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        build_source(section)


def test_a_model_composed_in_code_with_its_tasks_in_another_order_than_its_heads_saves_and_loads(
    tmp_path: Path,
) -> None:
    from faim import Detector, WholePostModel
    from faim.data.targets import TaskSpec
    from faim.encoders.tiny_text import TinyTextEncoder
    from faim.fusion.concat import ConcatFusion
    from faim.tasks import MulticlassHead

    text = TinyTextEncoder(dim=8)
    heads = {"a": BinaryHead(8), "b": MulticlassHead(8, 3)}
    model = WholePostModel({"text": text}, ConcatFusion({"text": 8}), heads)
    detector = Detector(model, [TaskSpec("b", "multiclass", ("x", "y", "z")), TaskSpec("a", "binary", ("n", "p"))])
    posts = [{"id": "1", "text": "a caption"}]
    loaded = faim.load(detector.save(tmp_path / "model"))
    assert loaded.tasks == detector.tasks
    assert loaded.score(posts) == detector.score(posts)

"""The registry: duplicates raise (a built-in's name before the built-ins are imported too), a class lacking what its
kind provides is refused, lookups suggest, plug-ins register through the entry-point group; a plug-in that fails to
load is warned of and skipped, named where a type it may register is looked up, and a load stopped part way goes on
when asked again; an argument annotated as paths in a list, tuple or mapping is given paths."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import typing
import warnings
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import torch
from conftest import tiny_recipe
from torch import nn

import faim
from faim import components, registry
from faim.encoder import Encoder
from faim.notices import FaimWarning
from faim.recipe import Recipe, RecipeError
from faim.tasks import BinaryHead
from faim.tasks.base import Head


def test_duplicate_name_raises() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @registry.register_fusion("concat")
        class Another:
            pass


@pytest.mark.parametrize("name", [Head, "", 3])
def test_a_name_that_is_not_one_is_refused_saying_how_to_register(name: object) -> None:
    with pytest.raises(TypeError, match=r"^register_head takes the name recipes give the head as type:, as in "):
        registry.register_head(name)  # @faim.register_head above a class, without its name, passes the class


class Typeless(nn.Module):
    """A head's methods, without its ``task_type``."""

    def loss(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return logits.sum()


class Abstract(Head):
    """A head leaving ``loss`` abstract."""

    task_type = "binary"


class Forwardless(Encoder):
    """An encoder of every method but ``forward``, which ``torch.nn.Module`` gives as one raising
    ``NotImplementedError``."""

    modality = "text"

    def preprocessor(self) -> typing.Any: ...


class NoFingerprint:
    """A source of every method but ``fingerprint``."""

    def splits(self) -> list[str]: ...
    def posts(self, split: str) -> list: ...
    def iter_posts(self, path: str) -> list: ...
    def describe(self, split: str) -> str: ...


@pytest.mark.parametrize(
    ("kind", "cls", "message"),
    [
        (
            "head",
            Typeless,
            r"Typeless does not provide task_type \(class attribute: 'binary', 'multiclass' or",
        ),
        ("head", type("Bare", (nn.Module,), {"task_type": "binary"}), r"Bare does not provide loss \(method loss\(log"),
        (
            "head",
            Abstract,
            r"test_registry\.Abstract does not provide loss \(abstract\)$",
        ),
        (
            "encoder",
            type("Modalityless", (Encoder,), {}),
            r"Modalityless does not provide modality \(class attribute: 'text'",
        ),
        ("source", NoFingerprint, r"NoFingerprint does not provide fingerprint \(method fingerprint\(split\)"),
        (
            "head",
            type("Regression", (BinaryHead,), {"task_type": "regression"}),
            r"Regression does not provide task_type \(class attribute: 'binary', 'multiclass' or 'multilabel'\), "
            r"got 'regression'$",
        ),
        (
            "fusion",
            type("Forwardless", (nn.Module,), {}),
            r"Forwardless does not provide forward \(method forward\(elements\): \{kind: \(embeddings",
        ),
        ("encoder", Forwardless, r"Forwardless does not provide forward \(method forward\(inputs\): \[N, output_dim\]"),
        (
            "encoder",
            type("Audio", (Forwardless,), {"modality": "audio", "forward": lambda self, inputs: inputs}),
            r"Audio does not provide modality \(class attribute: 'text', 'image' or 'meta'\), got 'audio'$",
        ),
    ],
)
def test_a_class_lacking_what_its_kind_provides_is_refused_naming_it_and_what_it_lacks(
    kind: str, cls: type, message: str
) -> None:
    with pytest.raises(TypeError, match=rf"^{kind} 'test_broken': .*{message}"):
        getattr(registry, f"register_{kind}")("test_broken")(cls)
    assert "test_broken" not in registry.REGISTRIES[kind]


def test_a_fusion_built_without_its_output_dim_is_refused_naming_its_recipe_path(tmp_path: Path) -> None:
    @registry.register_fusion("test_sum")
    class Sum(nn.Module):
        def __init__(self, input_dims: dict[str, int]) -> None:
            super().__init__()

        def forward(self, elements: dict) -> torch.Tensor:
            return sum(embeddings.sum(1) for embeddings, _ in elements.values())

    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path / "run")
    recipe["model"]["fusion"] = {"type": "test_sum"}
    try:
        with pytest.raises(
            ValueError, match=r"^<dict>: model\.fusion: test_registry\..*Sum does not set output_dim \(the size"
        ):
            faim.build(recipe)
    finally:
        registry.FUSIONS.pop("test_sum")


TAKING_A_BUILT_INS_NAME = """
import sys
import faim
from torch import nn
try:
    @faim.register_encoder("tiny_text")
    class Mine(nn.Module):
        pass
except ValueError as error:
    print(error)
section = {"encoders": {"image": {"type": "tiny_image"}}, "fusion": {"type": "concat"},
           "heads": {"harmful": {"type": "binary", "labels": ["no", "yes"]}}}
faim.build({"model": section}).save(sys.argv[1])
faim.load(sys.argv[1])
print("built and loaded")
"""


def test_a_built_ins_name_is_refused_before_the_built_ins_are_imported_and_nothing_breaks(tmp_path: Path) -> None:
    run = [sys.executable, "-c", textwrap.dedent(TAKING_A_BUILT_INS_NAME), str(tmp_path / "model")]
    result = subprocess.run(run, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    refusal, done = result.stdout.splitlines()
    assert refusal == (
        "encoder 'tiny_text' is already registered, by faim.encoders.tiny_text.TinyTextEncoder: "
        "__main__.Mine cannot take its name; register it under another one"
    )
    assert done == "built and loaded"


def test_a_built_in_registered_after_a_class_that_took_its_name_names_that_class_as_the_one_to_rename(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "FUSIONS", dict(registry.FUSIONS))
    monkeypatch.setitem(registry.REGISTRIES, "fusion", registry.FUSIONS)

    @registry.register_fusion("late_probe")  # faim.registry's own decorator, before the built-in is imported
    class Mine(nn.Module):
        def forward(self, elements: dict) -> torch.Tensor: ...

    builtin = type("LateProbeFusion", (nn.Module,), {"__module__": "faim.fusion.late_probe"})
    message = (
        r"^fusion 'late_probe' is the name of faim's built-in faim.fusion.late_probe.LateProbeFusion, which "
        r"test_registry.*Mine took before it was registered: register Mine under another name, with "
        r"faim.register_fusion, which refuses a built-in's name there and then$"
    )
    with pytest.raises(ValueError, match=message):
        registry.register_fusion("late_probe")(builtin)


def test_lookup_suggests_close_name() -> None:
    with pytest.raises(KeyError, match="did you mean 'gated'"):
        registry.lookup("fusion", "gatd")


PLUGIN_HEAD = """
from faim import register_head
from faim.tasks.binary import BinaryHead
@register_head({name!r})
class PluginHead(BinaryHead):
    pass
"""


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str | dict[str, str]]]:
    """Plug-ins to write, by name → a module's source (or, for a package, file name → source), installed as
    ``faim.plugins`` entry points in that order and tried afresh; the heads they register and their modules are
    removed afterwards."""
    modules: dict[str, str | dict[str, str]] = {}

    def installed(group: str) -> list[EntryPoint]:
        for name, source in modules.items():
            if isinstance(source, dict):
                (tmp_path / name).mkdir(exist_ok=True)
                for file, text in source.items():
                    (tmp_path / name / file).write_text(text)
            else:
                (tmp_path / f"{name}.py").write_text(source)
        return [EntryPoint(name=name, value=name, group=group) for name in modules if group == registry.PLUGIN_GROUP]

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(components, "entry_points", installed)
    monkeypatch.setattr(components, "_plugins_tried", {})
    monkeypatch.setattr(components, "_plugins_found", None)
    heads = set(registry.HEADS)
    yield modules
    for name in set(registry.HEADS) - heads:
        registry.HEADS.pop(name)
    for module in [module for module in sys.modules if module.split(".")[0] in modules]:
        sys.modules.pop(module)


def test_plugin_entry_point_registers_its_components(plugins: dict[str, str]) -> None:
    plugins["my_faim_plugin"] = PLUGIN_HEAD.format(name="plugin_head")
    assert components.lookup("head", "plugin_head").__name__ == "PluginHead"


def test_a_plugin_that_fails_to_load_is_warned_of_once_and_named_where_a_type_is_unknown(
    plugins: dict[str, str],
) -> None:
    plugins["broken_faim_plugin"] = "import a_module_not_installed\n"
    plugins["later_faim_plugin"] = PLUGIN_HEAD.format(name="later_head")
    failure = (
        r"plug-in 'broken_faim_plugin' \(entry point faim\.plugins: broken_faim_plugin = broken_faim_plugin\) "
        r"failed to load: ModuleNotFoundError: No module named 'a_module_not_installed' \(install the Python module "
        r"'a_module_not_installed' it imports\)"
    )
    with pytest.warns(FaimWarning, match=failure + "; its components are not registered"):
        assert components.lookup("head", "later_head").__name__ == "PluginHead"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KeyError, match=r"unknown head type 'broken_head'; valid: .*binary.*; " + failure):
            components.lookup("head", "broken_head")


def test_installed_plugins_are_looked_for_again_only_once_a_folder_of_the_path_changes(
    plugins: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = []
    installed = components.entry_points
    monkeypatch.setattr(components, "entry_points", lambda group: scans.append(group) or installed(group))
    plugins["first_faim_plugin"] = PLUGIN_HEAD.format(name="first_head")
    assert components.lookup("head", "first_head").__name__ == "PluginHead"
    os.utime(tmp_path, ns=(1, 1))  # its modules written as the plug-ins were first looked for
    components.registries()
    before = len(scans)
    for _ in range(3):  # each reads the registries more than once
        Recipe.load("hate_text_frozen")
        faim.build(tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path))
    assert len(scans) == before
    plugins["second_faim_plugin"] = PLUGIN_HEAD.format(name="second_head")
    os.utime(tmp_path, ns=(2, 2))  # as installing a package changes its folder
    assert components.lookup("head", "second_head").__name__ == "PluginHead"
    assert len(scans) == before + 1


def test_a_plugin_whose_entry_point_came_after_the_plugins_were_looked_for_is_found_before_its_type_is_refused(
    plugins: dict[str, str], tmp_path: Path
) -> None:
    plugins["early_faim_plugin"] = PLUGIN_HEAD.format(name="early_head")

    def looked_for() -> None:
        components.registries()
        os.utime(tmp_path, ns=(1, 1))  # the plug-ins' modules written as they were looked for
        components.registries()

    looked_for()
    # pip writes a dist-info's entry_points.txt after making its folder, setup.py develop rewrites an egg-info's in
    # place: no folder of the path changes after the plug-ins were looked for
    plugins["late_faim_plugin"] = PLUGIN_HEAD.format(name="late_head")
    assert components.lookup("head", "late_head").__name__ == "PluginHead"
    looked_for()
    plugins["later_faim_plugin"] = PLUGIN_HEAD.format(name="later_head")
    recipe = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path)
    recipe["model"]["heads"]["harmful"]["type"] = "later_head"
    assert type(faim.build(recipe).model.heads["harmful"]).__name__ == "PluginHead"
    with pytest.raises(KeyError, match="unknown head type 'never_head'"):
        components.lookup("head", "never_head")


def test_a_plugin_load_stopped_part_way_goes_on_when_asked_again(plugins: dict, tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    stop.touch()  # the first import is stopped after the plug-in's own module registered a head, as Ctrl-C may stop it
    plugins["first_faim_plugin"] = {
        "__init__.py": f"from . import heads\nimport pathlib\nif pathlib.Path({str(stop)!r}).exists():\n"
        "    raise KeyboardInterrupt\n",
        "heads.py": PLUGIN_HEAD.format(name="first_head"),
    }
    plugins["second_faim_plugin"] = PLUGIN_HEAD.format(name="second_head")
    with pytest.raises(KeyboardInterrupt):
        components.load_plugins()
    assert "first_head" not in registry.HEADS
    stop.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert components.lookup("head", "first_head").__name__ == "PluginHead"
    assert components.lookup("head", "second_head").__name__ == "PluginHead"


def test_arguments_a_double_star_parameter_takes_are_set_in_a_recipe_recorded_saved_and_loaded_by_their_own_names(
    tmp_path: Path,
) -> None:
    @faim.register_head("test_options")
    class OptionsHead(BinaryHead):
        def __init__(self, input_dim: int, **options: int) -> None:
            super().__init__(input_dim, hidden_dim=options.get("hidden", 0))

    head = {"type": "test_options", "hidden": 4, "labels": ["no", "yes"]}
    section = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"harmful": head},
    }
    try:
        assert registry.constructor_arguments(OptionsHead(16, hidden=4)) == {"input_dim": 16, "hidden": 4}
        for composed_in_code in (False, True):
            detector = faim.build({"model": section})
            if composed_in_code:
                detector.model.heads["harmful"] = OptionsHead(8, hidden=4)
                detector.recipe = None  # its architecture written out: as the recipe gives it
            detector.save(tmp_path / str(composed_in_code))
            loaded = faim.load(tmp_path / str(composed_in_code))
            assert loaded.recipe.model["heads"] == section["heads"]
            assert loaded.model.heads["harmful"].net[0].out_features == 4  # a hidden layer of 4
        with pytest.raises(RecipeError, match=r"model.heads.harmful.input_dim: is derived from the encoders"):
            faim.build({"model": section | {"heads": {"harmful": head | {"input_dim": 8}}}})
        detector.model.heads["harmful"] = OptionsHead(8, labels=1)
        with pytest.raises(ValueError, match=r"OptionsHead: argument labels=1 has the name of a key a recipe gives"):
            detector.save(tmp_path / "labels")
    finally:
        registry.HEADS.pop("test_options")


def test_a_parameter_named_as_a_recipes_own_key_is_saved_taking_what_the_recipe_gives(tmp_path: Path) -> None:
    @faim.register_head("test_labels_parameter")
    class LabelsHead(BinaryHead):
        def __init__(self, input_dim: int, labels: list | None = None, hidden_dim: int = 0) -> None:
            super().__init__(input_dim, hidden_dim=hidden_dim)

    section = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"harmful": {"type": "binary", "labels": ["no", "yes"]}},
    }
    try:
        detector = faim.build({"model": section})
        detector.model.heads["harmful"] = LabelsHead(8, hidden_dim=3)
        detector.recipe = None  # its architecture written out
        detector.save(tmp_path / "model")
        loaded = faim.load(tmp_path / "model")
        assert loaded.recipe.model["heads"]["harmful"] == {
            "type": "test_labels_parameter",
            "labels": ["no", "yes"],
            "hidden_dim": 3,
        }
    finally:
        registry.HEADS.pop("test_labels_parameter")


def test_a_plugin_argument_annotated_as_paths_in_a_list_tuple_or_mapping_is_built_saved_and_loaded_as_paths(
    tmp_path: Path,
) -> None:
    @faim.register_head("test_paths_head")
    class PathsHead(BinaryHead):
        def __init__(
            self,
            input_dim: int,
            tables: list[Path] | None = None,
            stems: tuple[Path, ...] = (),
            named: dict[str, Path] | None = None,
        ) -> None:
            super().__init__(input_dim)
            self.tables, self.stems, self.named = tables, stems, named
            self.read = [path.name for path in [*(tables or []), *stems, *(named or {}).values()]]

    head = {"type": "test_paths_head", "tables": ["a/t"], "stems": ["s"], "named": {"x": "n"}, "labels": ["no", "yes"]}
    section = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"harmful": head},
    }
    try:
        built = faim.build({"model": section}).model.heads["harmful"]
        assert (built.tables, built.stems, built.named) == ([Path("a/t")], (Path("s"),), {"x": Path("n")})
        detector = faim.build({"model": section})
        detector.model.heads["harmful"] = PathsHead(8, tables=[Path("b")], stems=(Path("c"),), named={"y": Path("d")})
        detector.recipe = None  # its architecture written out, each path as its string
        detector.save(tmp_path / "model")
        loaded = faim.load(tmp_path / "model")
        assert {key: loaded.recipe.model["heads"]["harmful"][key] for key in ("tables", "stems", "named")} == {
            "tables": ["b"],
            "stems": ["c"],
            "named": {"y": "d"},
        }
        rebuilt = loaded.model.heads["harmful"]
        assert (rebuilt.tables, rebuilt.stems, rebuilt.named) == ([Path("b")], (Path("c"),), {"y": Path("d")})
    finally:
        registry.HEADS.pop("test_paths_head")


def test_a_recipe_given_in_code_builds_its_components_with_the_tuples_it_gives_them(tmp_path: Path) -> None:
    @faim.register_head("test_tuple_head")
    class TupleHead(BinaryHead):
        def __init__(
            self,
            input_dim: int,
            size: tuple[int, int] = (1, 1),
            stems: tuple[Path, ...] = (),
            table: tuple[Path, int] | None = None,
        ) -> None:
            super().__init__(input_dim)
            self.size, self.stems, self.table = size, stems, table

    head = {"type": "test_tuple_head", "size": (3, 4), "stems": ("s",), "table": ("t", 2), "labels": ["no", "yes"]}
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    try:
        built = faim.build({"model": section | {"heads": {"harmful": head}}}).model.heads["harmful"]
        assert (built.size, built.stems, built.table) == ((3, 4), (Path("s"),), (Path("t"), 2))
        detector = faim.build({"model": section | {"heads": {"harmful": head}}})
        detector.recipe = None  # its architecture written out, each tuple as a list and each path as its string
        detector.save(tmp_path / "model")
        loaded = faim.load(tmp_path / "model")
        assert loaded.recipe.model["heads"]["harmful"]["table"] == ["t", 2]
        assert loaded.model.heads["harmful"].table == (Path("t"), 2)  # the tuple a recipe in code gave, as loaded
    finally:
        registry.HEADS.pop("test_tuple_head")


CHECKING_ONLY_PLUGIN = """
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import faim
from faim.tasks import BinaryHead

if TYPE_CHECKING:
    from somewhere_else import Thing


@faim.register_head("test_checking_only_head")
class CheckingOnlyHead(BinaryHead):
    def __init__(
        self, input_dim: int, size: tuple[int, int] = (1, 1), table: Path | None = None, thing: Thing | None = None
    ) -> None:
        super().__init__(input_dim)
        self.size, self.table = size, table
"""


def test_a_parameter_annotated_with_a_name_imported_only_for_type_checkers_leaves_the_others_converted_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "checking_only_plugin.py").write_text(CHECKING_ONLY_PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    head = {"type": "test_checking_only_head", "labels": ["no", "yes"]}
    try:
        importlib.import_module("checking_only_plugin")
        built = faim.build({"model": section | {"heads": {"h": head | {"size": [2, 3], "table": "t"}}}}).model
        assert (built.heads["h"].size, built.heads["h"].table) == ((2, 3), Path("t"))
        for size in ([1, 2, 3], "ab"):
            with pytest.raises(RecipeError, match=r"model\.heads\.h\.size: expected tuple\[int, int\], got"):
                faim.build({"model": section | {"heads": {"h": head | {"size": size}}}})
    finally:
        registry.HEADS.pop("test_checking_only_head", None)
        sys.modules.pop("checking_only_plugin", None)


def test_only_strings_where_an_annotation_asks_for_a_path_alone_are_made_paths() -> None:
    assert registry.as_annotated(["a", None], list[Path | None]) == [Path("a"), None]
    assert registry.as_annotated(("a",), tuple[Path, ...]) == (Path("a"),)
    assert registry.as_annotated({"k": ["a"]}, dict[str, list[Path]] | None) == {"k": [Path("a")]}
    assert registry.as_annotated(["a"], list[str | Path]) == ["a"]
    assert registry.as_annotated("a", list[Path]) == "a"  # refused by the recipe's check, not taken apart here
    assert registry.as_annotated(["a", 2], tuple[Path, int]) == (Path("a"), 2)  # one type per item
    assert registry.as_annotated(("a", 2), tuple[Path, int] | None) == (Path("a"), 2)
    assert registry.as_annotated(["a"], tuple[Path, int]) == ["a"]  # of another length: refused by the recipe's check


def test_a_list_given_where_a_tuple_is_asked_for_is_made_a_tuple_at_any_depth() -> None:
    assert registry.as_annotated([1, 2], tuple[int, int]) == (1, 2)  # as YAML holds it
    assert registry.as_annotated([1, 2], tuple) == (1, 2)
    assert registry.as_annotated([3, 3], int | tuple[int, int]) == (3, 3)  # the one type a list may be read as
    assert registry.as_annotated({"k": [["a", 1]]}, dict[str, tuple[tuple[Path, int], ...]]) == {"k": ((Path("a"), 1),)}
    assert registry.as_annotated([1, 2], list[int] | tuple[int, int]) == [1, 2]  # either: as given
    assert registry.as_annotated([1, 2], Sequence[int]) == [1, 2]


def test_a_tuple_given_in_code_where_a_list_is_asked_for_is_made_a_list() -> None:
    assert registry.as_annotated((1, 2), list[int]) == [1, 2]
    assert registry.as_annotated(("a",), list[Path] | None) == [Path("a")]
    assert registry.as_annotated((1, 2), list) == [1, 2]
    assert registry.as_annotated((1, 2), Sequence[int]) == (1, 2)  # a Sequence takes either, as it is


def test_a_list_tuple_or_mapping_for_a_union_of_several_of_its_kind_is_made_the_first_member_it_fits() -> None:
    union = list[int] | tuple[str, str] | None
    assert registry.as_annotated(["a", "b"], union) == ("a", "b")  # as YAML holds it
    assert registry.as_annotated([1, 2], union) == [1, 2]
    assert registry.as_annotated((1, 2), union) == [1, 2]  # as its saved recipe's YAML list will be
    assert registry.as_annotated(["a", 1], union) == ["a", 1]  # fits none: refused by the recipe's check
    assert registry.as_annotated(["a"], tuple[Path, ...] | list[int]) == (Path("a"),)
    assert registry.as_annotated([1], tuple[Path, ...] | list[int]) == [1]
    assert registry.as_annotated({"k": "a"}, dict[str, int] | dict[str, Path]) == {"k": Path("a")}
    assert registry.as_annotated({"k": "a"}, str | dict[str, Path]) == {"k": Path("a")}


def test_a_plugin_argument_annotated_with_a_union_of_sequences_is_built_as_the_member_it_fits_or_refused() -> None:
    @faim.register_head("test_union_head")
    class UnionHead(BinaryHead):
        def __init__(self, input_dim: int, given: list[int] | tuple[str, str] | None = None) -> None:
            super().__init__(input_dim)
            self.given = given

    section = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}
    head = {"type": "test_union_head", "labels": ["no", "yes"]}
    try:
        for given, made in ((["a", "b"], ("a", "b")), ([1, 2, 3], [1, 2, 3])):
            built = faim.build({"model": section | {"heads": {"h": head | {"given": given}}}}).model
            assert built.heads["h"].given == made and type(built.heads["h"].given) is type(made)
        expected = r"model\.heads\.h\.given: expected list\[int\] \| tuple\[str, str\] \| None, got \['a', 1\]"
        with pytest.raises(RecipeError, match=expected):
            faim.build({"model": section | {"heads": {"h": head | {"given": ["a", 1]}}}})
    finally:
        registry.HEADS.pop("test_union_head")


def test_a_sequence_annotation_without_its_item_types_takes_items_of_any_type() -> None:
    for bare in (tuple, list, Sequence, typing.Tuple, typing.List, typing.Sequence):  # noqa: UP006  (as written)
        assert registry.item_annotations(bare, 2) == [typing.Any, typing.Any]
    assert registry.item_annotations(tuple[()], 0) == []  # the empty tuple names its (no) item types
    assert registry.item_annotations(tuple[()], 1) is None
    assert registry.item_annotations(dict, 1) is None


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("XLMRobertaConfig", "an XLMRobertaConfig"),
        ("HTTPResponse", "an HTTPResponse"),
        ("MPNetConfig", "an MPNetConfig"),
        ("CLIPConfig", "a CLIPConfig"),
        ("T5Config", "a T5Config"),
        ("UUID", "a UUID"),
        ("ndarray", "an ndarray"),
        ("uint8", "a uint8"),
        ("UnicodeDecodeError", "a UnicodeDecodeError"),
        ("UserDict", "a UserDict"),
        ("Unpickler", "an Unpickler"),
        ("Union", "a Union"),
        ("UnaryOp", "a UnaryOp"),
        ("Unet", "a Unet"),
        ("UnexpectedEOF", "an UnexpectedEOF"),
        ("Uninitialized", "an Uninitialized"),
        ("Unordered", "an Unordered"),
        ("NoneType", "a NoneType"),
        ("OrderedDict", "an OrderedDict"),
        ("Enum", "an Enum"),
        ("AlbertConfig", "an AlbertConfig"),
        ("int", "an int"),
        ("str", "a str"),
        ("list", "a list"),
    ],
)
def test_a_type_takes_the_article_its_name_is_said_with(name: str, named: str) -> None:
    assert registry.a_type(type(name, (), {})()) == named


def test_a_type_of_none_is_none() -> None:
    assert registry.a_type(None) == "None"

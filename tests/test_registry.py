"""The registry: duplicates raise (a built-in's name before the built-ins are imported too), lookups suggest, plug-ins
register through the entry-point group; a plug-in that fails to load is warned of and skipped, named where a type it
may register is looked up, and a load stopped part way goes on when asked again."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from faim import components, registry
from faim.notices import FaimWarning


def test_duplicate_name_raises() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @registry.register_fusion("concat")
        class Another:
            pass


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


def test_lookup_suggests_close_name() -> None:
    with pytest.raises(KeyError, match="did you mean 'gated'"):
        registry.lookup("fusion", "gatd")


PLUGIN_HEAD = """
from torch import nn
from faim import register_head
@register_head({name!r})
class PluginHead(nn.Module):
    task_type = 'binary'
    def __init__(self, input_dim: int):
        super().__init__()
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

"""The registry: duplicates raise, lookups suggest, plug-ins register through the entry-point group."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from faim import components, registry


def test_duplicate_name_raises() -> None:
    with pytest.raises(ValueError, match="already registered"):

        @registry.register_fusion("concat")
        class Another:
            pass


def test_lookup_suggests_close_name() -> None:
    with pytest.raises(KeyError, match="did you mean 'gated'"):
        registry.lookup("fusion", "gatd")


def test_plugin_entry_point_registers_its_components(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_faim_plugin.py").write_text(
        "from torch import nn\n"
        "from faim import register_head\n"
        "@register_head('plugin_head')\n"
        "class PluginHead(nn.Module):\n"
        "    task_type = 'binary'\n"
        "    def __init__(self, input_dim: int):\n"
        "        super().__init__()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin = EntryPoint(name="mine", value="my_faim_plugin", group=registry.PLUGIN_GROUP)
    monkeypatch.setattr(components, "entry_points", lambda group: [plugin] if group == registry.PLUGIN_GROUP else [])
    monkeypatch.setattr(components, "_plugins_loaded", False)
    monkeypatch.delitem(registry.HEADS, "plugin_head", raising=False)
    try:
        assert components.lookup("head", "plugin_head").__name__ == "PluginHead"
    finally:
        registry.HEADS.pop("plugin_head", None)
        sys.modules.pop("my_faim_plugin", None)

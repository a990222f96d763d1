"""Every registered component, and which constructor arguments are derived rather than written in a recipe.

Importing this module registers the built-in encoders, fusions, heads and data sources (importing their
packages does that); ``lookup`` and ``registries`` also load, once, every installed plug-in (the
``faim.plugins`` entry-point group). Recipe validation, model building and ``faim recipe list`` read the
registries through here, so what they see never depends on what happened to be imported before.

Sizes flow forward and are never written: an encoder's ``output_dim`` gives the fusion its ``input_dims``, the
fusion's ``output_dim`` gives each head its ``input_dim``, and a head's label list gives ``num_classes`` /
``num_labels`` (``DERIVED``, ``head_sizes``).
"""

from __future__ import annotations

import inspect
from importlib.metadata import entry_points
from typing import Any

import faim.data.concat  # noqa: F401  (registers every built-in source; concat sits on top of the others)
import faim.data.without  # noqa: F401  (so does without)
import faim.encoders  # noqa: F401  (registers the built-in encoders)
import faim.fusion  # noqa: F401  (registers the built-in fusions)
import faim.tasks  # noqa: F401  (registers the built-in heads)
from faim import registry
from faim.registry import PLUGIN_GROUP, REGISTRIES, constructor_arguments

DERIVED: dict[str, tuple[str, ...]] = {
    "encoder": (),
    "fusion": ("input_dims",),
    "head": ("input_dim", "num_classes", "num_labels"),
    "source": (),
}
"""Per kind, the constructor arguments the builder computes; a recipe may not write them."""

RESERVED: dict[str, tuple[str, ...]] = {
    "encoder": ("type",),
    "fusion": ("type", "kinds"),
    "head": ("type", "labels"),
    "source": ("type",),
}
"""Per kind, the recipe keys of a component that are not constructor arguments."""

_plugins_loaded = False


def load_plugins() -> None:
    """Import every module of the ``faim.plugins`` entry-point group (once); each registers its components."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in entry_points(group=PLUGIN_GROUP):
        entry.load()


def registries() -> dict[str, dict[str, type]]:
    """Kind → name → class of every registered component, plug-ins included."""
    load_plugins()
    return REGISTRIES


def lookup(kind: str, name: str, where: str = "") -> type:
    """The class registered as ``name`` (plug-ins included); raises KeyError naming the valid choices."""
    load_plugins()
    return registry.lookup(kind, name, where)


def settable_arguments(kind: str, cls: type) -> list[str]:
    """The constructor arguments of a registered class a recipe may set (derived ones left out)."""
    params = inspect.signature(cls).parameters.values()
    return [p.name for p in params if p.name not in DERIVED[kind] and p.kind is not p.VAR_KEYWORD]


def head_sizes(task_type: str, labels: tuple[str, ...]) -> dict[str, int]:
    """The size argument a head of ``task_type`` derives from its labels (none for a binary head)."""
    return {"multiclass": {"num_classes": len(labels)}, "multilabel": {"num_labels": len(labels)}}.get(task_type, {})


def component_args(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A recipe component mapping's constructor arguments: every key but the reserved ones."""
    return {key: value for key, value in spec.items() if key not in RESERVED[kind]}


def component_spec(kind: str, component: object) -> dict[str, Any]:
    """The recipe mapping that builds ``component`` again: its ``type:`` and the arguments it was built with,
    derived ones left out.

    Raises:
        ValueError: When its class is not registered, or an argument is not plain data a recipe can hold.
    """
    arguments = constructor_arguments(component)
    spec: dict[str, Any] = {"type": type(component).registry_name}  # type: ignore[attr-defined]
    for name, value in arguments.items():
        if name in DERIVED[kind]:
            continue
        if not is_plain(value):
            raise ValueError(
                f"{type(component).__name__}: argument {name}={value!r} is not plain data (numbers, strings, "
                "booleans, lists and mappings of them), so it cannot be written to a recipe"
            )
        spec[name] = list(value) if isinstance(value, tuple) else value
    return spec


def is_plain(value: Any) -> bool:
    """Whether ``value`` is what YAML holds: None, bool, number, string, or lists / string-keyed mappings of them."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and is_plain(item) for key, item in value.items())
    return False

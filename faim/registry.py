"""Component registries: one plain dict per kind, filled by decorators.

Each kind (encoders, fusions, heads, sources) maps a recipe ``type:`` name to a class. Built-in
components register themselves when their package is imported; third-party packages add theirs
through the ``faim.plugins`` entry-point group, whose entries are modules that register on import.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TypeVar

T = TypeVar("T")

ENCODERS: dict[str, type] = {}
FUSIONS: dict[str, type] = {}
HEADS: dict[str, type] = {}
SOURCES: dict[str, type] = {}

REGISTRIES: dict[str, dict[str, type]] = {
    "encoder": ENCODERS,
    "fusion": FUSIONS,
    "head": HEADS,
    "source": SOURCES,
}

PLUGIN_GROUP = "faim.plugins"


def _register(kind: str, name: str) -> Callable[[T], T]:
    table = REGISTRIES[kind]

    def decorator(cls: T) -> T:
        if name in table:
            raise ValueError(f"{kind} {name!r} is already registered (by {table[name].__module__})")
        table[name] = cls  # type: ignore[assignment]
        cls.registry_name = name  # type: ignore[attr-defined]
        return cls

    return decorator


def register_encoder(name: str) -> Callable[[T], T]:
    """Register an encoder class under ``name`` (its recipe ``type:``)."""
    return _register("encoder", name)


def register_fusion(name: str) -> Callable[[T], T]:
    """Register a fusion class under ``name`` (its recipe ``type:``)."""
    return _register("fusion", name)


def register_head(name: str) -> Callable[[T], T]:
    """Register a task head class under ``name`` (its recipe ``type:``)."""
    return _register("head", name)


def register_source(name: str) -> Callable[[T], T]:
    """Register a data source class under ``name`` (its recipe ``data.type:``)."""
    return _register("source", name)


def suggest(name: str, choices: list[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def lookup(kind: str, name: str, where: str = "") -> type:
    """Return the class registered as ``name``; raise KeyError naming the valid choices."""
    load_builtins()
    table = REGISTRIES[kind]
    if name not in table:
        choices = sorted(table)
        prefix = f"{where}: " if where else ""
        raise KeyError(f"{prefix}unknown {kind} type {name!r}{suggest(name, choices)}; valid: {', '.join(choices)}")
    return table[name]


_loaded = False


def load_builtins() -> None:
    """Import the built-in component packages and every installed plug-in (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import faim.data.sources  # noqa: F401
    import faim.encoders  # noqa: F401
    import faim.fusion  # noqa: F401
    import faim.tasks  # noqa: F401

    for entry in entry_points(group=PLUGIN_GROUP):
        entry.load()

"""What changed between two resolved recipes, field by field."""

from __future__ import annotations

import json
from typing import Any

from faim.recipe.recipe import Recipe


def plain(recipe: Recipe) -> dict[str, Any]:
    """The resolved recipe as JSON data (what an artifact's ``recipe.yaml`` and a run record hold)."""
    return json.loads(json.dumps(recipe.to_dict()))


def changed_fields(old: Any, new: Any, path: str = "") -> dict[str, tuple[Any, Any]]:
    """``{"dotted.path": (old, new)}`` for every leaf that differs between two nested mappings, in the order
    of ``old``'s keys, then the keys only ``new`` has."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = list(old) + [key for key in new if key not in old]
        return {
            field: values
            for key in keys
            for field, values in changed_fields(old.get(key), new.get(key), f"{path}{key}.").items()
        }
    return {} if old == new else {path.rstrip("."): (old, new)}


def describe_changes(changes: dict[str, tuple[Any, Any]], limit: int = 3) -> str:
    """``field: old -> new; ...`` for the first ``limit`` changes, then how many more there are."""
    shown = "; ".join(f"{field}: {old!r} -> {new!r}" for field, (old, new) in list(changes.items())[:limit])
    more = len(changes) - limit
    return shown + (f"; and {more} more" if more > 0 else "")

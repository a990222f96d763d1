"""``faim recipe show|list``.

Its arguments are ``faim.cli.recipe_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
import inspect

from faim.components import DERIVED, registries, settable_arguments
from faim.recipe import Recipe
from faim.recipe.loader import locate, shipped_recipes


def run_show(args: argparse.Namespace) -> int:
    recipe = Recipe.load(args.recipe, args.overrides)
    print(f"# {recipe.source}")
    print(recipe.to_yaml(), end="")
    return 0


def describe(kind: str, cls: type) -> str:
    """The arguments a recipe may set on ``cls`` (with their defaults) and the first paragraph of the class's own
    docstring on one line (none where it has none: never that of a class it inherits from, such as
    ``torch.nn.Module``'s)."""
    params = inspect.signature(cls).parameters
    args = []
    for name in settable_arguments(kind, cls):
        default = params[name].default
        args.append(name if default is inspect.Parameter.empty else f"{name}={default!r}")
    summary = " ".join(inspect.cleandoc(cls.__dict__.get("__doc__") or "").split("\n\n")[0].split())  # its own
    return f"({', '.join(args)})  {summary}".rstrip()


RECIPE_KEYS = {
    "fusion": "kinds=<every kind encoded> (the element kinds fused)",
    "head": "labels (required: the task's label names, the negative first for a binary head)",
}
"""What each kind's recipe keys that are not constructor arguments (``faim.components.RESERVED``, ``type`` aside)
hold."""


def run_list(args: argparse.Namespace) -> int:
    print("shipped recipes:")
    for name in shipped_recipes():
        print(f"  {name:28s} {locate(name)}")
    for kind, table in registries().items():
        derived = ", ".join(sorted(DERIVED[kind])) or "none"
        keys = f"; every one also takes {RECIPE_KEYS[kind]}" if kind in RECIPE_KEYS else ""
        print(f"\n{kind}s (derived arguments: {derived}{keys}):")
        for name, cls in sorted(table.items()):
            print(f"  {name:16s} {describe(kind, cls)}")
    return 0

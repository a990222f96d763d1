"""``faim recipe show|list``'s arguments; ``faim.cli.recipe_cmd`` runs it."""

from __future__ import annotations

import argparse

from faim.cli.common import add_overrides, deferred


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(name, help="show a resolved recipe, or list shipped recipes and components")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = actions.add_parser(
        "show", help="print the resolved recipe (base merged, overrides applied, the train and eval defaults filled)"
    )
    show.add_argument("recipe", help="recipe file, or the name of a shipped recipe")
    add_overrides(show)
    show.set_defaults(handler=deferred("faim.cli.recipe_cmd", "run_show"))
    listing = actions.add_parser("list", help="list shipped recipes and registered encoders, fusions, heads, sources")
    listing.set_defaults(handler=deferred("faim.cli.recipe_cmd", "run_list"))

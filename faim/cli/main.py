"""The ``faim`` command line: train, eval, calibrate, score, embed, export, explain, recipe, demo."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from faim.version import __version__

EPILOG = """examples:
  faim demo                                   generate data, train, evaluate and score, end to end
  faim recipe list                            shipped recipes and registered components
  faim train recipes/hate_text_frozen.yaml --set train.max_epochs=3
  faim eval runs/hate/model data.jsonl --map text=tweet --map labels.hate=label
  faim calibrate runs/hate/model ours.jsonl --map labels.hate=label -o runs/hate/model-ours
  faim score runs/hate/model dump.parquet -o scores.parquet
  faim export runs/hate/model -o exports/hate  ONNX graphs that faim.runtime scores without torch
  faim explain runs/hate/model posts.jsonl -o why/   element shares, token and picture attributions, index.html
"""

COMMANDS = {
    "train": "faim.cli.train_cmd",
    "eval": "faim.cli.eval_cmd",
    "calibrate": "faim.cli.calibrate_cmd",
    "score": "faim.cli.score_cmd",
    "embed": "faim.cli.score_cmd",
    "export": "faim.cli.export_cmd",
    "explain": "faim.cli.explain_cmd",
    "recipe": "faim.cli.recipe_cmd",
    "demo": "faim.cli.demo_cmd",
}
"""Each command and the module that defines its arguments (``add_parser``) and runs it. A command's module is
imported only when that command runs (or for ``faim --help``): ``faim score --runtime onnx`` then starts without
the training stack, torch included."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or ``command``'s alone."""
    parser = argparse.ArgumentParser(
        prog="faim",
        description="faim: whole-post integrity models from pluggable encoders, fusion and task heads.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"faim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        if command in (None, name):
            importlib.import_module(module).add_parser(sub, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``faim`` script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in argv if not word.startswith("-")), None)
    args = build_parser(command if command in COMMANDS else None).parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("faim: interrupted", file=sys.stderr)
        return 130
    except (ValueError, KeyError, OSError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"faim {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

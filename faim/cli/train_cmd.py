"""``faim train RECIPE``."""

from __future__ import annotations

import argparse

from faim.api import train_recipe
from faim.cli.common import add_overrides, output_folder, resume_command
from faim.eval.report import format_table


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="train, calibrate, save and evaluate the model a recipe describes",
        description="Train the model a recipe describes (PyTorch Lightning), pick decision thresholds and "
        "temperatures on the validation split, save the artifact to <train.output_dir>/model and write "
        "the evaluation report to <train.output_dir>/eval. Each run's checkpoints go to "
        "<train.output_dir>/checkpoints/version_N and its logs to logs/version_N and tensorboard/version_N, N "
        "numbering the runs in that directory.",
    )
    parser.add_argument("recipe", help="recipe file, or the name of a shipped recipe (see `faim recipe list`)")
    add_overrides(parser)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the latest run in the output directory after an interruption, from "
        "<output_dir>/checkpoints/version_N/last.ckpt of the highest N that saved one; the recipe must be the run's "
        "(its recipe.yaml there) but for train.max_epochs, where it runs and the eval section",
    )
    parser.add_argument(
        "--output-dir", type=output_folder, help="run directory (shorthand for --set train.output_dir=DIR)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    overrides = args.overrides + ([f"train.output_dir={args.output_dir}"] if args.output_dir else [])
    result = train_recipe(
        args.recipe,
        overrides,
        resume=args.resume,
        resume_hint=resume_command(args.recipe, args.overrides, args.output_dir),
    )
    if result is None:
        return 0
    print(format_table(result.report))
    print(f"model:  {result.model_dir}")
    print(f"report: {result.model_dir.parent / 'eval'}")
    return 0

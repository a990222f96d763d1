"""``faim train RECIPE``'s arguments; ``faim.cli.train_cmd`` runs it."""

from __future__ import annotations

import argparse

from faim.cli.common import add_overrides, deferred, output_folder


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="train, calibrate, save and evaluate the model a recipe describes",
        description="Train the model a recipe describes (PyTorch Lightning), pick decision thresholds and "
        "temperatures on the validation split (a binary task's threshold and temperature, a multiclass task's "
        "temperature; a multilabel task's probabilities are not calibrated, each label decided at 0.5), save the "
        "artifact to <train.output_dir>/model and write "
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
    parser.set_defaults(handler=deferred("faim.cli.train_cmd"))

"""``faim demo``: generate a multimodal dataset, train, evaluate and batch-score, end to end.

Its arguments are ``faim.cli.demo_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
from pathlib import Path

from faim.api import train_recipe
from faim.cli.common import resume_command
from faim.demo_data import make_demo_data, split_path
from faim.eval.report import format_table
from faim.recipe import Recipe
from faim.scoring.engine import score_dump
from faim.wording import shell_path


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    train, validation = split_path(out / "data", "train"), split_path(out / "data", "validation")
    overrides = [f"data.train={train}", f"data.validation={validation}", f"train.output_dir={out / 'run'}"]
    overrides += args.overrides
    recipe = Recipe.load(args.recipe, overrides)  # a recipe or --set refused before the posts are generated
    make_demo_data(out / "data")
    print(f"data:   {shell_path(out / 'data')} (train {train}, validation {validation})")
    result = train_recipe(recipe, resume_hint=resume_command(args.recipe, overrides))
    if result is None:
        return 0
    print(format_table(result.report))
    summary = score_dump(result.model_dir, validation, out / "scores", overwrite=True)
    print(summary.format())
    print(f"model:  {shell_path(result.model_dir)}")
    print(f"report: {shell_path(out / 'run' / 'eval')}")
    return 0

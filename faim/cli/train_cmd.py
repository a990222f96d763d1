"""``faim train RECIPE``.

Its arguments are ``faim.cli.train_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse

from faim.api import train_recipe
from faim.cli.common import resume_command
from faim.eval.report import format_table
from faim.wording import shell_path


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
    print(f"model:  {shell_path(result.model_dir)}")
    print(f"report: {shell_path(result.model_dir.parent / 'eval')}")
    return 0

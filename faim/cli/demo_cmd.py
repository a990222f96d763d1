"""``faim demo``: generate a multimodal dataset, train, evaluate and batch-score, end to end.

Its arguments are ``faim.cli.demo_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
from pathlib import Path

from faim.api import train_recipe
from faim.cli.common import resume_command
from faim.demo_data import make_demo_data
from faim.eval.report import format_table
from faim.scoring.engine import score_dump


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    paths = make_demo_data(out / "data")
    print(f"data:   {out / 'data'} (train {paths['train']}, validation {paths['validation']})")
    overrides = [
        f"data.train={paths['train']}",
        f"data.validation={paths['validation']}",
        f"train.output_dir={out / 'run'}",
        *args.overrides,
    ]
    result = train_recipe(args.recipe, overrides, resume_hint=resume_command(args.recipe, overrides))
    if result is None:
        return 0
    print(format_table(result.report))
    summary = score_dump(result.model_dir, paths["validation"], out / "scores", overwrite=True)
    print(summary.format())
    print(f"model:  {result.model_dir}")
    print(f"report: {out / 'run' / 'eval'}")
    return 0

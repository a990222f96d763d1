"""``faim demo``: generate a multimodal dataset, train, evaluate and batch-score, end to end."""

from __future__ import annotations

import argparse
from pathlib import Path

from faim.api import train_recipe
from faim.cli.common import add_overrides, output_folder, resume_command
from faim.demo_data import make_demo_data
from faim.eval.report import format_table
from faim.scoring.engine import score_dump


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="run the whole pipeline on generated data (train → evaluate → score), a few minutes on a CPU",
        description="Generate posts whose label depends on caption and picture together, train the shipped "
        "`demo_multimodal` recipe on them (frozen MiniLM text and EfficientNet-Lite0 image encoders, "
        "align fusion), print its metrics with each modality masked out, and score the validation "
        "posts to Parquet.",
    )
    parser.add_argument("--out", default="demo_out", type=output_folder, help="output directory (default: demo_out)")
    parser.add_argument("--recipe", default="demo_multimodal", help="recipe to train (default: demo_multimodal)")
    add_overrides(parser)
    parser.set_defaults(handler=run)


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

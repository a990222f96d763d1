"""``faim demo``'s arguments; ``faim.cli.demo_cmd`` runs it."""

from __future__ import annotations

import argparse

from faim.cli.common import add_overrides, deferred, output_folder


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
    parser.set_defaults(handler=deferred("faim.cli.demo_cmd"))

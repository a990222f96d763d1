"""``faim export MODEL -o OUT``: write a saved model as ONNX graphs that ``faim.runtime`` scores without torch."""

from __future__ import annotations

import argparse
from pathlib import Path

from faim.detector import Detector
from faim.export.model import export_model


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="write a saved model as ONNX graphs for faim.runtime (scoring without torch)",
        description="Export a saved model for deployment: one ONNX graph per encoder (per member of a stack) and one "
        "for fusion and heads with the calibration inside, traced by torch.export with dynamic batch, element and "
        "sequence axes, next to what preprocessing needs (tokenizer.json, the text-folding tables, the picture "
        "crop's numbers, the metadata fields), the tasks, labels and thresholds, and the sha256 of every file. Each "
        "graph is checked against the model on example inputs before it is kept. Score the export with "
        "faim.runtime.load(OUT), which needs onnxruntime, tokenizers, Pillow and numpy only.",
    )
    parser.add_argument("model", help="model directory written by `faim train` (or `faim calibrate`)")
    parser.add_argument("-o", "--out", required=True, help="the export directory (replaced if it exists)")
    parser.add_argument("--format", default="onnx", choices=["onnx"], help="graph format (default: %(default)s)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    out = export_model(Detector.load(args.model), args.out)
    files = [path for path in Path(out).rglob("*") if path.is_file()]
    graphs = [path for path in files if path.suffix == ".onnx"]
    size = sum(path.stat().st_size for path in files) / 2**20
    print(f"exported {args.model} to {out}: {len(graphs)} graphs, {len(files)} files, {size:.1f} MiB")
    print(f"score it without torch: faim.runtime.load({str(out)!r}).score(posts)")
    return 0

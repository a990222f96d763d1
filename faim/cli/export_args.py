"""``faim export MODEL -o OUT [--format onnx|pt2] [--quantize int8]``'s arguments; ``faim.cli.export_cmd`` runs
it."""

from __future__ import annotations

import argparse

from faim.artifact_manifest import GRAPH_FORMATS
from faim.cli.common import add_columns, deferred, output_folder, path_given, share


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="write a saved model as ONNX graphs for faim.runtime (scoring without torch) or torch.export programs",
        description="Export a saved model for deployment: one ONNX graph per encoder (per member of a stack) and one "
        "for fusion and heads with the calibration inside, traced by torch.export with dynamic batch, element and "
        "sequence axes, next to what preprocessing needs (tokenizer.json, the text-folding tables, the picture "
        "crop's numbers, the metadata fields), the tasks, labels and thresholds, and the sha256 of every file. Each "
        "graph is checked against the model on example inputs before it is kept. Score the export with "
        "faim.runtime.load(OUT), which needs onnxruntime, tokenizers, Pillow and numpy only. With --quantize int8 "
        "the encoder graphs' weights are quantized to int8 (onnxruntime dynamic quantization), both versions score "
        "labelled posts (the recipe's validation split, or DATA); when a task's macro-F1 drops by more than "
        "--max-drop, the graphs are quantized again, each first smoothed at the strength that keeps its int8 "
        "outputs closest to fp32's on 256 posts of the recipe's training split (or of DATA; slower: a Mul before "
        "each product), and measured again; the export is refused, naming both figures, when that drops too much. "
        "With --format pt2 each graph is a torch.export "
        "ExportedProgram archive instead (no example inputs, nothing pickled), scored with torch by "
        "faim.export.programs.load_export(OUT), which refuses any archive entry that would be unpickled.",
    )
    parser.add_argument("model", type=path_given, help="model directory written by `faim train` (or `faim calibrate`)")
    parser.add_argument(
        "-o",
        "--out",
        required=True,
        type=output_folder,
        help="the export directory (an earlier export there is replaced; a folder holding anything else, an earlier "
        "export with files it does not list too, is refused)",
    )
    parser.add_argument(
        "--format",
        default="onnx",
        choices=GRAPH_FORMATS,
        help="onnx: for faim.runtime and faim score --runtime onnx; pt2: torch.export programs (default: %(default)s)",
    )
    parser.add_argument("--quantize", choices=["int8"], help="quantize the encoder graphs' weights (onnx only)")
    parser.add_argument(
        "--max-drop",
        type=share,
        help="with --quantize: the largest fall of a task's macro-F1 accepted, from 0 to 1 (default: 0.01, "
        "faim.export.quantize.MAX_DROP)",
    )
    parser.add_argument(
        "--data",
        type=path_given,
        help="with --quantize: labelled posts to measure on (default: the recipe's validation split)",
    )
    add_columns(parser)
    parser.set_defaults(handler=deferred("faim.cli.export_cmd"))

"""``faim score|embed MODEL DUMP -o OUT [--runtime torch|onnx]``'s arguments; ``faim.cli.score_cmd`` runs them."""

from __future__ import annotations

import argparse

from faim.cli.common import add_columns, deferred, output_folder, path_given, positive_integer

RUNTIMES = {"torch": ("faim.scoring.engine", "score_dump"), "onnx": ("faim.scoring.exported", "score_exported")}
"""The module and function each ``--runtime`` scores with, imported once chosen: with ``onnx`` this process and its
workers never import torch."""


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    what = "per-task scores and decisions" if name == "score" else "whole-post embeddings"
    torch_only = (
        "--exact, --bf16, --compile, --device cuda and --pool-by-image"
        if name == "score"
        else "--exact, --bf16, --compile and --device cuda"
    )
    parser = sub.add_parser(
        name,
        help=f"write {what} for every row of a dump (JSONL/CSV/TSV/Parquet) to Parquet parts",
        description=f"Stream a dump of posts through a saved model and write {what} to Parquet parts in "
        "OUT: exactly one output row per input row, with `source` (file:row), the "
        "post id, and `error` / `error_kind` naming the problem for rows that could not be scored. This process and "
        "spawned workers share the cores; a run that is interrupted (even killed) resumes where it stopped when "
        "the same command is run again: the same model and inputs, and the same --map, --image-root, --shard-rows "
        "(or its default again), --exact, --bf16, --compile, --runtime, --max-image-pixels (of a run reading "
        f"pictures){', --with-embeddings and --pool-by-image' if name == 'score' else ''}, each that differs being "
        "named; --workers, --batch-size, --engine and --device may change.",
    )
    parser.add_argument(
        "model",
        type=path_given,
        help="model directory written by `faim train`; with --runtime onnx, an export written by `faim export` "
        "too (a saved model is exported first, once, into OUT/_export/DIGEST)",
    )
    parser.add_argument(
        "dump",
        type=path_given,
        help="a JSONL/CSV/TSV/Parquet file, a folder of them, a glob (quote it), or a Hugging Face dataset folder "
        "written by Dataset.save_to_disk (faim-sdk[hf])",
    )
    parser.add_argument("-o", "--out", required=True, type=output_folder, help="output folder of Parquet parts")
    add_columns(parser)
    parser.add_argument(
        "--workers",
        type=positive_integer,
        help="processes that score, this one included (default: one per core; 1: this process only); "
        "with --engine ray: Ray actors, at most one per CPU (or GPU) Ray has, fewer being warned of",
    )
    parser.add_argument("--batch-size", type=positive_integer, default=16, help="posts per forward pass (default: 16)")
    parser.add_argument(
        "--shard-rows",
        type=positive_integer,
        help="rows per part file and restart unit (default: 1/32 of the dump, 32 to 1024)",
    )
    parser.add_argument(
        "--exact",
        action="store_true",
        help="plain eager fp32 with full JPEG decoding, as faim.load's Detector scores (default: channels-last "
        "frozen image backbones, fused by oneDNN Graph on CPUs, and JPEG draft decoding, all in fp32)",
    )
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="run the encoders under bf16 autocast: faster only on CPUs with native bf16 (AVX512-BF16 or AMX) and on "
        "GPUs, slower elsewhere; scores move, a sharp model's by much (compare with --exact on a sample first)",
    )
    parser.add_argument("--compile", action="store_true", help="torch.compile the encoders (slow start)")
    parser.add_argument(
        "--runtime",
        choices=list(RUNTIMES),
        default="torch",
        help="torch (default): the saved model as trained; onnx: its export on onnxruntime (faim.runtime), exact "
        "fp32, in processes that import neither torch nor transformers (faster start and scoring on CPUs); "
        f"{torch_only} are torch's",
    )
    parser.add_argument(
        "--max-image-pixels",
        type=pixel_count,
        metavar="N",
        help="refuse as possible decompression bombs (error_kind image_bomb) pictures of more than N pixels (default: "
        "Pillow's limit, about 89 million, or PIL.Image.MAX_IMAGE_PIXELS as set in Python); none (or 0) lifts the "
        "limit. Every scoring process decodes with it, and a run reading pictures is resumed only with the same",
    )
    parser.add_argument("--overwrite", action="store_true", help="start afresh instead of resuming a run in OUT")
    parser.add_argument("--engine", choices=["embedded", "ray"], default="embedded", help="embedded (default) or ray")
    parser.add_argument(
        "--device",
        default="cpu",
        help="where workers run the model: cpu (default) or cuda (with --engine ray: one GPU per actor)",
    )
    if name == "score":
        parser.add_argument("--with-embeddings", action="store_true", help="also write the whole-post embedding")
        parser.add_argument(
            "--pool-by-image",
            action="store_true",
            help="score the dump's posts together, as evaluation pools them (models whose recipe sets "
            "eval.pool_by_image): each post takes the mean logits of every post in the dump whose picture is a "
            "near-duplicate of its own (plus the weighed share of them that question or correct the picture, where "
            "the recipe sets eval.crowd_corrections), and gains picture_group. A second pass once all rows are "
            "scored; it compares every pair of distinct pictures (about 13 s for 20,000 on two cores). Each "
            "post's own scores stay in OUT/_per_post",
        )
    parser.set_defaults(handler=deferred("faim.cli.score_cmd"), embeddings_only=name == "embed")


def pixel_count(text: str) -> int:
    """``--max-image-pixels``: a whole number of pixels, at least 0, or ``none`` (read as 0): no limit."""
    if text.strip().lower() == "none":
        return 0
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of pixels or none, got {text!r}")
    return value

"""``faim score|embed MODEL DUMP -o OUT [--runtime torch|onnx]``, run with the arguments ``faim.cli.score_args``
reads."""

from __future__ import annotations

import argparse
import importlib
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from faim.artifact_manifest import is_export
from faim.cli.common import check_outside_model, parse_columns
from faim.cli.score_args import RUNTIMES
from faim.data.images import pixel_limit
from faim.runtime.bundle import PT2_LOADER, ExportError, graph_format, read_bundle
from faim.scoring.options import ScoringOptions


def run(args: argparse.Namespace) -> int:
    """Score (or embed) the dump with the runtime ``--runtime`` names and print the run's summary.

    Raises:
        ValueError: Where options contradict each other or the runtime, or an export is given to the torch runtime.
        ExportError: Where a pt2 export or a damaged one is given to the torch runtime.
    """
    check_outside_model(args.model, args.out, "the output")  # whose files a later save of the model would refuse
    common: dict[str, Any] = {
        "columns": parse_columns(args.columns),
        "image_root": args.image_root,
        "workers": args.workers,
        "batch_size": args.batch_size,
        "shard_rows": args.shard_rows,
        "scores": not args.embeddings_only,
        "embeddings": args.embeddings_only or getattr(args, "with_embeddings", False),
        "engine": args.engine,
        "overwrite": args.overwrite,
    }
    pool_by_image = getattr(args, "pool_by_image", False)
    if args.runtime == "torch":
        if is_export(Path(args.model)):
            refuse_export(args.model)
        if args.exact and args.bf16:
            raise ValueError("--exact and --bf16: choose one (bf16 is an approximation)")
        options = ScoringOptions.exact() if args.exact else ScoringOptions(bf16=args.bf16)
        if args.compile:
            options = replace(options, compile=True)
        common |= {"options": options, "device": args.device, "pool_by_image": pool_by_image}
    else:
        torch_only = {
            "--exact": args.exact,
            "--bf16": args.bf16,
            "--compile": args.compile,
            "--device": args.device != "cpu",
            "--pool-by-image": pool_by_image,
        }
        if wrong := [flag for flag, given in torch_only.items() if given]:
            raise ValueError(
                f"{', '.join(wrong)}: only with --runtime torch (the onnx runtime scores its export on CPUs, post "
                "by post, in fp32 with full JPEG decoding)"
            )
    module, function = RUNTIMES[args.runtime]
    score = getattr(importlib.import_module(module), function)
    limit = nullcontext() if args.max_image_pixels is None else pixel_limit(args.max_image_pixels or None)
    with limit:
        print(score(args.model, args.dump, args.out, **common).format())
    return 0


def refuse_export(model: str) -> NoReturn:
    """Refuse an export given to the torch runtime, which scores saved models, saying what reads it.

    Raises:
        ExportError: For a pt2 export, which faim score does not read, or an export that is damaged.
        ValueError: For an ONNX export, which ``--runtime onnx`` reads.
    """
    if graph_format(read_bundle(model)) == "pt2":
        raise ExportError(
            f"{model}: an export of torch.export programs (faim export --format pt2), which faim score does not read; "
            f"{PT2_LOADER}, or score the saved model faim train wrote"
        )
    raise ValueError(f"{model}: an export written by faim export; read it with --runtime onnx")

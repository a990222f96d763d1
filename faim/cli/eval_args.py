"""``faim eval MODEL [DATA]``'s arguments; ``faim.cli.eval_cmd`` runs it."""

from __future__ import annotations

import argparse

from faim.cli.common import add_columns, deferred, output_folder, path_given


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="evaluate a saved model on a file of labelled posts, or on a split of its recipe's data",
        description="Evaluate a saved model: AUROC, average precision, accuracy, macro-F1, precision at "
        "fixed recall, recall at fixed precision and calibration error per task, per slice, per language and with "
        "each modality masked out, and for each binary task the words the model and the labels read the opposite "
        "way (it flags the posts holding the word more often than the rest, the labels call them positive less "
        "often, or the reverse); writes metrics.json, metrics.md and ROC/PR/calibration plots.",
    )
    parser.add_argument("model", type=path_given, help="model directory written by `faim train`")
    parser.add_argument(
        "data",
        nargs="?",
        type=path_given,
        help="labelled posts: a JSONL/CSV/TSV/Parquet file, a folder, a glob or a saved dataset (default: the model's "
        "recipe data)",
    )
    parser.add_argument(
        "--split", help="split of the recipe's data when DATA is not given (default: validation); not with DATA"
    )
    add_columns(parser)
    parser.add_argument(
        "--slice",
        type=meta_field,
        help="meta field to report per-slice metrics for (e.g. --map meta=topic --slice topic); --slice lang slices "
        "by the language detected from each post's text unless --map meta=lang reads DATA's lang column (its codes "
        "read in small letters: EN is the en detected)",
    )
    parser.add_argument(
        "--robustness",
        action="store_true",
        help="also evaluate under evasion-style perturbations (character swaps, leetspeak, inserted spaces, "
        "homoglyphs; JPEG recompression, resize, crop, overlay) and report each metric's drop",
    )
    parser.add_argument(
        "-o",
        "--out",
        type=output_folder,
        help="report directory (default: <model>/../eval-NAME, NAME being DATA's file or folder name, a glob's "
        "folder, or the split)",
    )
    parser.set_defaults(handler=deferred("faim.cli.eval_cmd"))


def meta_field(text: str) -> str:
    """``--slice``'s meta field, refused as it is parsed where it is empty (a variable not set), which would
    otherwise be taken as no ``--slice`` at all."""
    if not text:
        raise argparse.ArgumentTypeError("an empty field name (a variable not set?); name the meta field to slice by")
    return text

"""``faim calibrate MODEL DATA -o NEW_MODEL``'s arguments; ``faim.cli.calibrate_cmd`` runs it."""

from __future__ import annotations

import argparse

from faim.cli.common import add_columns, deferred, output_folder, path_given, positive_integer


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="refit a saved model's temperatures, logit shifts and thresholds on posts of a new platform",
        description="Fit a saved model's calibration to a sample of your own posts and write it as a new model "
        "directory (the model given is left as it was): with labels, each binary task's temperature, logit shift "
        "(where a likelihood-ratio test on the labels finds one at 5 %) and decision threshold and each multiclass "
        "task's temperature are refitted on them (a multilabel task's probabilities are not calibrated, each label "
        "decided at 0.5), and a "
        "report shows what that is worth after 50, 100, 200 and 500 labels (ECE and macro-F1 on the posts not "
        "drawn, over repeated draws) and the model's AUROC on the labels with its 95 % interval, which no calibration "
        "changes, with a warning where that reaches chance (your labels are not what the model ranks), and the "
        "words the model and your labels read the opposite way (it flags the posts holding the word more often "
        "than the rest, your labels call them positive less often, or the reverse), which no calibration mends "
        "either. With --unlabelled, each binary task's share of positives among the posts is estimated by EM on "
        "the model's scores (Saerens et al., 2002) and its probabilities are shifted to it; no label is needed "
        "(labels mapped are read for the report alone).",
    )
    parser.add_argument("model", type=path_given, help="model directory written by `faim train` (or `faim calibrate`)")
    parser.add_argument(
        "data", type=path_given, help="posts: a JSONL/CSV/TSV/Parquet file, a folder, a glob or a saved dataset"
    )
    parser.add_argument(
        "-o",
        "--out",
        required=True,
        type=output_folder,
        help="the new model directory (new, empty, or a model to replace)",
    )
    add_columns(parser)
    parser.add_argument(
        "--unlabelled", action="store_true", help="estimate the new share of positives from unlabelled posts by EM"
    )
    parser.add_argument(
        "--head",
        action="store_true",
        help="also correct each binary head on the labels before calibrating: a logistic regression on the "
        "whole-post embedding and the head's own logit, written into the new model's head, for labels whose "
        "positives are not what the model ranks high (another policy's definition); the report then has a learning "
        "curve for it beside the calibration's. Not for models that pool posts by picture",
    )
    parser.add_argument(
        "--sizes",
        type=positive_integers,
        help="labels drawn for the learning curve, comma-separated (default: 50,100,200,500, "
        "faim.eval.recalibration.SIZES); sizes that leave no post to measure on are left out, and with --head, sizes "
        "under 5 from the head-corrected curve",
    )
    parser.add_argument(
        "--draws", type=positive_integer, default=20, help="random draws per number of labels (default: 20)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default: 0)")
    parser.add_argument(
        "--report", type=output_folder, help="report directory (default: NEW_MODEL-calibration beside it)"
    )
    parser.set_defaults(handler=deferred("faim.cli.calibrate_cmd"))


def positive_integers(text: str) -> list[int]:
    """Comma-separated ``positive_integer`` values, for ``--sizes``."""
    return [positive_integer(part) for part in text.split(",")]

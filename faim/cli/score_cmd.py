"""``faim score|embed MODEL DUMP -o OUT.parquet``."""

from __future__ import annotations

import argparse

from faim.cli.common import add_columns, parse_columns


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    what = "per-task scores and decisions" if name == "score" else "whole-post embeddings"
    parser = sub.add_parser(
        name,
        help=f"write {what} for every post of a dump (JSONL/CSV/Parquet) to Parquet",
        description=f"Stream a dump of posts through a saved model and write {what} to a Parquet file: "
        "one row per input row, with the post id and an `error` column naming the problem for rows "
        "that could not be scored.",
    )
    parser.add_argument("model", help="model directory written by `faim train`")
    parser.add_argument("dump", help="JSONL, CSV or Parquet file of posts")
    parser.add_argument("-o", "--out", required=True, help="output Parquet file")
    add_columns(parser)
    parser.add_argument("--batch-size", type=int, default=64, help="posts per model batch (default: 64)")
    if name == "score":
        parser.add_argument("--with-embeddings", action="store_true", help="also write the whole-post embedding")
    parser.set_defaults(handler=run, embeddings_only=name == "embed")


def run(args: argparse.Namespace) -> int:
    from faim.artifact import load_artifact
    from faim.data.sources import read_posts
    from faim.scoring import score_posts

    detector = load_artifact(args.model)
    posts = read_posts(args.dump, parse_columns(args.columns), args.image_root)
    summary = score_posts(
        detector,
        posts,
        args.out,
        batch_size=args.batch_size,
        scores=not args.embeddings_only,
        embeddings=args.embeddings_only or args.with_embeddings,
    )
    print(summary.format())
    return 0

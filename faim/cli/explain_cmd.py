"""``faim explain MODEL POSTS -o OUT``."""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from faim.cli.common import add_columns, output_folder, parse_columns
from faim.data.sources import read_posts
from faim.detector import Detector
from faim.explain.report import LISTING, check_report_folder, write_report


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="explain a saved model's scores of some posts: element shares, token and picture attributions",
        description="Explain why a saved model scores posts as it does, with Captum: each element's share of each "
        "task's logit (the text, each picture, each comment, the metadata; integrated gradients), each token's "
        "attribution in the text and in each comment (integrated gradients at the embeddings of its pieces, for the "
        "text encoders that read pieces: hf_text, e5_text, use_text, each member of a stack that is one) and a "
        "heat map over each picture (occlusion). OUT gets one JSON per post, the heat maps as PNGs, index.html "
        "to look at and faim-explanations.json listing the posts; a new report replaces an earlier one there whole, "
        "and a folder holding anything else is refused before any work. A post that cannot be read (a picture "
        "missing or not a picture) is not explained: faim-explanations.json and index.html give its error, as faim "
        "score gives a row's, and the other posts are explained.",
    )
    parser.add_argument("model", help="model directory written by `faim train`")
    parser.add_argument("posts", help="a JSONL/CSV/Parquet file of posts, a folder of them, or a glob (quote it)")
    parser.add_argument(
        "-o",
        "--out",
        required=True,
        type=output_folder,
        help="output folder (JSON per post, PNG heat maps, index.html, faim-explanations.json)",
    )
    add_columns(parser)
    parser.add_argument(
        "--limit", type=int, default=20, help="explain the first N posts only (default: 20; 0: every post)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 (every post) or more, got {args.limit}")
    check_report_folder(Path(args.out))  # before any work, as writing the report does again
    columns = parse_columns(args.columns)
    detector = Detector.load(args.model)
    posts = read_posts(args.posts, columns, args.image_root)
    chosen = list(itertools.islice(posts, args.limit or None))
    start = time.perf_counter()
    readable, unread = detector.readable(chosen)
    explanations = iter(detector.explain(readable, progress=True))
    errors = {error.origin: error for error in unread}  # read_posts gives each post its own origin (file:row)
    page = write_report([errors.get(post.origin) or next(explanations) for post in chosen], args.out)
    seconds = (time.perf_counter() - start) / max(1, len(readable))
    failed = f", {len(unread)} not (they could not be read: {LISTING} gives why)" if unread else ""
    print(f"explained {len(readable)} posts ({seconds:.2f} s each){failed}; open {page}")
    return 0

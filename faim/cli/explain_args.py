"""``faim explain MODEL POSTS -o OUT``'s arguments; ``faim.cli.explain_cmd`` runs it."""

from __future__ import annotations

import argparse

from faim.cli.common import add_columns, deferred, output_folder, path_given


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
        "missing or not a picture, or nothing the model reads: empty), or whose scores are not finite (NaN or "
        "infinite), is not explained: faim-explanations.json and index.html give its error, as faim score gives a "
        "row's, and the other posts are explained.",
    )
    parser.add_argument("model", type=path_given, help="model directory written by `faim train`")
    parser.add_argument(
        "posts",
        type=path_given,
        help="a JSONL/CSV/TSV/Parquet file of posts, a folder of them, a glob (quote it) or a saved dataset",
    )
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
    parser.set_defaults(handler=deferred("faim.cli.explain_cmd"))

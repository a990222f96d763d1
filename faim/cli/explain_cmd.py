"""``faim explain MODEL POSTS -o OUT``.

Its arguments are ``faim.cli.explain_args``'s: ``faim --help`` reads them without importing this module."""

from __future__ import annotations

import argparse
import itertools
import time
from functools import partial
from pathlib import Path

from faim.artifact_manifest import read_manifest
from faim.cli.common import check_outside_model, parse_columns
from faim.data.columns import ColumnMap
from faim.data.inputs import close_reading
from faim.data.post import refuse_no_posts
from faim.data.preflight import unread_columns
from faim.data.sources import read_posts
from faim.data.unheld import warn_unheld_kinds, warn_unread_meta
from faim.detector import Detector
from faim.explain.report import LISTING, check_report_folder, write_report
from faim.folders import writing_towards
from faim.wording import plural, shell_path


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise ValueError(f"--limit must be 0 (every post) or more, got {args.limit}")
    check_outside_model(args.model, args.out, "the report")
    check_report_folder(Path(args.out))  # before any work, as writing the report does again
    read_manifest(Path(args.model))  # a model path that names no model, before the posts are read
    columns = parse_columns(args.columns)
    posts = read_posts(args.posts, columns, args.image_root)
    try:
        chosen = list(itertools.islice(posts, args.limit or None))
    finally:  # --limit: the rest is left unread
        close_reading(posts)
    refuse_no_posts(chosen, args.posts)  # before the model is loaded, as reading the posts does not use it
    with writing_towards(Path(args.out)):
        detector = Detector.load(args.model)
        unread_columns_of = partial(unread_columns, args.posts, ColumnMap.from_recipe(columns))
        warn_unheld_kinds(chosen, detector.model.fused_kinds, args.posts, columns=unread_columns_of)
        warn_unread_meta(chosen, detector.model.meta_fields, args.posts)
        start = time.perf_counter()
        readable, unread = detector.readable(chosen)
        # warned of above naming the file; the posts whose scores are not finite join unread
        explained = detector.explain(readable, progress=True, failed=unread, warn=False)
        explanations = iter(explained)
        errors = {error.origin: error for error in unread}  # read_posts gives each post its own origin (file:row)
        page = write_report([errors.get(post.origin) or next(explanations) for post in chosen], args.out)
    each = f" ({(time.perf_counter() - start) / len(explained):.2f} s each)" if explained else ""  # none: no time
    failed = f", {len(unread)} not ({LISTING} gives why)" if unread else ""
    print(f"explained {plural(len(explained), 'post')}{each}{failed}; open {shell_path(page)}")
    return 0

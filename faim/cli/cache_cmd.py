"""``faim cache list|prune``: what the frozen encoders' embedding cache holds, and removing what was not used lately."""

from __future__ import annotations

import argparse
import time
from datetime import datetime

from faim.training.cache_entries import DEFAULT_CACHE_DIR, CacheContents, CacheEntry, Pruned, prune, read_cache
from faim.wording import plural

DESCRIPTION = f"""\
Training with frozen encoders caches each encoder's embeddings of the posts it read (train.cache_dir,
{DEFAULT_CACHE_DIR} by default), so training again takes seconds. Nothing removes them: list shows what
the cache holds, one line per encoder (kind, name and arguments, weights told apart by the identity
digest), and prune removes the encoders not used lately, all their files at once. Reading the cache
counts as using it. Only the cache's own files in the folder are read or removed, never a link,
a folder or another file, and never a file a run is writing."""

DAY_SECONDS = 86400.0


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    parser = sub.add_parser(
        name,
        help="list or prune the cached embeddings of frozen encoders",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="one line per cached encoder: when last used, size, embeddings, files, identity, what it is; a total",
    )
    add_cache_dir(listing)
    listing.set_defaults(handler=run_list)
    pruning = actions.add_parser(
        "prune",
        help="remove the encoders not used in --older-than DAYS days, or every one (--all)",
        description="Remove whole encoders from the cache: every file of each encoder not used (written or read) "
        "in the last DAYS days, or of every encoder with --all; with them, files a stopped run left half written. "
        "Says what it removed and the space freed. A file a run uses meanwhile is kept; one the system refuses to "
        "remove is named, the rest removed all the same, and the exit status is then 1.",
    )
    add_cache_dir(pruning)
    which = pruning.add_mutually_exclusive_group()
    which.add_argument("--older-than", type=days, metavar="DAYS", help="remove encoders not used in DAYS days")
    which.add_argument("--all", action="store_true", help="remove every cached embedding")
    pruning.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    pruning.set_defaults(handler=run_prune)


def add_cache_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        default=DEFAULT_CACHE_DIR,
        metavar="DIR",
        help=f"the cache folder (default: {DEFAULT_CACHE_DIR}; a recipe's train.cache_dir may name another)",
    )


def days(text: str) -> float:
    """``--older-than``'s value: a number of days, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"DAYS is a number of days, 0 or more: got {text!r}")
    return value


def size_text(size: int) -> str:
    """Bytes as people read them: ``512 B``, ``1.5 KiB``, ``1.9 GiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def time_text(seconds: float) -> str:
    """A time since the epoch as local date and minute."""
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def entry_line(entry: CacheEntry) -> str:
    """One encoder's line of the listing: when last used, size, embeddings, files, identity, what it is."""
    return (
        f"{time_text(entry.modified)}  {size_text(entry.size):>10}  {entry.embeddings:>10}  {len(entry.files):>5}  "
        f"{entry.identity[:12]}  {entry.name}"
    )


def run_list(args: argparse.Namespace) -> int:
    contents = read_cache(args.cache_dir)
    print(f"embedding cache {contents.folder}:")
    if contents.entries:
        print(f"{'last used':16s}  {'size':>10}  {'embeddings':>10}  {'files':>5}  {'identity':12s}  encoder")
    for entry in contents.entries:
        print(entry_line(entry))
    if contents.strays:
        size = size_text(sum(file.size for file in contents.strays))
        print(f"{plural(len(contents.strays), 'file')} of no encoder: being written, left half written, unreadable, "
              f"or from a faim that recorded none ({size})")  # fmt: skip
    if contents.others:
        print(f"not the cache's, left alone: {', '.join(contents.others)}")
    embeddings = plural(sum(entry.embeddings for entry in contents.entries), "embedding")
    print(f"total: {plural(len(contents.entries), 'encoder')}, {embeddings}, {size_text(contents.size)}")
    return 0


def run_prune(args: argparse.Namespace) -> int:
    if args.older_than is None and not args.all:
        raise ValueError(
            "say what to remove: --older-than DAYS removes the encoders not used in DAYS days, --all every one "
            "(--dry-run shows what would go); nothing was removed"
        )
    contents = read_cache(args.cache_dir)
    before = None if args.all else time.time() - args.older_than * DAY_SECONDS
    pruned = prune(contents, before, args.dry_run)
    print(prune_report(contents, pruned, args.dry_run))
    return 1 if pruned.failed else 0


def prune_report(contents: CacheContents, pruned: Pruned, dry_run: bool) -> str:
    """What ``prune`` removed (would remove, ``dry_run``): a line per encoder (those with a file left: removed in
    part), one for the files left half written or unreadable, one for the files kept for a run used them meanwhile,
    one for each file that could not be removed, and the space freed."""
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {entry_line(entry)}" for entry in pruned.entries]
    lines.extend(f"removed part of {entry_line(entry)}" for entry in pruned.partly)
    if pruned.strays:
        size = size_text(sum(file.size for file in pruned.strays))
        lines.append(f"{verb} {plural(len(pruned.strays), 'file')} of no encoder ({size})")
    if pruned.kept:
        size = size_text(sum(file.size for file in pruned.kept))
        lines.append(f"kept {plural(len(pruned.kept), 'file')} a run used while the cache was pruned ({size})")
    lines.extend(f"could not remove {failure}" for failure in pruned.failed)
    if not lines:
        return f"nothing to remove from {contents.folder}"
    freed = "would free" if dry_run else "freed"
    lines.append(f"{freed} {size_text(pruned.freed)} of {contents.folder}" + (" (dry run: nothing removed)" * dry_run))
    return "\n".join(lines)

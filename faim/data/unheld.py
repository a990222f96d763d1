"""Warnings of posts holding no element of a kind the model reads, or no metadata field it reads: the model would read
every post without them and say nothing. Every command reading posts, the Python API and the exported runtime warn
through them; they need no torch and read no file, so the runtime importing them loads none of the data readers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from faim.data.elements import GIVEN_POSTS, KIND_NAMES, POST_FIELDS, reads_nothing
from faim.data.post import Post, is_missing, own_meta
from faim.notices import warn

MAP_KIND = "map the column that holds them with --map {field}=COLUMN"
"""What ``warn_unheld_kinds`` says to do by default, ``{field}`` the field of the kind no post holds."""

MAP_META = (
    "give each under the name the model reads: a column so named, with --map meta={field} (in Python, any column: "
    "columns: {{meta: {{{field}: COLUMN}}}}), or a field so named in each post's meta object"
)
"""What ``warn_unread_meta`` says to do by default, ``{field}`` the first field the model reads."""

GIVE_META = "give them in each post's meta under those names"
"""What to do about posts given whose metadata holds none of the fields the model reads."""


def unheld_kinds(posts: Sequence[Post], kinds: Sequence[str]) -> list[str]:
    """The kinds of ``kinds`` no post of ``posts`` holds an element of (as ``reads_nothing`` tells each kind)."""
    unheld = list(kinds)
    for post in posts:
        unheld = [kind for kind in unheld if reads_nothing(post, [kind])]
        if not unheld:
            break
    return unheld


def warn_unheld_kinds(
    posts: Sequence[Post],
    kinds: Sequence[str],
    name: str,
    remedy: str = MAP_KIND,
    columns: Callable[[], list[str] | None] | None = None,
) -> None:
    """Warn (``warn_unheld``) of the kinds a model reads (``kinds``) that no post of ``posts`` (of ``name``) holds
    (``unheld_kinds``). Nothing is said of no posts.

    Args:
        remedy: What to do, ``{field}`` the field of the kind (as ``--map`` names it).
        columns: The columns of the data no mapping reads, asked for only where a kind is warned of (reading a
            file's columns may read the file); ``None`` where they are not known.
    """
    warn_unheld(unheld_kinds(posts, kinds) if posts else [], name, remedy, columns)


def warn_unheld(
    unheld: Sequence[str],
    name: str,
    remedy: str = MAP_KIND,
    columns: Callable[[], Sequence[str] | None] | None = None,
) -> None:
    """Warn (``FaimWarning``), once for each, of the kinds a model reads that no post of ``name`` holds (``unheld``),
    as where the column holding a kind is not mapped: the model reads every post without it, and its scores, metrics
    and calibration are those of posts without it.

    Args:
        remedy: What to do, ``{field}`` the field of the kind (as ``--map`` names it).
        columns: The columns of the data no mapping reads, asked for only where a kind is warned of, and named once,
            by the first kind's warning; ``None`` where they are not known.
    """
    unread = (columns() if columns else None) if unheld else None
    listed = f" (columns of the data no mapping reads: {', '.join(unread)})" if unread else ""
    for kind in unheld:
        warn(
            f"{name}: no post holds any {KIND_NAMES[kind]}, which the model reads: each is read without one, as where "
            f"the column holding them is not mapped; {remedy.format(field=kind)}{listed}"
        )
        listed = ""  # the data's columns are the same for every kind: named once


def warn_unread_meta(posts: Sequence[Post], fields: Sequence[str], name: str, remedy: str = MAP_META) -> None:
    """Warn (``FaimWarning``) where posts of ``posts`` (of ``name``) hold metadata of their own (``Post.has_meta``) but
    none holds a value of any of ``fields``, the ``Post.meta`` fields the model reads: as where the data names them
    otherwise (``like_count`` for ``likes``) or the columns holding them are not mapped, the model reads every post's
    as missing. It names ``fields``, the fields the posts' metadata holds, and what to do (``remedy``, ``{field}`` the
    first of ``fields``). Posts holding no metadata are ``warn_unheld``'s to warn of."""
    if not fields:
        return
    held: dict[str, None] = {}  # the fields posts hold, in order, read until a post holds one the model reads
    for post in posts:
        present = [str(key) for key, value in own_meta(post.meta).items() if not is_missing(value)]
        if any(field in present for field in fields):
            return
        held.update(dict.fromkeys(present))
    if not held:
        return
    warn(
        f"{name}: no post's metadata holds any field the model reads ({', '.join(fields)}), only {', '.join(held)}: "
        "each post is read with them missing; " + remedy.format(field=fields[0])
    )


def warn_unread(posts: Sequence[Post], kinds: Sequence[str], meta_fields: Sequence[str]) -> None:
    """Warn (``FaimWarning``), as ``faim score`` warns of a file, of posts given through the Python API (``score``,
    ``embed`` and ``predict`` of ``faim.Detector`` and of the exported runtime, and ``Detector.explain``, once a call):
    once for each kind of ``kinds`` (those a model reads) that none of ``posts`` holds, naming the post's field that
    holds it (``POST_FIELDS``), and where their metadata holds none of ``meta_fields`` (the fields the model reads):
    the model would read every post without them and say nothing. Nothing is said of no posts."""
    for kind in unheld_kinds(posts, kinds) if posts else []:
        warn_unheld([kind], GIVEN_POSTS, f"give them as each post's {POST_FIELDS[kind]!r}")
    warn_unread_meta(posts, meta_fields, GIVEN_POSTS, GIVE_META)

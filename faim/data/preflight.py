"""Checks of posts made before a model reads any: a kind of element the model reads that no post of a recipe's split
holds (``warn_source_split``, a warning of ``faim.data.unheld`` naming the columns its mapping leaves unread), and posts
the model would stop at part way (``refuse_unreadable``: a text that is not text, pictures that are not there), which
every evaluation, ``faim calibrate`` and training refuse up front, where reading them would stop at the first only once
the model had read every post before it. Of a recipe's splits, ids a file gives more than one post, within a split or
between training and another split (``warn_shared_ids``), and a split reading a training file (``training_files``),
are warned of too: the same post trained on and measured."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from functools import partial
from typing import Any

from faim.data.columns import ColumnMap
from faim.data.elements import check_texts, missing_picture, overfull, warn_overfull
from faim.data.inputs import find_inputs
from faim.data.post import MAP_LABELS, Post, Remedy, check_labelled, normalise_posts
from faim.data.sources import input_columns, input_reading
from faim.data.tabular import FileSource
from faim.data.unheld import warn_unheld_kinds
from faim.notices import warn
from faim.wording import plural

RECIPE_KIND = "map the column that holds them in the recipe (data.columns: {{{field}: COLUMN}})"
"""What a recipe's split none of whose posts holds a kind needs (``warn_source_split``'s default)."""

SHOWN = 5
"""How many posts naming a picture that is not there ``refuse_missing_pictures`` names."""

SHOWN_IDS = 3
"""How many of the ids given more than one post ``warn_shared_ids`` names."""


def refuse_missing_pictures(posts: Sequence[Post], kinds: Collection[str], limit: int, name: str) -> None:
    """Refuse ``posts`` (of ``name``) some of which name a picture that is not there (missing, a folder or empty, as
    ``faim.data.images.check_picture`` finds without reading it) among the first ``limit`` of each (those a model
    reads of a post), where the model reads pictures (``image`` among ``kinds``). A picture that is there but does not
    decode is found as it is read.

    Raises:
        ValueError: Naming ``name``, how many posts, and the first ``SHOWN`` by origin and id with their picture.
    """
    if "image" not in kinds:
        return
    bad = [error for post in posts if (error := missing_picture(post, limit)) is not None]
    if not bad:
        return
    shown = "; ".join(map(str, bad[:SHOWN])) + (f"; and {len(bad) - SHOWN} more" if len(bad) > SHOWN else "")
    names = "names" if len(bad) == 1 else "name"
    raise ValueError(
        f"{name}: {len(bad)} of {plural(len(posts), 'post')} {names} a picture that is not there (missing, a folder or "
        f"empty): {shown}; mend the paths or the folder they resolve against, or leave those posts out"
    )


def refuse_unreadable(
    posts: Sequence[Post], kinds: Collection[str], limit: int, name: str, *, fused: Collection[str] | None
) -> None:
    """Refuse ``posts`` (of ``name``) a model reading ``kinds`` (at most ``limit`` elements of each) would stop at
    part way, or read an id of as ``None``, before it reads any: the first whose id was taken away or a field set to a
    value of the wrong type after it was built (``normalise_posts``, which makes an id set to a number after its post
    was built text), the first whose text or a comment is not text (``check_texts``), then those naming a picture that
    is not there (``refuse_missing_pictures``); and warn of those holding more pictures or comments of ``fused`` (the
    kinds its fusion, hence its heads, reads) than the model reads of a post (``warn_overfull``: more than ``limit``),
    read from their first ones alone: a kind it embeds only to link posts reads a post's first picture alone
    (``None``: of none, as training, which warns once of every split it reads, ``warn_overfull_splits``).
    Every evaluation (``refuse_unevaluable``), ``faim calibrate`` and training go through it.

    Raises:
        PostError: Of kind ``text_encoding``, naming the post's origin (its file and row), its id and the field.
        ValueError: Naming the post whose id is missing, or a field of the wrong type, by its origin; naming
            ``name``, how many posts name a picture that is not there, and the first ``SHOWN``.
    """
    normalise_posts(posts)
    check_texts(posts, kinds, limit)
    refuse_missing_pictures(posts, kinds, limit, name)
    if fused is not None:
        warn_overfull(*overfull(posts, fused, limit), limit, fused, name)


def refuse_unevaluable(
    posts: Sequence[Post],
    tasks: Sequence[str],
    kinds: Collection[str],
    limit: int,
    name: str,
    remedy: Remedy = MAP_LABELS,
    *,
    fused: Collection[str] | None,
) -> None:
    """Refuse ``posts`` (of ``name``) an evaluation of a model with ``tasks`` (names), reading ``kinds`` (at most
    ``limit`` elements of each; ``fused`` those its fusion reads), could not finish, before the model reads any: first
    where none carries a label for any task (``check_labelled``, ending in ``remedy``), then a post it would stop at
    part way (``refuse_unreadable``, which warns of those holding more than it reads of ``fused``, unless
    ``None``).
    ``faim.eval.evaluate.evaluate`` and a recipe's split as ``faim.training.run.evaluated_posts`` reads it go through
    it.

    Raises:
        ValueError: Naming ``name`` and the tasks where no post carries a label, or how many posts name a picture the
            model reads that is not there, and the first ``SHOWN``.
        PostError: Of kind ``text_encoding``, naming the first post whose text or a comment the model reads is not
            text.
    """
    check_labelled(posts, tasks, name, remedy)
    refuse_unreadable(posts, kinds, limit, name, fused=fused)


def unread_columns(spec: Any, columns: ColumnMap) -> list[str] | None:
    """The columns of the inputs ``spec`` stands for (``faim.data.sources.input_columns``) that ``columns`` does not
    read; ``None`` where they cannot be read."""
    try:
        available = input_columns(spec)
        reading = input_reading(find_inputs(spec), columns)
    except (OSError, ValueError):
        return None
    return reading.unread(available)


def label_column_hint(task: str, unread: Sequence[str], columns: dict[str, Any] | None) -> str:
    """What a note of ``task``, none of whose posts read from a file carries a label, adds on how to read its labels:
    from a column of the task's name among the file's columns no mapping reads (``unread``), with ``--map
    labels.TASK=TASK`` or, where the mapping ``columns`` reads columns named as their tasks (``--map
    labels=COLUMN,...``), by adding it there; else from a column to map, naming those no mapping reads."""
    if task in unread:
        listed = isinstance((columns or {}).get("labels"), list)
        how = f"by adding it to --map labels=...,{task}" if listed else f"with --map labels.{task}={task}"
        return f"; read its labels from column {task!r} {how}"
    named = f" (columns of the data no mapping reads: {', '.join(unread)})" if unread else ""
    return f"; map its labels' column with --map labels.{task}=COLUMN{named}"


def labels_remedy(
    unread: Callable[[], Sequence[str] | None], columns: dict[str, Any] | None, tasks: Sequence[str]
) -> str:
    """What to do about a file none of whose posts carries a label for ``tasks``, as ``check_labelled`` ends its error:
    ``MAP_LABELS``, after reading the columns named as tasks (``--map labels=scam,severity``) where its mapping leaves
    any unread (``unread`` gives those: ``unread_columns``); saying first, where the mapping ``columns`` maps a column
    to a task's labels, that no post kept (those holding nothing the model reads are left out) holds one there."""
    mapped = [
        f"labels.{task}={column}" for task, column in ColumnMap.from_recipe(columns).labels.items() if task in tasks
    ]
    held = ""
    if mapped:
        which = "the column mapped to its labels" if len(mapped) == 1 else "the columns mapped to their labels"
        held = f"no post kept holds one in {which} ({', '.join(mapped)}): "
    if not (named := [task for task in tasks if task in (unread() or [])]):
        return held + MAP_LABELS
    return f"{held}read its columns named as tasks with --map labels={','.join(named)}, or {MAP_LABELS}"


def warn_source_split(
    source: Any, split: str, posts: Sequence[Post], kinds: Sequence[str], remedy: str = RECIPE_KIND
) -> None:
    """``warn_unheld_kinds`` of a source's ``split``, named as the source describes it, with the columns of its file
    no mapping reads where the source reads files by a mapping (``faim.data.tabular.FileSource``)."""
    columns = None
    if isinstance(source, FileSource):
        columns = partial(unread_columns, source.location(split), source.columns)
    warn_unheld_kinds(posts, kinds, source.describe(split), remedy, columns)


def warn_source_splits(source: Any, splits: dict[str, Sequence[Post]], kinds: Sequence[str]) -> None:
    """``warn_source_split`` of each of a recipe's ``splits`` (name → posts), before a model trains on them."""
    for split, posts in splits.items():
        warn_source_split(source, split, posts, kinds)


def given_ids(posts: Sequence[Post]) -> list[str]:
    """The ids of ``posts``, a split read by a mapping (``faim.data.tabular.FileSource``), that its files give: all
    but those that are a post's place among them, the id a post without one takes (``faim.data.post.post_id``), which
    would be shared by every split of posts without ids (a file whose ids are its rows' places names no post by them
    either)."""
    return [post.id for place, post in enumerate(posts) if post.id != str(place)]


def warn_shared_ids(source: Any, splits: dict[str, Sequence[Post]]) -> None:
    """Warn, before a model trains on a recipe's ``splits`` (name → posts, ``train`` first), of ids their files give
    (``given_ids``) to more than one post: once for each split repeating an id, and once for each other split whose
    posts share ids with the training posts (a post trained on, then measured), naming the split files (as ``source``
    describes them), how many ids and the first ``SHOWN_IDS``; first, of each other split reading a training file
    (``training_files``), whose ids are not compared where it reads training files alone. Only a source reading files
    by a mapping (``faim.data.tabular.FileSource``) has its ids looked at: another's ids are its own, not given by a
    file (those of ``concat`` and ``without`` are their members'); the files of one listing them (``split_inputs``:
    ``concat``, ``without``) are."""
    training_only = training_files(source, splits) if hasattr(source, "split_inputs") else set()
    if not isinstance(source, FileSource):
        return
    given = {split: given_ids(posts) for split, posts in splits.items() if split not in training_only}
    for split, ids in given.items():
        repeated = [ident for ident, count in Counter(ids).items() if count > 1]
        if repeated:
            said = f"{plural(len(repeated), 'id')} given to more than one post"
            warn_ids(f"{source.describe(split)}: {said}", repeated, "give each post an id of its own")
    training_ids = set(given["train"])
    for split, ids in given.items():
        shared = list(dict.fromkeys(ident for ident in ids if ident in training_ids)) if split != "train" else []
        if shared:
            said = f"{plural(len(shared), 'id')} its posts share with the training posts of {source.describe('train')}"
            remedy = f"where they are the same posts, the {split} split measures posts the model was trained on"
            warn_ids(f"{source.describe(split)}: {said}", shared, remedy)


def training_files(source: Any, splits: Collection[str]) -> set[str]:
    """The splits of ``splits`` (other than ``train``) of ``source``, a source listing the files it reads a split from
    (``split_inputs``: ``faim.data.tabular.FileSource``, ``concat``, ``without``), reading only files the training split
    reads, each warned of, as is one reading some of them: naming the split's files (as ``source`` describes them), how
    many of the training files it reads (the same file however named: ``./a.jsonl``, through a link) and the first
    ``SHOWN_IDS`` (``warn_ids``). Their posts are training posts, whose ids are not compared again
    (``warn_shared_ids``), whether they are the posts' places or not."""
    training = {file.resolve(): file for file in source.split_inputs("train")}
    only_training = set()
    for split in splits:
        files = [file.resolve() for file in source.split_inputs(split)] if split != "train" else []
        if read := [str(training[file]) for file in files if file in training]:
            said = f"{source.describe(split)}: reads {plural(len(read), 'file')} of the training split"
            warn_ids(said, read, f"the {split} split measures posts the model was trained on")
            if len(read) == len(files):
                only_training.add(split)
    return only_training


def warn_ids(problem: str, ids: Sequence[str], remedy: str) -> None:
    """Warn of ``problem``, naming the first ``SHOWN_IDS`` of ``ids``, then ``remedy``."""
    shown = ", ".join(map(repr, ids[:SHOWN_IDS])) + (", ..." if len(ids) > SHOWN_IDS else "")
    warn(f"{problem}: {shown}; {remedy}")

"""Turn a shard's raw rows into posts, or into one recorded error per row that cannot be a post."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from faim.data.columns import ColumnMap, cell_text
from faim.data.elements import PostError, nothing_read, overfull, reads_nothing, warn_overfull
from faim.data.post import ADDED_META, Post, post_name, shortest_text_first
from faim.data.tabular import jsonl_object, jsonl_text, parse_number, row_name, utf8
from faim.data.unheld import MAP_KIND, MAP_META, unheld_kinds, warn_unheld, warn_unread_meta
from faim.decisions import Task, nonfinite_scores, nonfinite_tasks
from faim.scoring.inputs import Shard, own_shards
from faim.scoring.report import Held
from faim.wording import plural


@dataclass
class RowError:
    """A row that yields no scores: where it is, what kind of problem, and the message."""

    source: str
    post_id: str | None
    kind: str
    message: str

    @classmethod
    def of(cls, error: PostError) -> RowError:
        """The row error of a post that could not be read."""
        return cls(error.origin, error.post_id, error.kind, str(error))


Read = TypeVar("Read")


def readable_batches(
    numbered: list[tuple[int, Post]],
    batch_size: int,
    read: Callable[[list[Post]], tuple[Read, Sequence[PostError]]],
    errors: list[RowError],
    scored: list[tuple[int, Post]],
) -> Iterator[Read]:
    """A shard's posts (``shard_posts``), shortest text first so a batch pads little, read ``batch_size`` at a time
    by ``read`` (posts → what is scored of them, and the errors of those it could not read): each failed post becomes
    its row's error in ``errors``, the others go to ``scored`` in batch order, and what ``read`` gave is yielded for
    every batch that kept a post."""
    numbered[:] = [numbered[index] for index in shortest_text_first([post for _, post in numbered])]
    for start in range(0, len(numbered), batch_size):
        chunk = numbered[start : start + batch_size]
        batch, failed = read([post for _, post in chunk])
        errors.extend(RowError.of(error) for error in failed)
        lost = {error.origin for error in failed}
        kept = [(number, post) for number, post in chunk if post.origin not in lost]
        scored.extend(kept)
        if kept:
            yield batch


NONFINITE_EMBEDDING = "the model's embedding of the post is not finite (NaN or infinite)"
"""What is said of a post whose whole-post embedding, written where no score is, is not finite."""


def set_aside_nonfinite(
    scored: list[tuple[int, Post]],
    tasks: Sequence[Task],
    logits: Mapping[str, np.ndarray],
    errors: list[RowError],
    embeddings: np.ndarray | None = None,
) -> list[int]:
    """The rows of ``logits`` (task → the raw logits of the posts ``scored``, in its order; the scores of ``tasks``
    are written) and of ``embeddings`` (``[N, D]``, where they are written) of the posts whose logits and embedding
    are all finite, for the caller to keep; each other post (``nonfinite_tasks``) leaves ``scored`` and becomes its
    row's error in ``errors``, of kind ``scores``, naming it and the tasks whose logits are not finite (or saying its
    embedding is not, where its logits are or none is written)."""
    found = {row: nonfinite_scores(names) for row, names in nonfinite_tasks(tasks, logits).items()}
    if embeddings is not None:
        for row in np.flatnonzero(~np.isfinite(embeddings).all(axis=1)):
            found.setdefault(int(row), NONFINITE_EMBEDDING)
    for row, problem in sorted(found.items()):
        post = scored[row][1]
        errors.append(RowError(post.origin, post.id, "scores", f"{post_name(post.origin, post.id)}: {problem}"))
    kept = [row for row in range(len(scored)) if row not in found]
    scored[:] = [scored[row] for row in kept]
    return kept


def decode_cells(
    row: dict[str, Any], columns: ColumnMap, numeric: set[str], wanted: set[str], origin: str
) -> dict[str, Any]:
    """The CSV cells of the ``wanted`` columns from bytes to str (numbers for label/meta columns), as ``faim eval``
    reads them: a column no mapping reads is not decoded.

    Raises:
        ValueError: ``text_encoding:`` naming the row as reading the file's posts names it (``origin``, its line,
            and its id cell: ``faim.data.tabular.row_name``), the fields the mapping ``columns`` reads the cell that
            is not UTF-8 into and its column, as ``faim.data.tabular.csv_rows`` does (``dump.csv:3 (post id='7')
            field 'text' (column 'body'): not UTF-8 text (byte 4 of the cell)``, ``cell_text``).
    """
    out = {}
    for column, cell in row.items():
        if column not in wanted:
            continue
        try:
            value = cell_text(cell) if isinstance(cell, bytes) else cell
        except ValueError as error:
            ident = row.get(columns.id)
            where = row_name(origin, ident.decode("utf-8", "surrogateescape") if isinstance(ident, bytes) else ident)
            raise ValueError(f"text_encoding: {where} {columns.cell_name(column)}: {error}") from None
        out[column] = parse_number(value) if column in numeric and value is not None else value
    return out


def parse_row(
    shard: Shard, payload: Any, columns: ColumnMap, numeric: set[str], wanted: set[str], source: str
) -> dict[str, Any]:
    """A raw row as a dict of column → value (of a CSV, the ``wanted`` columns', read with the mapping ``columns``:
    ``decode_cells``).

    Raises:
        ValueError: Tagged with its kind (``text_encoding: ``, ``json: ``), naming the row as reading the file's
            posts names it, then the problem: a JSON Lines line by its ``source`` (``dump.jsonl:2: not UTF-8 text
            (byte 14 of the line)``), a CSV row as ``decode_cells`` does.
    """
    if shard.format == "jsonl":
        try:
            text = jsonl_text(payload)
        except ValueError as error:
            raise ValueError(f"text_encoding: {source}: {error}") from None
        try:
            return jsonl_object(text)
        except ValueError as error:
            raise ValueError(f"json: {source}: {error}") from None
    if shard.text_cells:
        return decode_cells(payload, columns, numeric, wanted, source)
    return payload


JSON_PAIRS = json.JSONDecoder(object_pairs_hook=tuple)
"""The decoder of a JSON Lines line giving each object as the tuple of its key-value pairs, a key given twice kept
twice (where ``faim.data.tabular.JSON_OBJECTS`` refuses it), an array as a list."""


def readable_id(shard: Shard, payload: Any, columns: ColumnMap, number: int) -> str | None:
    """The id a row that is not a post would have had as one (``ColumnMap.post_id``: its id cell, or its row number
    where it has none), read past bytes that are not UTF-8 elsewhere in it, and of JSON Lines past a key other than
    the id's given twice (``id_cell``); ``None`` where the row holds no JSON object, or one giving the id's key twice,
    whose id cannot be told, or its id is not UTF-8 or of a type no id is (``faim.data.post.id_text``)."""
    row = payload
    if shard.format == "jsonl":
        try:
            pairs = JSON_PAIRS.decode(payload.decode("utf-8", "surrogateescape"))
        except ValueError:  # not JSON (JSONDecodeError is a ValueError)
            return None
        if not isinstance(pairs, tuple) or (row := id_cell(pairs, columns.id)) is None:
            return None
    elif shard.text_cells:
        try:
            row = decode_cells(payload, columns, set(), {columns.id}, f"{shard.name}:{number}")
        except ValueError:
            return None
    try:
        ident = columns.post_id(row, number)
    except ValueError:  # an id cell holding what no id is (a list, a boolean): the row's error says so
        return None
    return ident if utf8(ident) else None


def id_cell(pairs: tuple[tuple[str, Any], ...], column: str | None) -> dict[str, Any] | None:
    """The row of a JSON object's key-value ``pairs`` (``JSON_PAIRS``) as far as its id is read from it: the pair of
    the key ``column``, none where it is not given; ``None`` where it is given twice, whose id cannot be told."""
    given = [(key, value) for key, value in pairs if key == column]
    return None if len(given) > 1 else dict(given)


def unsplit_row_id(shard: Shard, columns: ColumnMap, number: int) -> str | None:
    """The id of a row the reader could not split into cells (``csv_row``) or read (``row_group``): its row number where
    the file has no id column, as a scored row without one takes; ``None`` where it has one (the row's id cell cannot
    be told apart, or read)."""
    return None if shard.header is None or columns.id in shard.header else str(number)


@dataclass
class ShardRows:
    """A shard's rows read (``shard_posts``): every row in exactly one of ``posts`` and ``errors``.

    Attributes:
        posts: The posts, with their row numbers.
        errors: The rows that are not posts.
        columns: The columns the shard's rows hold, in the order first met: the file's header, or of JSON Lines, the
            keys of the objects of its lines.
    """

    posts: list[tuple[int, Post]]
    errors: list[RowError]
    columns: list[str]

    def held(self, kinds: Sequence[str], mapping: ColumnMap, limit: int = 0, fused: Sequence[str] = ()) -> Held:
        """What the rows hold (``Held``): the kinds of ``kinds`` no post holds (``unheld_kinds``), the columns
        ``mapping`` does not read, and, where ``limit`` (the model's ``max_elements``) is given, the posts holding more
        pictures or comments of ``fused`` (the kinds the model's fusion reads; not a picture linking posts, of which
        it reads a post's first alone) than it (``overfull``)."""
        posts = [post for _, post in self.posts]
        unheld, unread = tuple(unheld_kinds(posts, kinds)), tuple(mapping.unread(self.columns))
        counts = overfull(posts, fused, limit) if limit else (0, 0)
        return Held(len(posts), unheld, unread, *counts, limit)


def shard_posts(shard: Shard, columns: ColumnMap, image_root: Path | None, kinds: Sequence[str]) -> ShardRows:
    """Posts (with their row numbers) and row errors of a shard; every row lands in exactly one list. ``kinds``: the
    element kinds the model reads. A row without an id takes its row number (as ``source`` gives it) as its id, an
    error row too (``readable_id``).

    A wrong schema (a mapped column missing from the file; of JSON Lines, from every object of the file) is an
    error on every row of the shard; a post with no text, no image and no comment is an ``empty`` error (nothing to
    score): one without an element of any kind the model reads.
    """
    errors = [
        row_error(shard, number, unsplit_row_id(shard, columns, number), kind, message)
        for number, kind, message in shard.errors
    ]
    header = shard.header
    columns = columns.reading(shard.text_cells)
    jsonl = shard.format == "jsonl"
    seen: dict[str, None] = {} if jsonl else dict.fromkeys(header or [])  # the columns met, in the file's order
    problem = columns.mismatch(header) if header is not None else None
    if problem is not None:
        errors += [
            row_error(shard, number, readable_id(shard, payload, columns, number), "schema", problem)
            for number, payload in shard.rows
        ]
        return ShardRows([], errors, list(seen))
    numeric = set(columns.labels.values()) | set(columns.meta.values())
    wanted = set(columns.wanted(header)) if header is not None else set()
    posts = []
    root = image_root if image_root is not None else Path(shard.file).parent
    for number, payload in shard.rows:
        source = f"{shard.name}:{number}"
        try:
            row = parse_row(shard, payload, columns, numeric, wanted, source)
            if jsonl and not seen.keys() >= row.keys():  # a row of keys met already adds none (most rows)
                seen.update(dict.fromkeys(row))
            post = columns.to_post(row, number, source, root, shard.text_cells)
        except ValueError as error:
            kind, _, message = str(error).partition(": ") if _tagged(error) else ("row", "", str(error))
            errors.append(RowError(source, readable_id(shard, payload, columns, number), kind, message))
            continue
        if reads_nothing(post, kinds):
            fields = row if jsonl else header  # a JSON object's keys, or the file's columns
            errors.append(RowError.of(PostError(post, kinds, empty_row_error(kinds, columns, list(fields)), "empty")))
            continue
        posts.append((number, post))
    return ShardRows(posts, errors, list(seen))


def row_error(shard: Shard, number: int, post_id: str | None, kind: str, problem: str) -> RowError:
    """The error of the row ``number`` of ``shard`` that is no post for what the whole row is (cells that are not CSV,
    columns the mapping does not find), its message naming the row as every row error's does: by file and line, and
    the id ``post_id`` it would have had as a post where that is readable (``post_name``: ``dump.csv:5 (post
    id='5'): expected 2 cells (id, text), got 3: ...``)."""
    source = f"{shard.name}:{number}"
    return RowError(source, post_id, kind, f"{post_name(source, post_id)}: {problem}")


def empty_row_error(kinds: Sequence[str], bound: ColumnMap, fields: list[str]) -> str:
    """The error of a row holding nothing of ``kinds`` (the kinds the model reads) whose ``fields`` are the row's:
    a kind whose column (in ``bound``; of metadata, one faim does not give posts itself, ``ADDED_META``) is among them
    is said to be empty; where none is, the row's fields are named,
    one of which may be what a mapping (``--map FIELD=COLUMN``) should read."""
    columns = {
        "text": [bound.text],
        "image": bound.image_columns,
        "comments": [bound.comments],
        "meta": [column for name, column in bound.meta.items() if name not in ADDED_META],
    }
    blank = [kind for kind in kinds if any(column in fields for column in columns[kind])]
    if blank:
        return nothing_read(kinds, blank)
    named = ", ".join(map(str, fields)) or "none"
    return f"{nothing_read(kinds)}; the row's fields: {named} (map one with --map FIELD=COLUMN)"


def _tagged(error: ValueError) -> bool:
    return str(error).split(": ", 1)[0] in ("text_encoding", "json")


SCORE_KIND = MAP_KIND + " (columns: {{{field}: COLUMN}} in Python)"
"""What to do about a dump none of whose rows holds a kind the model reads."""

FIRST_KIND = (
    "later rows may hold them (once every row is scored, the run warns again if none does); if none does, " + SCORE_KIND
)
"""What to do about a dump none of whose first shard's rows holds a kind the model reads, where more rows follow."""

FIRST_SHARDS = 8
"""How many of a dump's first shards ``warn_unheld_at_first`` reads, at most, for one holding a post: enough to pass
a first file or shard of rows that are no post (lines that are not JSON, rows holding nothing the model reads), few
enough that a dump no row of which is a post (as where the mapping names no column its rows hold: every row
``empty``) is not read whole before its first shard is scored, for no warning."""


def warn_unheld_at_first(
    files: list[Path],
    shard_rows: int,
    mapping: ColumnMap,
    image_root: str | None,
    kinds: Sequence[str],
    names: Sequence[str] | None = None,
    meta_fields: Sequence[str] = (),
) -> None:
    """Warn of each kind a model reads (``kinds``) that no post of a dump's first shard holding a post holds
    (``warn_unheld``: as where the column holding it is not mapped), naming the columns of the shard no mapping
    (``mapping``) reads: said before the dump is scored, where the rows' scores alone would not tell, for the price of
    reading the rows before that shard, which hold no post (rows that are not JSON, or that hold nothing the model
    reads, say nothing of what posts hold), the shard, and the next. It names the rows it read, which later rows may
    hold the kind (``warn_unheld_in_run`` says, once they are scored). Nothing is said where none of the first
    ``FIRST_SHARDS`` shards holds a post, nor where no shard follows the one that does (the end of the run says it of
    the same posts). The shard is named by its file's name in ``names`` (``None``: as the file is given), as its rows'
    ``source`` names it. Where its posts hold metadata but none of the ``Post.meta`` fields the model reads
    (``meta_fields``), that is warned of too (``warn_unread_meta``), the end of the run not saying it, a shard following
    or not."""
    shards = own_shards(files, shard_rows, names, mapping)
    first = _first_posts(islice(shards, FIRST_SHARDS), mapping, Path(image_root) if image_root else None, kinds)
    if first is None:
        return
    shard, rows = first
    more = next(shards, None) is not None
    if more:  # else the end of the run says it of the same posts
        held = rows.held(kinds, mapping.reading(shard.text_cells))
        warn_unheld(held.unheld, _shard_name(shard), FIRST_KIND, lambda: held.unread)
    remedy = f"later rows may hold them; if none does, {MAP_META}" if more else MAP_META
    warn_unread_meta([post for _, post in rows.posts], meta_fields, _shard_name(shard), remedy)


def _first_posts(
    shards: Iterator[Shard], mapping: ColumnMap, image_root: Path | None, kinds: Sequence[str]
) -> tuple[Shard, ShardRows] | None:
    """The first of ``shards`` holding a post (``shard_posts``, read with ``mapping``, ``image_root`` and ``kinds``),
    with its rows, read as far as it; ``None`` where none does."""
    for shard in shards:
        rows = shard_posts(shard, mapping, image_root, kinds)
        if rows.posts:
            return shard, rows
    return None


def _shard_name(shard: Shard) -> str:
    """A shard as a warning names its rows, read before the dump is scored: ``FILE (its first N rows, ...)``, or of
    a shard after a file's first, from its first row's number."""
    if shard.key.endswith("-000000"):
        rows = f"its first {plural(shard.size, 'row')}"
    else:
        rows = f"its {plural(shard.size, 'row')} from row {min(number for number, *_ in [*shard.rows, *shard.errors])}"
    return f"{shard.name} ({rows}, read before scoring)"


def warn_unheld_in_run(held: Held | None, source: str | Path, rows: int) -> None:
    """Warn of each kind the model reads that no row of a run (of ``source``, ``rows`` rows) holds (``warn_unheld``),
    naming the columns of its rows no mapping reads, from what each shard's scorer reported (``held``, of every shard:
    ``Held.of_all``); nothing is said of a run holding no post, nor where that is not known of every shard (``None``:
    a shard recorded by a faim that did not record it)."""
    if held is not None and held.posts:
        warn_unheld(held.unheld, f"{source} (its {plural(rows, 'row')}, scored)", SCORE_KIND, lambda: held.unread)


def warn_overfull_in_run(held: Held | None, source: str | Path, rows: int, fused: Sequence[str]) -> None:
    """Warn of the posts of a run (of ``source``, ``rows`` rows) holding more pictures or comments of ``fused`` (the
    kinds the model's fusion reads) than the model reads of a post (``warn_overfull``), scored from their first ones
    alone, as each shard's scorer counted them (``held``, of every shard: ``Held.of_all``); nothing is said where none
    does, nor where that is not known of every shard (``None``)."""
    if held is not None:
        name = f"{source} (its {plural(rows, 'row')}, scored)"
        warn_overfull(held.overfull, held.most, held.limit, fused, name)

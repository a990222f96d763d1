"""Metrics per slice of the data (language, source, has-image, …) from a post's ``meta``."""

from __future__ import annotations

import difflib
import json
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Set

import numpy as np

from faim.data.post import LANGUAGE, is_missing
from faim.wording import plural

MetricFn = Callable[[np.ndarray, np.ndarray], Mapping[str, float]]

MISSING = "(missing)"
"""How the slice of posts without a value for the slice field (``is_missing``: absent, ``None``, NaN, empty) is
shown, told apart from any value a post may hold, such as the text ``"None"`` or ``"(missing)"`` itself
(``slice_label``)."""

MIN_SIZE = 30
"""Smallest slice whose metrics ``slice_metrics`` computes by default: a smaller one reports its size alone."""


def slice_metrics(
    y_true: np.ndarray,
    prob: np.ndarray,
    slices: np.ndarray,
    metric_fn: MetricFn,
    min_size: int = MIN_SIZE,
) -> dict[str, dict[str, float]]:
    """Apply ``metric_fn`` to each slice of the sample.

    Every slice reports ``n``; slices with fewer than ``min_size`` rows report only ``n``, since their
    metrics would be noise. A slice with a single class still runs ``metric_fn``: the metric functions
    of :mod:`faim.eval.metrics` return NaN for what it cannot define.

    Args:
        y_true: labels, any shape ``[N, ...]`` ``metric_fn`` accepts.
        prob: scores ``[N, ...]`` matching ``y_true``.
        slices: one slice value per row ``[N]``; values are compared as strings, the missing ones (``None``, NaN)
            apart from every string (``slice_key``), and reported by ``slice_label`` (the missing ones as
            ``MISSING``).
        metric_fn: ``(y_true, prob) -> metrics``, e.g.
            ``functools.partial(binary_metrics, threshold=t)``.
        min_size: smallest slice whose metrics are computed.

    Returns:
        ``{slice label: {"n": rows, **metrics}}``, in sorted order of slice label.

    Raises:
        ValueError: if ``y_true``, ``prob`` and ``slices`` differ in length, or ``min_size < 1``.
    """
    y, p = np.asarray(y_true), np.asarray(prob)
    values = np.asarray(slices, dtype=object)
    if values.ndim != 1 or not len(values) == len(y) == len(p):
        raise ValueError(
            f"slices must be 1-D with one value per row, got {values.shape} for {plural(len(y), 'row')} and prob of "
            f"length {len(p)}"
        )
    if min_size < 1:
        raise ValueError(f"min_size must be at least 1, got {min_size}")
    groups = slice_rows(values)
    result: dict[str, dict[str, float]] = {}
    for key in sorted(groups, key=slice_label):
        rows = np.asarray(groups[key])
        n = len(rows)
        result[slice_label(key)] = {"n": n} if n < min_size else {**metric_fn(y[rows], p[rows]), "n": n}
    return result


def slice_rows(values: Iterable[object]) -> dict[str | None, list[int]]:
    """Each slice (``slice_key``: ``None`` for the values that are missing) to the indices of the rows of ``values``
    in it, in row order, found in one pass over the rows."""
    groups: dict[str | None, list[int]] = {}
    for index, value in enumerate(values):
        groups.setdefault(slice_key(value), []).append(index)
    return groups


def slice_key(value: object) -> str | None:
    """The slice a post's value of the slice field puts it in: ``None`` where it has none (``is_missing``: absent,
    null, NaN, an empty text, as an empty cell reads, or a text of spaces alone), else the value as text, composed
    (NFC) and without the spaces around it: ``Côte d'Ivoire`` is one slice whether a post writes its ``ô`` as one
    letter or as ``o`` and a mark after it (NFD), and ``sport`` one with the ``sport `` a spreadsheet cell may hold,
    which would otherwise show as two rows reading alike."""
    return None if is_missing(value) else unicodedata.normalize("NFC", str(value)).strip() or None


def slice_label(key: str | None) -> str:
    """How the slice ``key`` (``slice_key``'s) is shown: ``MISSING`` for the posts without a value; a value as it
    is, or quoted as JSON where it would read as ``MISSING`` or as a quoted value itself, so that no two slices are
    shown alike."""
    if key is None:
        return MISSING
    return json.dumps(key, ensure_ascii=False) if key == MISSING or key.startswith('"') else key


def slice_name(value: object) -> str:
    """How the slice a post's value of the slice field puts it in is shown (``slice_label`` of its ``slice_key``)."""
    return slice_label(slice_key(value))


def slice_problem(field: str, metas: Iterable[Mapping[str, object]], filled: Set[str] = frozenset()) -> str | None:
    """What keeps a report from slicing by the meta field ``field``: that no post (``metas``: each post's meta) has
    it, naming the fields they carry (with ``filled``, those evaluation gives each post itself); ``None`` where some
    post has it."""
    metas = list(metas)
    if field in filled or any(field in meta for meta in metas):
        return None
    carried = ", ".join(sorted({name for meta in metas for name in meta} | filled)) or "none"
    return f"no post has the meta field {field!r} (fields they carry: {carried})"


def without_meta(field: str) -> str | None:
    """For a slice field named as ``--map`` names a meta field (``meta.topic``), which no post carries so, a note to
    name it as they do, without ``meta.``; ``None`` for another."""
    named = field.removeprefix("meta.")
    return f"name the field without meta. ({named})" if named and named != field else None


def carried_name(field: str, metas: Iterable[Mapping[str, object]]) -> str | None:
    """The meta field the posts (``metas``: each post's meta) carry that the slice field ``field``, which none has,
    stands for: ``field`` without ``meta.`` (``meta.topic``, named as ``--map`` names it) where they carry that, else
    the field closest to it so named (``close_field``: ``topic`` of ``Topic`` and ``meta.Topic``); ``lang`` among
    them, which evaluation gives every post where it slices by it. ``None`` where none is close."""
    metas = list(metas)
    named = field.removeprefix("meta.") or field
    if slice_problem(named, metas, {LANGUAGE}) is None:
        return named
    return close_field(named, metas, {LANGUAGE})


def slice_hint(field: str, metas: Iterable[Mapping[str, object]]) -> str | None:
    """How to name the slice field ``field``, which no post (``metas``: each post's meta) has, as the posts carry it
    (``carried_name``): without ``meta.`` (``without_meta``), or as the field close to it; ``None`` where none is."""
    name = carried_name(field, metas)
    if name is None:
        return None
    return (name == field.removeprefix("meta.") and without_meta(field)) or f"name it {name!r}, as the posts carry it"


def close_field(field: str, metas: Iterable[Mapping[str, object]], filled: Set[str] = frozenset()) -> str | None:
    """The meta field the posts (``metas``: each post's meta, and ``filled``, those evaluation gives each post
    itself) carry that ``field``, which none has, is closest to, as a slip of a name is (``Topic`` or ``topics``
    beside ``topic``): one that differs from it in case alone, else the closest by ``difflib``'s ratio, at least 0.6;
    ``None`` where none is close."""
    carried = sorted({name for meta in metas for name in meta} | filled)
    close = [name for name in carried if name.casefold() == field.casefold()]
    close = close or difflib.get_close_matches(field, carried, n=1, cutoff=0.6)
    return close[0] if close else None

"""Metrics per slice of the data (language, source, has-image, …) from a post's ``meta``."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from faim.data.post import is_missing

MetricFn = Callable[[np.ndarray, np.ndarray], Mapping[str, float]]

MISSING = "(missing)"
"""The slice of posts without a value for the slice field (``is_missing``: absent, ``None``, NaN, empty), told
apart from any value a post may hold, such as the text ``"None"``."""

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
        slices: one slice value per row ``[N]``; values are compared and reported as strings (``slice_name``: a
            missing one, ``None`` or NaN, as ``MISSING``).
        metric_fn: ``(y_true, prob) -> metrics``, e.g.
            ``functools.partial(binary_metrics, threshold=t)``.
        min_size: smallest slice whose metrics are computed.

    Returns:
        ``{slice value: {"n": rows, **metrics}}``, in sorted order of slice value.

    Raises:
        ValueError: if ``y_true``, ``prob`` and ``slices`` differ in length, or ``min_size < 1``.
    """
    y, p = np.asarray(y_true), np.asarray(prob)
    values = np.asarray(slices, dtype=object)
    keys = np.array([slice_name(value) for value in values.ravel()], dtype=str).reshape(values.shape)
    if keys.ndim != 1 or not len(keys) == len(y) == len(p):
        raise ValueError(
            f"slices must be 1-D with one value per row, got {keys.shape} for {len(y)} rows and prob of length {len(p)}"
        )
    if min_size < 1:
        raise ValueError(f"min_size must be at least 1, got {min_size}")
    result: dict[str, dict[str, float]] = {}
    for value in np.unique(keys):
        rows = keys == value
        n = int(rows.sum())
        result[str(value)] = {"n": n} if n < min_size else {**metric_fn(y[rows], p[rows]), "n": n}
    return result


def slice_name(value: object) -> str:
    """The slice a post's value of the slice field puts it in: ``MISSING`` where it has none (``is_missing``: absent,
    null, NaN, an empty text, as an empty cell reads), else the value as text."""
    if is_missing(value):
        return MISSING
    return str(value)

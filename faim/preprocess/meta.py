"""Numeric ``Post.meta`` fields (counts, scores) as a row of features.

Each field becomes ``log1p(max(value, 0))``; with ``shares`` the fields' shares of their sum are added (for
counts that make up a whole, such as a speaker's history of verdicts) and ``log1p`` of the sum. A missing field
(absent, or null: ``None``, NaN or pandas' ``NA``, ``faim.data.post.is_null``) counts as 0 and sets its own
missing-indicator feature; a number is Python's or numpy's (not a bool) or a ``Decimal`` (a Parquet decimal column's,
read as a float), and an infinite one (or an integer too large for a float) is refused.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import numpy as np

from faim.data.post import is_null


class MetaRows:
    """Turn a list of ``Post.meta`` mappings into ``[N, num_features]`` float32 features (picklable).

    ``check`` (called per post by the collator, which names the post) raises ``ValueError`` when a listed
    field holds something that is not a number, or an infinite one.

    Raises:
        ValueError: Naming ``fields`` when it is not a list (or tuple) of ``Post.meta`` keys (``"likes"``, whose
            letters would be read as keys, or ``[1]``).
    """

    def __init__(self, fields: list[str], shares: bool) -> None:
        if not isinstance(fields, (list, tuple)) or not all(isinstance(field, str) for field in fields):
            raise ValueError(f"fields {fields!r} is not a list of Post.meta keys")
        self.fields = list(fields)
        self.shares = shares

    @property
    def num_features(self) -> int:
        return 2 * len(self.fields) + (len(self.fields) + 1 if self.shares else 0)

    def check(self, meta: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the first listed field that is neither a number (Python's or numpy's, not a
        bool) nor missing, or is an infinite one (or an integer too large for a float), or, where the shares of their
        sum are read, fields summing beyond what a float holds."""
        self.numbers(meta)

    def numbers(self, meta: Mapping[str, Any]) -> list[float | None]:
        """Each listed field of ``meta`` as a float, ``None`` where it is missing (absent or null: ``is_null``), each
        read once.

        Raises:
            ValueError: As ``check``.
        """
        numbers_read = []
        for name in self.fields:
            value = meta.get(name)
            if is_null(value):  # a Decimal's NaN too, quiet or signalling
                numbers_read.append(None)
                continue
            # an int or a float told at once: the abstract-class check takes ten times as long; a Decimal is a Parquet
            # decimal column's (warehouses export counts so)
            if type(value) not in (int, float, Decimal) and (
                isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal))
            ):
                raise ValueError(f"meta field {name!r} must be a number or missing, got {value!r}")
            number = finite_float(value)
            if math.isinf(number):
                missing = "absent, None, NaN or NA"
                raise ValueError(f"meta field {name!r} must be finite (or missing: {missing}), got {value!r}")
            numbers_read.append(number)
        if self.shares and not math.isfinite(sum(max(number, 0.0) for number in numbers_read if number is not None)):
            raise ValueError(f"meta fields {', '.join(map(repr, self.fields))} sum to more than a float holds")
        return numbers_read

    def row(self, meta: Mapping[str, Any]) -> list[float]:
        numbers_read = self.numbers(meta)
        values = [0.0 if number is None else max(number, 0.0) for number in numbers_read]
        missing = [float(number is None) for number in numbers_read]
        features = [math.log1p(v) for v in values] + missing
        if self.shares:
            total = sum(values)
            features += [v / total if total else 0.0 for v in values] + [math.log1p(total)]
        return features

    def __call__(self, metas: list[Mapping[str, Any]]) -> np.ndarray:
        return np.array([self.row(meta) for meta in metas], dtype=np.float32).reshape(-1, self.num_features)


def finite_float(value: numbers.Real | Decimal) -> float:
    """``value`` as a float; an integer too large for one reads as infinity."""
    try:
        return float(value)
    except OverflowError:
        return math.inf

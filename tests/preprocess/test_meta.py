"""Numeric metadata rows: the fields read are a list of ``Post.meta`` keys."""

from __future__ import annotations

import math
from collections import Counter
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest

from faim.preprocess.meta import MetaRows


@pytest.mark.parametrize("fields", ["likes", ["likes", 1], None, {"likes": 1}])
def test_fields_that_are_not_a_list_of_keys_are_refused_as_the_rows_are_built(fields: object) -> None:
    with pytest.raises(ValueError, match=r"^fields .* is not a list of Post.meta keys$"):
        MetaRows(fields, shares=False)


def test_a_list_or_tuple_of_keys_is_read_in_order() -> None:
    assert MetaRows(("shares", "likes"), shares=False)([{"likes": 0, "shares": 1}]).shape == (1, 4)
    assert MetaRows(["likes"], shares=False).fields == ["likes"]


@pytest.mark.parametrize("shares", [False, True])
def test_a_field_null_as_pandas_gives_an_empty_cell_is_missing_as_none_is(shares: bool) -> None:
    rows = MetaRows(["likes", "shares"], shares)
    missing = rows([{"likes": 3, "shares": None}])
    for null in (float("nan"), np.float32("nan"), pd.NA, pd.NaT):
        assert np.array_equal(rows([{"likes": 3, "shares": null}]), missing)
    assert missing[0, 3] == 1  # the missing-indicator of shares


@pytest.mark.parametrize("shares", [False, True])
def test_a_decimal_field_as_a_parquet_decimal_column_gives_it_is_read_as_its_number(shares: bool) -> None:
    rows = MetaRows(["likes", "shares"], shares)
    given = rows([{"likes": Decimal("3"), "shares": Decimal("0.5")}])
    assert np.array_equal(given, rows([{"likes": 3, "shares": 0.5}]))
    for nan in (Decimal("NaN"), Decimal("sNaN")):  # missing, as NaN is, a signalling one too
        assert np.array_equal(rows([{"likes": 3, "shares": nan}]), rows([{"likes": 3}]))
    said = r"^meta field 'likes' must be finite \(or missing.*\), got Decimal\('-Infinity'\)$"  # as given, not -inf
    with pytest.raises(ValueError, match=said):
        rows.check({"likes": Decimal("-Infinity")})


class CountedMeta(dict):
    """A post's metadata counting the reads of each field (``reads``)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        super().__init__(fields)
        self.reads = Counter()

    def get(self, key: str, default: Any = None) -> Any:
        self.reads[key] += 1
        return super().get(key, default)


@pytest.mark.parametrize("shares", [False, True])
def test_each_field_is_read_once_for_a_row(shares: bool) -> None:
    meta = CountedMeta({"likes": 3, "shares": None})
    (row,) = MetaRows(["likes", "shares"], shares)([meta])
    assert meta.reads == {"likes": 1, "shares": 1}
    logs, missing, their_shares = [math.log1p(3), 0.0], [0.0, 1.0], [1.0, 0.0, math.log1p(3)]
    assert np.allclose(row, logs + missing + (their_shares if shares else []))

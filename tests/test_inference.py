"""Predictions: picking rows keeps every field of each row together."""

from __future__ import annotations

import numpy as np

from faim.inference import Predictions


def test_rows_picks_every_field_of_the_rows_asked_for_in_that_order() -> None:
    predictions = Predictions(
        ["a", "b", "c"],
        {"harm": np.array([0.1, 0.2, 0.3])},
        {"harm": np.array([0.0, 1.0, np.nan])},
        [{"n": 0}, {"n": 1}, {"n": 2}],
        np.arange(6.0).reshape(3, 2),
        np.arange(3.0).reshape(3, 1),
        np.array([True, False, True]),
    )
    picked = predictions.rows(np.array([2, 0]))
    assert picked.ids == ["c", "a"] and picked.meta == [{"n": 2}, {"n": 0}]
    assert picked.logits["harm"].tolist() == [0.3, 0.1]
    assert np.isnan(picked.targets["harm"][0]) and picked.targets["harm"][1] == 0.0
    assert picked.embeddings.tolist() == [[4.0, 5.0], [0.0, 1.0]]
    assert picked.link_embeddings.tolist() == [[2.0], [0.0]] and picked.link_present.tolist() == [True, True]


def test_rows_keeps_absent_fields_absent() -> None:
    picked = Predictions(["a"], {"harm": np.array([0.5])}, meta=[{}]).rows(np.array([0]))
    assert picked.embeddings is None and picked.link_embeddings is None and picked.link_present is None

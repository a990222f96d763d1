"""An exported encoder part's preprocessing entry is read, its settings checked, before any post is read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from faim.runtime.preprocess import part_preprocessing


def listed(setting: str, name: Any) -> Path:
    """Every file the entry names, found where it is named (no file is opened while an entry is read)."""
    return Path(name)


@pytest.mark.parametrize(
    ("spec", "wrong"),
    [
        (
            {"type": "pieces", "pieces": "p", "max_length": "512"},
            "max_length: expected a whole number of at least 1, got '512'",
        ),
        (
            {"type": "pieces", "pieces": "p", "max_length": 2.5},
            "max_length: expected a whole number of at least 1, got 2.5",
        ),
        (
            {"type": "pieces", "pieces": "p", "max_length": 0},
            "max_length: expected a whole number of at least 1, got 0",
        ),
        ({"type": "e5_pieces", "pieces": "p", "max_length": True, "prefix": ""}, "max_length: expected a whole"),
        ({"type": "e5_pieces", "pieces": "p", "max_length": 64, "prefix": 5}, "prefix: expected a string, got 5"),
        ({"type": "e5_pieces", "pieces": "p", "max_length": 64, "prefix": None}, "prefix: expected a string"),
        ({"type": "meta", "fields": "likes", "shares": False}, "fields 'likes' is not a list of Post.meta keys"),
        ({"type": "meta", "fields": ["likes", 1], "shares": False}, "fields ['likes', 1] is not a list of Post"),
        ({"type": "meta", "fields": ["likes"], "shares": "yes"}, "shares 'yes' is not true or false"),
    ],
)
def test_a_setting_of_the_wrong_type_is_refused_as_the_entry_is_read_naming_it(spec: dict, wrong: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(wrong)}"):
        part_preprocessing(spec, listed)


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "pieces", "pieces": "p", "max_length": 512},
        {"type": "e5_pieces", "pieces": "p", "max_length": 64, "prefix": "query: "},
        {"type": "meta", "fields": ["likes", "shares"], "shares": True},
    ],
)
def test_settings_of_their_types_are_read(spec: dict) -> None:
    assert callable(part_preprocessing(spec, listed))

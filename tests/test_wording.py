"""How messages word a count."""

from __future__ import annotations

from faim.wording import plural


def test_counts_read_as_words() -> None:
    assert [plural(count, "file") for count in (0, 1, 2)] == ["0 files", "1 file", "2 files"]

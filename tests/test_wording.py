"""How messages word a count."""

from __future__ import annotations

from faim.wording import plural


def test_counts_read_as_words() -> None:
    assert [plural(count, "file") for count in (0, 1, 2)] == ["0 files", "1 file", "2 files"]


def test_a_noun_ending_in_a_sibilant_takes_es() -> None:
    assert [plural(2, noun) for noun in ("class", "box", "batch", "hash")] == [
        "2 classes",
        "2 boxes",
        "2 batches",
        "2 hashes",
    ]
    assert plural(1, "class") == "1 class"

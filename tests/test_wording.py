"""How messages word a count and a path to paste."""

from __future__ import annotations

import os
from pathlib import Path

from faim.wording import plural, shell_path


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


def test_a_noun_ending_in_a_ch_read_as_k_takes_s() -> None:
    assert [plural(3, noun) for noun in ("epoch", "batch")] == ["3 epochs", "3 batches"]


def test_a_path_is_quoted_for_the_systems_shell_where_it_holds_what_the_shell_reads(monkeypatch) -> None:
    assert [shell_path(path) for path in ("runs/model", Path("an earlier/index.html"))] == [
        "runs/model",
        "'an earlier/index.html'",
    ]
    monkeypatch.setattr(os, "name", "nt")  # cmd.exe reads double quotes, and a backslash as it is
    assert [shell_path(path) for path in (r"runs\hate\model", r"an earlier\index.html")] == [
        r"runs\hate\model",
        r'"an earlier\index.html"',
    ]

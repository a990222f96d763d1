"""How messages word a count and a path to paste."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from faim.wording import plural, shell_command, shell_path


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


def test_a_path_is_quoted_for_the_systems_shell_where_it_holds_what_the_shell_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert [shell_path(path) for path in ("runs/model", Path("an earlier/index.html"))] == [
        "runs/model",
        "'an earlier/index.html'",
    ]
    # cmd.exe reads double quotes, and a backslash as it is. Only faim.wording's os is replaced: pytest makes paths by
    # os.name too, and with it patched could not report a failing assert
    monkeypatch.setattr("faim.wording.os", SimpleNamespace(name="nt"))
    assert [shell_path(path) for path in (r"runs\hate\model", r"an earlier\index.html")] == [
        r"runs\hate\model",
        r'"an earlier\index.html"',
    ]


def test_on_windows_a_path_holding_what_cmd_reads_as_another_command_is_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("faim.wording.os", SimpleNamespace(name="nt"))  # cmd.exe runs what follows & as a command
    assert [shell_path(path) for path in (r"R&D\model", "a|b", "x^y", "in<out>", r"runs (old)\model")] == [
        r'"R&D\model"',
        '"a|b"',
        '"x^y"',
        '"in<out>"',
        r'"runs (old)\model"',
    ]
    assert shell_path("R&D\\") == '"R&D\\\\"'  # a closing backslash doubled, not read as escaping the quote


def test_a_command_line_is_quoted_word_by_word_for_the_systems_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    words = ["faim", "train", "--set", r"train.output_dir=my runs\hate", "--resume"]
    assert shell_command(words) == r"faim train --set 'train.output_dir=my runs\hate' --resume"
    monkeypatch.setattr("faim.wording.os", SimpleNamespace(name="nt"))
    assert shell_command(words) == r'faim train --set "train.output_dir=my runs\hate" --resume'


def test_on_windows_a_word_holding_a_quote_or_a_percent_is_caret_escaped_for_cmd(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("faim.wording.os", SimpleNamespace(name="nt"))
    # cmd.exe toggles its quoting at every double quote, the program's \" included: "a\"&b" leaves & outside quotes,
    # where it starts a command. With every quote and metacharacter behind a caret cmd reads none of them and passes
    # "a\"&b" on, which the program reads as a"&b
    assert shell_path('a"&b') == r'^"a\^"^&b^"'
    assert shell_command(["--set", 'train.note=say "hi" | go']) == r'--set ^"train.note=say \^"hi\^" ^| go^"'
    # cmd expands %NAME% inside quotes too, and ^ is no escape there; outside them %USERPROFILE^% names no variable,
    # so it is kept, and the caret then dropped
    assert shell_path(r"%USERPROFILE%\runs") == r"^%USERPROFILE^%\runs"
    assert shell_path(r"my runs\%DATE%") == r'^"my runs\^%DATE^%^"'
    assert shell_path("x=50%") == "x=50^%"

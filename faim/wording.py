"""How faim's messages word what they say: ``plural``, a count with its noun; ``shell_path``, a path to paste;
``shell_command``, a command line to paste."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

SIBILANT_ENDINGS = ("s", "x", "sh", "tch")
"""The endings of a noun whose plural adds es, not s: ``class``, ``box``, ``hash``, ``batch``. A ch read as
k takes s (``epoch``, ``epochs``), so of the ch endings only tch is one."""

CMD_READS = frozenset(' \t"&|^<>()')
"""What cmd.exe reads in a word outside double quotes: a space or tab ends it, ``&`` and ``|`` start another
command, ``<`` and ``>`` redirect, ``^`` escapes, brackets group; a word holding one is quoted."""

CMD_QUOTING_FAILS = frozenset('"%')
"""What cmd.exe reads inside double quotes too: a quote ends them (the program's ``\\"`` included), and
``%NAME%`` is expanded there; a word holding one has what cmd reads escaped by a caret (``CMD_ESCAPED``)."""

CMD_ESCAPED = re.compile(r'[()%!^"<>&|]')
"""What cmd.exe reads in a line, put behind a caret in a word holding one of ``CMD_QUOTING_FAILS``: ``!`` is
read where delayed expansion is on, and a caret before it is dropped where not."""


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, in its plural unless ``count`` is 1: ``"1 post"``, ``"0 posts"``, ``"2 posts"``; a
    noun ending in a sibilant (``SIBILANT_ENDINGS``) adds es: ``"2 classes"``. A noun with a plural of its own
    (``child``) is not one to pass."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(SIBILANT_ENDINGS) else 's'}"


def shell_path(path: str | Path) -> str:
    """``path`` as the system's shell reads it, to be pasted into one: quoted where it holds a space or another
    character the shell reads (``shlex.quote``; on Windows, ``cmd_quote``), else as it is."""
    if os.name == "nt":
        return cmd_quote(str(path))
    return shlex.quote(str(path))


def shell_command(words: Sequence[str | Path]) -> str:
    """``words`` as one command line for the system's shell, each quoted as ``shell_path`` quotes a path."""
    return " ".join(map(shell_path, words))


def cmd_quote(word: str) -> str:
    """``word`` in double quotes where it is empty or holds what cmd.exe reads (``CMD_READS``), else as it is.
    Inside them a program's argument parser (the C runtime's) reads a backslash before a quote as escaping it, so
    such backslashes, and those closing the word, are doubled, and a quote in it is escaped. Where the word holds
    a quote or a ``%`` (``CMD_QUOTING_FAILS``), quotes do not keep cmd from reading it, so each quote and
    character cmd reads is put behind a caret (``^"a\\^"^&b^"`` for ``a"&b``): cmd drops the carets and the
    program reads the word. ``%NAME^%`` names no variable, so cmd keeps it as it is."""
    quoted = word
    if not word or CMD_READS.intersection(word):
        escaped = re.sub(r'(\\*)("|$)', lambda found: found[1] * 2 + ("\\" + found[2] if found[2] else ""), word)
        quoted = f'"{escaped}"'
    if CMD_QUOTING_FAILS.intersection(word):
        return CMD_ESCAPED.sub(lambda found: "^" + found[0], quoted)
    return quoted

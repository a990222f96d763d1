"""How faim's messages word what they say: ``plural``, a count with its noun; ``shell_path``, a path to paste."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

SIBILANT_ENDINGS = ("s", "x", "sh", "tch")
"""The endings of a noun whose plural adds es, not s: ``class``, ``box``, ``hash``, ``batch``. A ch read as
k takes s (``epoch``, ``epochs``), so of the ch endings only tch is one."""


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, in its plural unless ``count`` is 1: ``"1 post"``, ``"0 posts"``, ``"2 posts"``; a
    noun ending in a sibilant (``SIBILANT_ENDINGS``) adds es: ``"2 classes"``. A noun with a plural of its own
    (``child``) is not one to pass."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(SIBILANT_ENDINGS) else 's'}"


def shell_path(path: str | Path) -> str:
    """``path`` as the system's shell reads it, to be pasted into one: quoted where it holds a space or another
    character the shell reads (``shlex.quote``; on Windows, cmd.exe's double quotes), else as it is."""
    if os.name == "nt":
        return subprocess.list2cmdline([str(path)])
    return shlex.quote(str(path))

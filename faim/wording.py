"""How faim's messages word what they say: ``plural``, a count with its noun."""

from __future__ import annotations


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, an s added unless there is one: ``"1 post"``, ``"0 posts"``, ``"2 posts"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"

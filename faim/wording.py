"""How faim's messages word what they say: ``plural``, a count with its noun."""

from __future__ import annotations

SIBILANT_ENDINGS = ("s", "x", "ch", "sh")
"""The endings of a noun whose plural adds es, not s: ``class``, ``box``, ``batch``, ``hash``."""


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, in its plural unless ``count`` is 1: ``"1 post"``, ``"0 posts"``, ``"2 posts"``; a
    noun ending in a sibilant (``SIBILANT_ENDINGS``) adds es: ``"2 classes"``. A noun with a plural of its own
    (``child``) is not one to pass."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun}{'es' if noun.endswith(SIBILANT_ENDINGS) else 's'}"

"""The order in which every text encoder and its torch-free runtime fold evasions before tokenising: homoglyphs
first, so that a word spelt with look-alike letters from another script is Latin when its digits are read, then
leetspeak."""

from __future__ import annotations

from collections.abc import Callable

Fold = Callable[[str], str]


def fold_texts(texts: list[str], confusables: Fold | None, leetspeak: Fold | None = None) -> list[str]:
    """``texts`` with homoglyphs folded by ``confusables``, then leetspeak by ``leetspeak``; ``None`` skips a fold."""
    for fold in (confusables, leetspeak):
        if fold is not None:
            texts = [fold(text) for text in texts]
    return texts

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


FIRST_READ = 8
"""How many characters per token of the length a text is cut to ``read_start`` first tries (more than most texts take,
in any script spaces part), each try after taking four times as many."""


def read_start(text: str, max_length: int, count: Callable[[str], int]) -> str:
    """The start of ``text`` that a tokeniser cutting its pieces to ``max_length`` reads as it reads the whole: the
    text up to a space, from the shortest of tries ``FIRST_READ`` characters per token long and four times longer each
    after, whose folded pieces ``count`` (special pieces included, cut or not) reach ``max_length``; ``text`` itself
    where none does, or where no try holds a space (a text in a script without spaces). Folding and tokenising read
    a text word by word, parted by spaces, so its pieces up to the space cut at are those of the whole text: a post of
    a million characters is no longer folded and tokenised whole to keep its first few hundred pieces."""
    size = FIRST_READ * max_length
    while size < len(text):
        cut = text.rfind(" ", 0, size)
        if cut > 0 and count(text[:cut]) >= max_length:
            return text[:cut]
        size *= 4
    return text

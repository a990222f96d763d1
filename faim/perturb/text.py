"""Text perturbations that evaders use: typos, leetspeak, spaced-out words and look-alike characters.

Every function has the signature ``(text, rng, rate) -> text``: it is pure, draws all its randomness from ``rng``
(so a seeded ``random.Random`` gives the same output every time), and ``rate`` in ``[0, 1]`` is the probability
that each eligible word (swaps, spaces) or character (leetspeak, homoglyphs) is touched: ``0`` returns the text
unchanged, ``1`` touches every eligible one.

@mentions and URLs (``http://…``, ``https://…``, ``www.…`` in any case; ``NAMES_AND_LINKS``) are never changed: they
name accounts and links rather than carry wording, and breaking them would test a different thing (a changed target)
than evasion. Hashtags are ordinary words here. A word is a run of two or more letters of any script, each with the
marks written on it (a vowel sign of Devanagari and the other Indic scripts, an accent written as a mark of its own),
so digits and punctuation are kept as they are; swaps and spaces move and part letters with their marks
(``letters``), never a mark from its letter, so that ``चूहे`` is a word of two, not two letters apart.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from functools import cache

from faim.preprocess.confusables import marks, word_pattern
from faim.preprocess.leetspeak import NAMES_AND_LINKS

LETTER = r"[^\W\d_]"
"""A letter of any script."""

LEET: dict[str, str] = {"a": "4", "b": "8", "e": "3", "g": "9", "i": "1", "l": "1", "o": "0", "s": "5", "t": "7"}
"""Lower-case letter to digit; upper-case letters use the same digit."""

HOMOGLYPHS: dict[str, str] = {
    **dict(zip("acehijopsxy", "асеһіјорѕху")),  # Cyrillic small letters
    **dict(zip("ABCEHIJMOPSTXY", "АВСЕНІЈМОРЅТХҮ")),  # Cyrillic capital letters
    "K": "\u039a",  # Greek capital kappa (Cyrillic ka is drawn differently in some fonts)
    "N": "\u039d",  # Greek capital nu
    "Z": "\u0396",  # Greek capital zeta
}
"""Latin letter to a Cyrillic or Greek code point drawn the same in common fonts."""


def char_swap(text: str, rng: random.Random, rate: float) -> str:
    """Swap two adjacent, different letters inside each touched word (``hate`` → ``htae``).

    Words whose letters are all the same (``aa``) cannot change and are not eligible.
    """
    return _edit_words(text, rng, rate, _swap_once, eligible=lambda word: len(set(word)) > 1)


@cache
def letter_pattern() -> re.Pattern[str]:
    """A letter of any script with the marks written on it (``faim.preprocess.confusables.marks``); compiled once,
    when first used."""
    return re.compile(f"{LETTER}[{marks()}]*")


def leetspeak(text: str, rng: random.Random, rate: float) -> str:
    """Replace touched letters by look-alike digits (see ``LEET``: ``hate`` → ``h473``); other letters are kept."""
    table = {**LEET, **{letter.upper(): digit for letter, digit in LEET.items()}}
    return _replace_chars(text, rng, rate, table)


def insert_spaces(text: str, rng: random.Random, rate: float) -> str:
    """Break each touched word with spaces at one or more random gaps between its letters (``hate`` → ``h a te``)."""

    def spread(word: list[str], rng: random.Random) -> str:
        gaps = set(rng.sample(range(1, len(word)), rng.randint(1, len(word) - 1)))
        return "".join(f" {letter}" if i in gaps else letter for i, letter in enumerate(word))

    return _edit_words(text, rng, rate, spread)


def homoglyphs(text: str, rng: random.Random, rate: float) -> str:
    """Replace touched letters by the Cyrillic or Greek letter drawn the same (see ``HOMOGLYPHS``).

    The text looks unchanged but its code points differ, so tokenisers and keyword lists no longer match it.
    """
    return _replace_chars(text, rng, rate, HOMOGLYPHS)


def _swap_once(word: list[str], rng: random.Random) -> str:
    """Swap one randomly chosen pair of adjacent, different letters (each with its marks) of ``word``."""
    i = rng.choice([i for i in range(len(word) - 1) if word[i] != word[i + 1]])
    return "".join(word[:i] + [word[i + 1], word[i]] + word[i + 2 :])


def _edit_words(
    text: str,
    rng: random.Random,
    rate: float,
    edit: Callable[[list[str], random.Random], str],
    eligible: Callable[[list[str]], bool] = lambda word: True,
) -> str:
    """Apply ``edit`` to each eligible word outside mentions and URLs with probability ``rate``: a word of two or
    more letters (``word_pattern``), given to ``edit`` and ``eligible`` as its letters, each with its marks
    (``letter_pattern``)."""

    def visit(match: re.Match[str]) -> str:
        word = letter_pattern().findall(match.group())
        return edit(word, rng) if len(word) > 1 and eligible(word) and rng.random() < rate else match.group()

    return _outside_protected(text, rate, lambda piece: word_pattern(LETTER).sub(visit, piece))


def _replace_chars(text: str, rng: random.Random, rate: float, table: Mapping[str, str]) -> str:
    """Replace each character found in ``table`` outside mentions and URLs with probability ``rate``."""
    return _outside_protected(
        text, rate, lambda piece: "".join(table[c] if c in table and rng.random() < rate else c for c in piece)
    )


def _outside_protected(text: str, rate: float, edit: Callable[[str], str]) -> str:
    """Apply ``edit`` to the pieces of ``text`` between mentions and URLs, in order, after checking ``rate``."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be between 0 and 1, got {rate}")
    pieces = NAMES_AND_LINKS.split(text)  # even indices: free text; odd indices: URLs and mentions
    return "".join(edit(piece) if i % 2 == 0 else piece for i, piece in enumerate(pieces))

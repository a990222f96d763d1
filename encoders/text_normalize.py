"""Undo homoglyph evasion before tokenising: a letter of another script drawn like a Latin letter, inside a word
that also holds Latin letters, becomes that Latin letter.

Evaders write ``hаte`` with a Cyrillic ``а``: it looks the same, but tokenisers and keyword lists no longer match
it. Unicode's confusables table (UTS #39, as bundled by the ``confusable-homoglyphs`` package) says which letters
are drawn like which; a word mixing Latin letters with look-alikes of other scripts is the mixed-script confusable
UTS #39 warns of. Words wholly in one script are kept as they are (Russian stays Russian), and NFKC folds
compatibility forms first (full-width ``ｈａｔｅ``, mathematical ``𝐡𝐚𝐭𝐞``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from confusable_homoglyphs.categories import alias
from confusable_homoglyphs.confusables import confusables_data

WORD = re.compile(r"[^\W\d_]+")
"""A run of letters (any script): the unit whose scripts are compared."""


@cache
def latin_lookalikes() -> dict[str, str]:
    """Letter of a script other than Latin → the ASCII letter the confusables table draws it as (``а`` → ``a``),
    for every such letter that has one."""
    table = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or not char.isalpha() or alias(char) == "LATIN":
            continue
        letters = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        if letters:
            table[char] = letters[0]
    return table


def fold_confusables(text: str) -> str:
    """``text`` in NFKC with the look-alike letters of every mixed-script word (Latin letters next to letters of
    another script drawn like Latin ones) replaced by the Latin letters they imitate."""
    table = latin_lookalikes()

    def fold(match: re.Match[str]) -> str:
        word = match.group()
        if not any(char in table for char in word) or not any(alias(char) == "LATIN" for char in word):
            return word
        return "".join(table.get(char, char) for char in word)

    return WORD.sub(fold, unicodedata.normalize("NFKC", text))

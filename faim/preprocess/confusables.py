"""Fold homoglyph evasion: a letter of another script drawn like a Latin letter, inside a word that also holds
Latin letters, becomes that Latin letter.

Evaders write ``hаte`` with a Cyrillic ``а``: it looks the same, but tokenisers and keyword lists no longer match
it. Unicode's confusables table (UTS #39) says which letters are drawn like which; a word mixing Latin letters with
look-alikes of other scripts is the mixed-script confusable UTS #39 warns of. Words wholly in one script are kept
as they are (Russian stays Russian), and NFKC folds compatibility forms first (full-width ``ｈａｔｅ``, mathematical
``𝐡𝐚𝐭𝐞``).

The tables are data (``ConfusableFolder.to_dict``): ``faim.encoders.text_normalize`` builds them from the
``confusable-homoglyphs`` package, an exported model carries them as JSON.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

WORD = re.compile(r"[^\W\d_]+")
"""A run of letters (any script): the unit whose scripts are compared."""


class ConfusableFolder:
    """A picklable callable ``text -> text`` folding the look-alike letters of mixed-script words.

    Args:
        lookalikes: Letter of a script other than Latin → the ASCII letter it is drawn as (``а`` → ``a``).
        latin_ranges: Inclusive ``(first, last)`` code point ranges of the Latin script, sorted and disjoint.
    """

    def __init__(self, lookalikes: Mapping[str, str], latin_ranges: Sequence[Sequence[int]]) -> None:
        self.lookalikes = dict(lookalikes)
        self.latin_ranges = [(int(first), int(last)) for first, last in latin_ranges]
        self._firsts = [first for first, _ in self.latin_ranges]

    def is_latin(self, char: str) -> bool:
        """Whether ``char`` belongs to the Latin script."""
        point = ord(char)
        index = bisect.bisect_right(self._firsts, point) - 1
        return index >= 0 and point <= self.latin_ranges[index][1]

    def __call__(self, text: str) -> str:
        """``text`` in NFKC with the look-alike letters of every mixed-script word replaced by the Latin letters
        they imitate (an ASCII text, common and already both, as it is)."""
        if text.isascii():
            return text
        return WORD.sub(self._fold, unicodedata.normalize("NFKC", text))

    def _fold(self, match: re.Match[str]) -> str:
        word = match.group()
        if not any(char in self.lookalikes for char in word) or not any(self.is_latin(char) for char in word):
            return word
        return "".join(self.lookalikes.get(char, char) for char in word)

    def to_dict(self) -> dict[str, Any]:
        """The tables as JSON-ready data (``from_dict`` reads them back)."""
        return {"lookalikes": self.lookalikes, "latin_ranges": [list(pair) for pair in self.latin_ranges]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfusableFolder:
        return cls(data["lookalikes"], data["latin_ranges"])

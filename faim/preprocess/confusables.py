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
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3100-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
)
"""The scripts that write no space between words (Thai, Lao, Myanmar, Khmer, kana, Han, Hangul and Bopomofo), as
ranges of a character class: a word of another script ends where one of their letters stands, so
``我爱Москва和Paris`` holds the words ``Москва`` and ``Paris``, not one of both scripts. Of their letters, Myanmar's wa
alone is drawn like a Latin one (an o); it ends a word too, so a Latin word written against a Myanmar one beginning
with it (``Facebookဝင်``) is kept, and one spelt with it (``gဝဝd``) is kept as well."""

LETTER = f"[^\\W\\d_{UNSPACED}]"
"""A letter of any script but those of ``UNSPACED``."""

REVISION = 5
"""Raised whenever what the folding does to a text changes, tables aside: the embedding cache keys an encoder folding
homoglyphs by it with the tables (``faim.encoders.text_normalize.tables_digest``). 2: marks belong to their word;
3: scripts written without spaces end words (``UNSPACED``); 5: as 3 (4 had Myanmar's wa join Latin words)."""


@cache
def marks() -> str:
    """Every mark (combining accents, strokes, the vowel signs and points of Indic, Arabic and Hebrew scripts) as the
    inside of a character class, which ``re`` has no Unicode category for. Built when first used (it reads every code
    point's category)."""
    return "".join(
        re.escape(chr(point)) for point in range(sys.maxunicode + 1) if unicodedata.category(chr(point))[0] == "M"
    )


@cache
def word_pattern(letter: str = LETTER) -> re.Pattern[str]:
    """A letter (``letter``, a character class: ``LETTER`` by default) followed by letters and marks (``marks``): the
    unit whose scripts are compared. A mark belongs to the letter it is written on, so a word keeps its accents and
    the strokes of ``h̶а̶t̶e̶`` leave it one word."""
    return re.compile(f"{letter}(?:{letter}|[{marks()}])*")


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
        """``text`` in NFKC with the look-alike letters of every mixed-script word (``word_pattern``) replaced by the
        Latin letters they imitate (an ASCII text, common and already both, as it is); folding it again changes
        nothing."""
        if text.isascii():
            return text
        return word_pattern().sub(self._fold, unicodedata.normalize("NFKC", text))

    def _fold(self, match: re.Match[str]) -> str:
        """The matched word with its look-alikes replaced where it mixes them with Latin letters, in NFKC (a Latin
        letter takes the accent a look-alike carried: ``а`` and a combining acute become ``á``), else as it is."""
        word = match.group()
        if not any(char in self.lookalikes for char in word) or not any(self.is_latin(char) for char in word):
            return word
        return unicodedata.normalize("NFKC", "".join(self.lookalikes.get(char, char) for char in word))

    def to_dict(self) -> dict[str, Any]:
        """The tables as JSON-ready data (``from_dict`` reads them back)."""
        return {"lookalikes": self.lookalikes, "latin_ranges": [list(pair) for pair in self.latin_ranges]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfusableFolder:
        return cls(data["lookalikes"], data["latin_ranges"])

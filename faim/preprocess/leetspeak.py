"""Undo leetspeak before tokenising: digits drawn like letters, inside a word, become the letters they imitate when
the tokenizer then reads a word it knows.

Evaders write ``h4t3`` or ``k1ll``: people read the word, but the tokenizer splits it into pieces the model
rarely saw. Digits also carry meaning in ordinary text (``covid19``, ``mp3``, ``MH370``), so a token of ASCII
letters and digits is folded only when its tokenizer reads the folded token as one piece, a word of its
vocabulary, where it read the token as several: the folding follows each text encoder's vocabulary. A SentencePiece
vocabulary holds many words as two or three pieces (XLM-R's ``▁muslim`` ``s``), so for one the folded token need
only take at most half as many pieces as the token (``subwords``): on 1,000 TweetEval tweets with 30 % of their
letters written as digits, e5's pieces read 76 % of the changed words back as they were so, 64 % by one piece
alone, and both changed the same 6 of the clean tweets. Kept as they are: tokens without a letter (``2019``,
``411``), numbers with a unit, an ordinal or a plural (``10am``, ``5m``, ``24h``, ``14st``, the ``80s``), a digit with
``s``, ``h``, ``d``, ``w`` or ``y`` (``3d``, ``4h``, ``1s``) in a text where no other token is folded,
capital codes of one or two letters (``3M``, ``B4``, ``ID4``), and URLs and @mentions. Digits that stand for whole
words (``pray4NYC``) are not read as letters, since no single word results.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

DIGIT_LETTERS: dict[str, str] = {"0": "o", "1": "il", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g"}
"""Digit to the letters it is drawn like, the likelier first (``1`` reads as ``i`` or ``l``)."""

TOKEN = re.compile(r"[A-Za-z0-9]+")
"""A run of ASCII letters and digits: the unit that is folded as a whole (leetspeak imitates Latin letters)."""

QUANTITY = re.compile(r"\d+(?:am|pm|st|nd|rd|th|hrs?|mins?|secs?|yrs?|[kmgx])$|\d{2,}[shdwy]$", re.IGNORECASE)
"""A number with a unit, an ordinal or a plural (``14st``, ``10am``, ``5m``, ``4g``, ``1hr``, ``24h``, the ``80s``):
kept, though some read as words (``4m`` as ``am``, ``10s`` as ``los``)."""

UNIT_OR_WORD = re.compile(r"\d[shdwy]$", re.IGNORECASE)
"""One digit and a letter that read as a quantity (``3d``, ``4h``, ``1s``) or as a word (``1s`` as ``is``, ``0h`` as
``oh``, ``8y`` as ``by``) alike: kept in a text otherwise written plainly, folded in one where another token is."""

NAMES_AND_LINKS = re.compile(r"((?:https?://|www\.)\S+|@\w+)", re.IGNORECASE)
"""URLs (``http://``, ``https://`` or ``www.`` in any case: ``HTTPS://BIT.LY/x``) and @mentions: they name accounts
and links rather than carry wording (one capturing group, for ``re.split``)."""

REVISION = 3
"""Raised whenever what the folding does to a text changes: the embedding cache keys an encoder folding leetspeak by
it (``faim.encoders.text_preprocess.folding_identity``). 2: units of time, plurals and dimensions are kept; 3: a
digit and one such letter (``1s``, ``3d``) only in a text where no other token is folded."""

MAX_READINGS = 16
"""A token with more readings than this (many ``1``\\ s) is read with each digit's likelier letter only."""

MEMO_SIZE = 65536
"""Tokens whose folding is remembered; the memory is cleared when full, so scoring a dump stays bounded."""


class LeetspeakFolder:
    """A picklable callable ``text -> text`` folding leetspeak for one tokenizer (see the module docstring).

    Args:
        tokenizer: The text encoder's tokenizer; its ``tokenize`` counts the pieces of each reading.
        subwords: Fold where the reading takes at most half the token's pieces, not only where it takes one.
    """

    def __init__(self, tokenizer: Any, subwords: bool = False) -> None:
        self.tokenizer = tokenizer
        self.subwords = subwords
        self._memo: dict[tuple[str, bool], str] = {}

    def __call__(self, text: str) -> str:
        pieces = NAMES_AND_LINKS.split(text)  # even indices: free text; odd indices: URLs and mentions
        plain = pieces[0::2]
        folded = [TOKEN.sub(self._fold_match, piece) for piece in plain]
        if folded != plain:  # written in leetspeak: its 1s and 0h are words too
            folded = [TOKEN.sub(self._fold_unit_or_word, piece) for piece in folded]
        pieces[0::2] = folded
        return "".join(pieces)

    def fold(self, token: str, as_word: bool = False) -> str:
        """``token`` with its look-alike digits read as letters, when the tokenizer reads it better so; ``as_word``
        reads a digit and a unit letter (``1s``, ``0h``) as a word too (see ``UNIT_OR_WORD``)."""
        key = (token, as_word)
        if key not in self._memo:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = self._fold(token, as_word)
        return self._memo[key]

    def _fold_match(self, match: re.Match[str]) -> str:
        return self.fold(match.group())

    def _fold_unit_or_word(self, match: re.Match[str]) -> str:
        token = match.group()
        return self.fold(token, as_word=True) if UNIT_OR_WORD.match(token) else token

    def _fold(self, token: str, as_word: bool) -> str:
        letters = [char for char in token if char.isalpha()]
        if len(token) < 2 or not letters or not any(char in DIGIT_LETTERS for char in token):
            return token
        shout = all(char.isupper() for char in letters)  # H4TE reads as HATE
        quantity = QUANTITY.match(token) or (UNIT_OR_WORD.match(token) and not as_word)
        if quantity or (shout and len(letters) < 3):  # capital codes: 3M, B4, ID4, Q8, MH370
            return token
        choices = [DIGIT_LETTERS.get(char, char) for char in token]
        choices = [choice.upper() if shout else choice for choice in choices]
        if math.prod(map(len, choices)) > MAX_READINGS:
            choices = [choice[0] for choice in choices]
        counted = [(self._pieces(reading), reading) for reading in map("".join, itertools.product(*choices))]
        count, reading = min(counted, key=lambda pair: pair[0])  # the first fewest: likelier letters win ties
        return reading if self._reads_better(count, token) else token

    def _reads_better(self, count: int, token: str) -> bool:
        """Whether a reading of ``token`` in ``count`` pieces is a word: one piece where the token takes several, or
        with ``subwords``, at most half the token's pieces."""
        if self.subwords:
            return 2 * count <= self._pieces(token)
        return count == 1 < self._pieces(token)

    def _pieces(self, word: str) -> int:
        return len(self.tokenizer.tokenize(word))

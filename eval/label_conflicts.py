"""Terms two labelled datasets of one binary task read the opposite way: one dataset's posts holding the term are
more often positive than its posts on the whole, the other's less often. A model trained on the one learns the term
as evidence that the other's labels deny, so these terms tell why a model does not carry from one dataset to the
other, whatever the model. Read with a model's decisions as one set of labels and the labels as the other
(``decision_conflicts``), they are the words the model learnt a definition of that the labels do not share.

A term's lean in a dataset is the log-odds of a positive among the posts holding it less the log-odds of a positive
among all the dataset's posts (half a post added to each class of both, so that a term no post of a class holds
stays finite): the datasets' different shares of positives cancel out of it. The half posts pull a term in few posts
towards even odds, so where positives are rare a term no positive post holds can lean positive; its direction is
therefore read from its share of positives against the dataset's own, unsmoothed, and the lean gives its size."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from faim.eval.tables import left_to_right
from faim.preprocess.confusables import word_pattern
from faim.wording import plural

MIN_POSTS = 20
"""Posts of each dataset a term must be in before its lean is read."""
MIN_GAP = 1.0
"""Least difference between a term's two leans, in log-odds (a factor of e in the odds)."""
SHOWN_TERMS = 5
"""Terms ``decision_conflicts`` lists."""


@dataclass(frozen=True)
class LabelledTexts:
    """A dataset's posts as texts with binary labels (1 positive), index-aligned; ``name`` says which dataset."""

    name: str
    texts: Sequence[str]
    labels: Sequence[int]

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.labels):
            raise ValueError(f"{self.name}: {plural(len(self.texts), 'text')} but {plural(len(self.labels), 'label')}")
        wrong = next((i for i, label in enumerate(self.labels) if label not in (0, 1)), None)
        if wrong is not None:
            raise ValueError(f"{self.name}: the label of post {wrong} is {self.labels[wrong]!r}, not 0 or 1")

    @property
    def share(self) -> float:
        """The share of posts that are positive (0 without posts)."""
        return sum(self.labels) / len(self.labels) if self.labels else 0.0


@dataclass(frozen=True)
class TermCount:
    """The posts of one dataset holding a term, and how many of them are positive."""

    posts: int
    positives: int

    @property
    def share(self) -> float:
        return self.positives / self.posts


@dataclass(frozen=True)
class TermConflict:
    """A term two datasets read the opposite way: its count in each, in the order the datasets were given, and its
    lean in each (one positive, one negative)."""

    term: str
    counts: tuple[TermCount, TermCount]
    leans: tuple[float, float]

    @property
    def posts(self) -> int:
        return sum(count.posts for count in self.counts)


IDEOGRAPHIC = "\u3040-\u309c\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff"
"""Hiragana and Han ideographs, as ranges of a character class: each is a word of its own (``words``), as Unicode's
default word boundaries (UAX #29) part them, for Chinese and Japanese write no space between words, and a run of
them read as one word would be a whole sentence, which no other post holds. Katakana keeps its words whole, as UAX #29
does; Thai, Lao, Khmer and Myanmar, which part words by a dictionary alone, are read a run at a time."""

REPEAT_MARKS = "\u3005\u303b\u309d\u309e\u30fc\u30fd\u30fe\uff70"
"""The marks that lengthen or repeat the character before them (``ー``, ``々``, ``〻``, ``ゝ``, ``ゞ``, ``ヽ``, ``ヾ``,
half-width ``ｰ``), as ranges of a character class: written after one of ``IDEOGRAPHIC``, each is read with it
(``すごーい``: ``す``, ``ごー``, ``い``; ``人々``: one word), for alone it says nothing."""

ANY_LETTER = f"[^\\W\\d_{IDEOGRAPHIC}]"
"""A letter of any script but ``IDEOGRAPHIC``: a word (``faim.preprocess.confusables.word_pattern``) is one followed by
letters and the marks written on them (the vowel signs of Indic scripts, Arabic's vowel marks, accents), which are no
letters, so that ``मौसम`` is one word, not ``म`` and ``सम``."""


@cache
def word_or_character() -> re.Pattern[str]:
    """A character of ``IDEOGRAPHIC`` with the ``REPEAT_MARKS`` after it, or a word (``word_pattern``) of
    ``ANY_LETTER``; compiled once."""
    return re.compile(f"[{IDEOGRAPHIC}][{REPEAT_MARKS}]*|{word_pattern(ANY_LETTER).pattern}")


def words(text: str) -> set[str]:
    """The lower-cased words of ``text`` (``word_or_character``), composed (NFC), so that a word is one whether a post
    writes its accents as letters of their own (``é``) or as marks after a letter (``e`` and U+0301)."""
    return set(word_or_character().findall(unicodedata.normalize("NFC", text).lower()))


def term_counts(data: LabelledTexts) -> dict[str, TermCount]:
    """Each word's posts and positives (a post counts once for a word, however often it holds it)."""
    posts: Counter[str] = Counter()
    positives: Counter[str] = Counter()
    for text, label in zip(data.texts, data.labels):
        held = words(text)
        posts.update(held)
        if label:
            positives.update(held)
    return {word: TermCount(n, positives[word]) for word, n in posts.items()}


def log_odds(positives: int, posts: int) -> float:
    return math.log((positives + 0.5) / (posts - positives + 0.5))


def direction(count: TermCount, share: float) -> int:
    """+1 where the posts holding a term are positive more often than ``share``, its dataset's posts on the whole,
    -1 where less often, 0 where as often (every post of a dataset whose posts are all of one class)."""
    return (count.share > share) - (count.share < share)


def conflicts(first: LabelledTexts, second: LabelledTexts) -> list[TermConflict]:
    """Every term, in at least ``MIN_POSTS`` posts of each dataset, that is positive more often than its dataset's
    posts on the whole in one and less often in the other, with leans ``MIN_GAP`` or more apart that agree with
    those directions; those in the most posts of the two first."""
    datasets = (first, second)
    base = [log_odds(sum(data.labels), len(data.labels)) for data in datasets]
    shares = [data.share for data in datasets]
    counts = [term_counts(data) for data in datasets]
    found = []
    for term in counts[0].keys() & counts[1].keys():
        pair = (counts[0][term], counts[1][term])
        if min(count.posts for count in pair) < MIN_POSTS:
            continue
        leans = (
            log_odds(pair[0].positives, pair[0].posts) - base[0],
            log_odds(pair[1].positives, pair[1].posts) - base[1],
        )
        signs = [direction(count, share) for count, share in zip(pair, shares)]
        agree = all(sign * lean > 0 for sign, lean in zip(signs, leans))
        if agree and signs[0] != signs[1] and abs(leans[0] - leans[1]) >= MIN_GAP:
            found.append(TermConflict(term, pair, leans))
    return sorted(found, key=lambda conflict: (-conflict.posts, conflict.term))


def share_holding(data: LabelledTexts, terms: Collection[str]) -> float:
    """The share of ``data``'s posts holding at least one of ``terms``."""
    if not data.texts:
        return 0.0
    terms = set(terms)
    return sum(bool(words(text) & terms) for text in data.texts) / len(data.texts)


def conflict_summary(first: LabelledTexts, second: LabelledTexts, shown: int) -> dict[str, Any]:
    """The terms ``first`` and ``second`` read the opposite way (``conflicts``), as results keep them: how many
    (``terms``), the share of each one's posts holding at least one (``share_holding``), and the first ``shown`` of
    them with their posts, shares of positives and leans in each (``shown``)."""
    found = conflicts(first, second)
    terms = [conflict.term for conflict in found]
    return {
        "terms": len(found),
        "share_holding": [share_holding(data, terms) for data in (first, second)],
        "shown": [
            {"term": c.term, "posts": [n.posts for n in c.counts], "shares": [n.share for n in c.counts],
             "leans": list(c.leans)}
            for c in found[:shown]
        ],
    }  # fmt: skip


def decision_conflicts(
    texts: Sequence[str], flagged: Sequence[int], labels: Sequence[int], positive: str
) -> dict[str, Any]:
    """The words a model's decisions (``flagged``, 1 where it decides ``positive``) and the labels of the same
    posts read the opposite way: the model flags the posts holding the word more often than the rest while the
    labels call them positive less often than the rest, or the reverse. As ``conflict_summary`` keeps them, the
    model's side first, the first ``SHOWN_TERMS`` shown, with the positive class's name (``positive``) and the
    shares of all the posts the model flags and the labels call positive (``overall``), which each word's shares
    read against. A calibration keeps the model's order of the posts, so it cannot undo what the model learnt such
    a word means.

    Raises:
        ValueError: When ``texts``, ``flagged`` and ``labels`` differ in length, or a decision or label is not 0
            or 1.
    """
    model, read = LabelledTexts("model", texts, flagged), LabelledTexts("labels", texts, labels)
    return conflict_summary(model, read, SHOWN_TERMS) | {"positive": positive, "overall": [model.share, read.share]}


def decision_conflicts_note(summary: dict[str, Any] | None, name: Callable[[str], str] = str) -> str | None:
    """A sentence on the words a model and the labels read the opposite way (``decision_conflicts``), those in the
    most posts first, each ``left_to_right`` (an Arabic word's figures shown after it), or ``None`` where there are
    none (or no ``summary``). Each word and the positive label are written as ``name`` gives them: as they are for a
    console, ``faim.eval.tables.markdown_name`` for Markdown, beside the note's own code span."""
    if not summary or not summary["terms"]:
        return None
    positive = name(summary["positive"])
    shown = "; ".join(
        f"'{left_to_right(name(t['term']))}' ({t['posts'][0]:,} posts: the model flags {100 * t['shares'][0]:.0f} %, "
        f"the labels call {100 * t['shares'][1]:.0f} % {positive})"
        for t in summary["shown"]
    )
    return (
        f"Words the model and these labels read the opposite way: {summary['terms']:,}, in "
        f"{100 * summary['share_holding'][0]:.0f} % of the labelled posts (the model flags the posts holding the word "
        f"more often than the rest while the labels call them {positive} less often, or the reverse; words in "
        f"{MIN_POSTS} or more posts, leans at least {MIN_GAP:g} apart in log-odds; of all the posts, the model flags "
        f"{100 * summary['overall'][0]:.0f} % and the labels call {100 * summary['overall'][1]:.0f} % {positive}): "
        f"{shown}. A calibration keeps the model's order of the posts, so it cannot undo what the model learnt "
        "such a word means: these labels hold a definition the model does not share there; correct the head on them "
        "(`faim calibrate --head`, for a model that scores posts one by one) or train on them."
    )

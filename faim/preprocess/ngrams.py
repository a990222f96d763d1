"""Texts as bags of TF-IDF-weighted character and word n-grams, with numpy alone: what the ``ngram_text`` encoder
reads and what ``faim.runtime`` gives its exported graph.

The n-grams are scikit-learn's (``CountVectorizer`` with ``lowercase=True``): ``char_wb`` takes character n-grams
inside each whitespace-separated word padded with one space on each side (a word shorter than ``n`` counts once);
``word`` takes runs of two or more word characters and joins ``n`` of them with a space. Each family's counts
become ``(1 + log count) * idf``, L2-normalised (``TfidfTransformer(sublinear_tf=True)``); the families' columns
follow each other.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

WHITE_SPACES = re.compile(r"\s\s+")
TOKEN = re.compile(r"(?u)\b\w\w+\b")

Family = tuple[str, tuple[int, int], dict[str, int], list[float]]
"""``(analyzer, (shortest, longest), n-gram → column, idf of each column)``."""


def char_wb_ngrams(text: str, shortest: int, longest: int) -> list[str]:
    """Character n-grams of ``text`` (lowercased) within word boundaries, as scikit-learn's ``char_wb``."""
    grams = []
    for word in WHITE_SPACES.sub(" ", text.lower()).split():
        padded = f" {word} "
        for n in range(shortest, longest + 1):
            if len(padded) <= n:
                grams.append(padded)
                break
            grams += [padded[i : i + n] for i in range(len(padded) - n + 1)]
    return grams


def word_ngrams(text: str, shortest: int, longest: int) -> list[str]:
    """Word n-grams of ``text`` (lowercased), as scikit-learn's ``word`` analyzer with its default token pattern."""
    tokens = TOKEN.findall(text.lower())
    return [" ".join(tokens[i : i + n]) for n in range(shortest, longest + 1) for i in range(len(tokens) - n + 1)]


ANALYZERS: dict[str, Callable[[str, int, int], list[str]]] = {"char_wb": char_wb_ngrams, "word": word_ngrams}


def analyzer(name: str, span: Sequence[int]) -> Callable[[str], list[str]]:
    """``text -> n-grams`` of one family (a picklable callable, for scikit-learn's ``CountVectorizer``)."""
    return FamilyAnalyzer(name, int(span[0]), int(span[1]))


class FamilyAnalyzer:
    """One family's n-grams of a text (``analyzer``)."""

    def __init__(self, name: str, shortest: int, longest: int) -> None:
        if name not in ANALYZERS:
            raise ValueError(f"n-gram analyzer {name!r} is not one of {', '.join(ANALYZERS)}")
        self.name, self.shortest, self.longest = name, shortest, longest

    def __call__(self, text: str) -> list[str]:
        return ANALYZERS[self.name](text, self.shortest, self.longest)


class NgramBags:
    """Texts → ``(indices int64 [M], offsets int64 [N], weights float32 [M])``: each text's TF-IDF n-gram weights as
    one bag (the columns and weights of text ``i`` run from ``offsets[i]`` to the next offset), as
    ``nn.EmbeddingBag`` reads them. Picklable.

    Args:
        families: The fitted families, columns of each counted from 0 (``Family``).
        fold: ``text -> text`` applied first (homoglyph folding), or ``None``.
    """

    def __init__(self, families: Sequence[Family], fold: Callable[[str], str] | None = None) -> None:
        self.families = [(name, tuple(span), dict(vocabulary), list(idf)) for name, span, vocabulary, idf in families]
        self.fold = fold
        self.analyzers = [analyzer(name, span) for name, span, _, _ in self.families]
        self.idf = [np.asarray(idf, dtype=np.float64) for _, _, _, idf in self.families]
        self.starts = np.cumsum([0] + [len(vocabulary) for _, _, vocabulary, _ in self.families])[:-1].tolist()

    @property
    def columns(self) -> int:
        return sum(len(vocabulary) for _, _, vocabulary, _ in self.families)

    def bag(self, text: str) -> tuple[list[int], list[float]]:
        """One text's columns and weights, family by family, columns ascending within each."""
        if self.fold is not None:
            text = self.fold(text)
        columns: list[int] = []
        weights: list[float] = []
        for (_, _, vocabulary, _), analyze, idf, start in zip(self.families, self.analyzers, self.idf, self.starts):
            counts = Counter(vocabulary[gram] for gram in analyze(text) if gram in vocabulary)
            if not counts:
                continue
            found = sorted(counts)
            values = np.array([(1.0 + math.log(counts[column])) * idf[column] for column in found])
            columns += [start + column for column in found]
            weights += (values / np.sqrt(np.sum(values * values))).tolist()
        return columns, weights

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        bags = [self.bag(text) for text in texts]
        sizes = [len(columns) for columns, _ in bags]
        offsets = np.cumsum([0, *sizes])[:-1].astype(np.int64)
        indices = np.array([c for columns, _ in bags for c in columns], dtype=np.int64)
        weights = np.array([w for _, values in bags for w in values], dtype=np.float32)
        return indices, offsets, weights


def write_vocabulary(families: Sequence[Family], path: Path) -> None:
    """Write fitted families as JSON: per family its analyzer, n-gram lengths, terms in column order and idf."""
    stored = [
        {"analyzer": name, "ngrams": list(span), "terms": sorted(vocabulary, key=vocabulary.get), "idf": list(idf)}
        for name, span, vocabulary, idf in families
    ]
    path.write_text(json.dumps({"families": stored}, ensure_ascii=False), encoding="utf-8")


def read_vocabulary(path: Path) -> list[Family]:
    """The families ``write_vocabulary`` wrote."""
    stored: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["families"]
    return [
        (f["analyzer"], tuple(f["ngrams"]), {term: i for i, term in enumerate(f["terms"])}, f["idf"]) for f in stored
    ]

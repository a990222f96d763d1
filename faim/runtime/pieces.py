"""SentencePiece unigram pieces without SentencePiece: the ``use_text`` encoder's tokenisation for ``faim.runtime``.

An export carries the model's pieces with their scores and its precompiled normalisation map (``PIECES``). A text is
normalised as SentencePiece's normaliser does it (``CharsMap``: at each place the longest text the precompiled NFKC
map holds replaced, runs of spaces made one, both ends stripped of spaces, spaces written ``▁`` and one put in front),
then cut by ``tokenizers``' unigram model into the pieces of highest total score (a Viterbi over every piece that
matches at each position, a character no piece starts with scored 10 below the lowest score, as SentencePiece does).
That model writes a run of such characters as one unknown piece, SentencePiece as one per character, and runs
``<unk>`` written out in the text together with unknown characters or another ``<unk>`` beside it: each such run is
split back into one piece per character and one per ``<unk>``. An export checks that this gives the ``use_text``
encoder's own piece ids on sample texts before it is kept.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Encoding, Tokenizer, models

PIECES = "pieces.json"
SPACE = "▁".encode()
"""How SentencePiece writes a space in the texts it cuts, as UTF-8."""


def write_pieces(pieces: list[tuple[str, float]], charsmap: bytes, markers: dict[str, int], path: Path) -> None:
    """Write a unigram model: its pieces and scores in id order, its precompiled normalisation map and the ids of
    its ``bos``, ``eos`` and ``unk`` pieces."""
    stored = {"pieces": pieces, "precompiled_charsmap": base64.b64encode(charsmap).decode("ascii")} | markers
    path.write_text(json.dumps(stored, ensure_ascii=False), encoding="utf-8")


class UnigramPieces:
    """Texts → piece ids, as SentencePiece's unigram model cuts them (see the module).

    Args:
        path: A file ``write_pieces`` wrote.
    """

    def __init__(self, path: Path) -> None:
        stored: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.bos, self.eos, self.unk = int(stored["bos"]), int(stored["eos"]), int(stored["unk"])
        pieces = [(str(piece), float(score)) for piece, score in stored["pieces"]]
        self.unknown_piece = pieces[self.unk][0]
        self.model = Tokenizer(models.Unigram(pieces, unk_id=self.unk, byte_fallback=False))
        self.normalize = CharsMap(base64.b64decode(stored["precompiled_charsmap"])).normalize

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """The piece ids of each text, without sentence markers; one unknown piece for a text with nothing to cut."""
        normalized = [self.normalize(text) for text in texts]
        cut = self.model.encode_batch(normalized, add_special_tokens=False)
        return [self.one_unknown_per_character(text, encoding) or [self.unk] for text, encoding in zip(normalized, cut)]

    def one_unknown_per_character(self, normalized: str, encoding: Encoding) -> list[int]:
        """The ids of ``normalized``'s encoding, each run of unknown pieces repeated once per piece SentencePiece
        writes for it (``unknown_pieces``; the offsets count characters of ``normalized``)."""
        ids = []
        for index, (start, end) in zip(encoding.ids, encoding.offsets):
            ids += [index] * self.unknown_pieces(normalized[start:end]) if index == self.unk else [index]
        return ids

    def unknown_pieces(self, run: str) -> int:
        """How many unknown pieces SentencePiece cuts ``run`` into, a run the unigram model writes as one: one per
        unknown piece written out in it (``<unk>``, which that model runs together with its neighbours too), one per
        other character (none of which is the first of ``<unk>``: a piece starts with it)."""
        return len(run) - run.count(self.unknown_piece) * (len(self.unknown_piece) - 1)


class CharsMap:
    """SentencePiece's normaliser of a precompiled map (``nmt_nfkc``'s, say), as its ``Normalizer`` runs over a text's
    UTF-8 bytes: at each place the longest key the map holds is replaced by its text, else one character is kept as it
    is. The map is a darts-clone double array of the keys (``units``) followed by their texts, each ending in a zero
    byte (``texts``). ``tokenizers``' port of it (``normalizers.Precompiled``) replaces a grapheme at a time instead,
    and so drops an accent after a character the map replaces (``™`` with an acute accent becomes ``TM``) and leaves
    half-width kana and compatibility jamo uncomposed."""

    def __init__(self, charsmap: bytes) -> None:
        size = int.from_bytes(charsmap[:4], "little") if charsmap else 0
        # an empty map (an identity normaliser's) as an array of one block of 256 units holding no key
        self.units: list[int] = np.frombuffer(charsmap[4 : 4 + size], "<u4").tolist() or [0] * 256
        self.texts = charsmap[4 + size :]
        # an ASCII byte that no key begins with together with the byte after it normalises as it does alone (``ascii``),
        # as most of a text does; ``pairs`` holds the first two bytes of each longer key beginning with an ASCII byte
        self.ascii = [self.prefix(bytes([byte]), 0)[0] for byte in range(128)]
        units, root = self.units, offset(self.units[0])
        firsts = {byte: root ^ byte for byte in range(128) if units[root ^ byte] & 0x800000FF == byte}
        self.pairs = frozenset(
            byte << 8 | after
            for byte, node in firsts.items()
            for after in range(256)
            if units[node ^ offset(units[node]) ^ after] & 0x800000FF == after
        )

    def prefix(self, data: bytes, start: int) -> tuple[bytes, int]:
        """What ``data`` normalises to at ``start``, and how many of its bytes that takes: the text of the longest key
        of the map ``data`` holds there, or the character there as it is."""
        units, longest, value = self.units, 0, 0
        node = offset(units[0])
        for end in range(start, len(data)):
            node ^= data[end]  # a byte's child stays in its parent's block of 256 units
            unit = units[node]
            if unit & 0x800000FF != data[end]:  # no key goes on with this byte
                break
            node ^= offset(unit)
            if unit & 0x100:  # a key ends here: where its text begins is the value of the unit below
                longest, value = end + 1 - start, units[node] & 0x7FFFFFFF
        if longest:
            return self.texts[value : self.texts.index(0, value)], longest
        length = utf8_length(data[start])
        return data[start : start + length], length

    def normalize(self, text: str) -> str:
        """``text`` as the pieces are matched against it: normalised by the map, with no space at either end, one
        for each run of spaces, each written ``▁`` and one put in front (empty when nothing but spaces is left)."""
        data, start = text.encode("utf-8"), 0
        while start < len(data) and (found := self.prefix(data, start))[0] == b" ":
            start += found[1]
        if start == len(data):
            return ""
        normalized, after_space = bytearray(SPACE), True
        last = len(data) - 1
        while start <= last:
            byte = data[start]
            if byte < 0x80 and (start == last or byte << 8 | data[start + 1] not in self.pairs):
                replaced, length = self.ascii[byte], 1
            else:
                replaced, length = self.prefix(data, start)
            start += length
            if after_space:
                replaced = replaced.lstrip(b" ")
            if replaced:
                normalized += replaced.replace(b" ", SPACE)
                after_space = replaced.endswith(b" ")
        while normalized.endswith(SPACE):
            del normalized[-len(SPACE) :]
        return normalized.decode("utf-8")


def offset(unit: int) -> int:
    """Where a darts-clone unit's children are, relative to it."""
    return (unit >> 10) << ((unit & 0x200) >> 6)


def utf8_length(first: int) -> int:
    """How many bytes the UTF-8 character whose first byte is ``first`` takes."""
    return 1 if first < 0x80 else 2 if first < 0xE0 else 3 if first < 0xF0 else 4

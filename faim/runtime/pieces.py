"""SentencePiece unigram pieces without SentencePiece: the ``use_text`` encoder's tokenisation for ``faim.runtime``.

An export carries the model's pieces with their scores and its precompiled normalisation map (``PIECES``). A text is
normalised by ``tokenizers``' port of SentencePiece's normaliser (the precompiled NFKC map; runs of spaces made one,
both ends stripped, spaces written ``▁`` and one put in front), then cut into the pieces of highest total score
(Viterbi over every piece that matches at each position; a character no piece starts with is one unknown piece
scored 10 below the lowest score; ties keep the piece found first). That is what the ``use_text`` encoder's own
tokenizer does, unknown characters one piece each; an export checks the two agree on sample texts before it is kept.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Regex, normalizers, pre_tokenizers

PIECES = "pieces.json"
UNKNOWN_PENALTY = 10.0


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
        self.ids = {piece: index for index, (piece, _) in enumerate(stored["pieces"])}  # a repeated piece: its last id
        self.scores = {piece: float(stored["pieces"][index][1]) for piece, index in self.ids.items()}
        self.longest = max(len(piece) for piece in self.ids)
        self.prefixes = {piece[:end] for piece in self.ids for end in range(1, len(piece))}
        """Strings some longer piece starts with: past one that is neither this nor a piece, no piece matches."""
        self.unknown_score = min(self.scores.values()) - UNKNOWN_PENALTY
        self.normalizer = normalizers.Sequence(
            [
                normalizers.Precompiled(base64.b64decode(stored["precompiled_charsmap"])),
                normalizers.Replace(Regex(" {2,}"), " "),
                normalizers.Strip(),
            ]
        )
        self.spaces = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False)

    def normalize(self, text: str) -> str:
        """``text`` as the pieces are matched against it (empty when nothing but spaces is left)."""
        normalized = self.normalizer.normalize_str(text)
        return "".join(part for part, _ in self.spaces.pre_tokenize_str(normalized)) if normalized else ""

    def encode(self, text: str) -> list[int]:
        """The piece ids of ``text``, without sentence markers; one unknown piece for a text with nothing to cut."""
        normalized = self.normalize(text)
        if not normalized:
            return [self.unk]
        size = len(normalized)
        best = [0.0] + [-np.inf] * size
        came_from = [(0, self.unk)] * (size + 1)
        for start in range(size):
            matched_one = False
            for end in range(start + 1, min(size, start + self.longest) + 1):
                piece = normalized[start:end]
                index = self.ids.get(piece)
                if index is None:
                    if piece not in self.prefixes:
                        break
                    continue
                score = best[start] + self.scores[piece]
                if score > best[end]:
                    best[end], came_from[end] = score, (start, index)
                matched_one = matched_one or end == start + 1
            if not matched_one and best[start] + self.unknown_score > best[start + 1]:
                best[start + 1], came_from[start + 1] = best[start] + self.unknown_score, (start, self.unk)
        ids, end = [], size
        while end > 0:
            end, index = came_from[end]
            ids.append(index)
        return ids[::-1]

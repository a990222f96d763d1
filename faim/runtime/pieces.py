"""SentencePiece unigram pieces without SentencePiece: the ``use_text`` encoder's tokenisation for ``faim.runtime``.

An export carries the model's pieces with their scores and its precompiled normalisation map (``PIECES``). A text is
normalised by ``tokenizers``' port of SentencePiece's normaliser (the precompiled NFKC map; runs of spaces made one,
both ends stripped, spaces written ``▁`` and one put in front), then cut by ``tokenizers``' unigram model into the
pieces of highest total score (a Viterbi over every piece that matches at each position, a character no piece
starts with scored 10 below the lowest score, as SentencePiece does). That model writes a run of such characters as
one unknown piece, SentencePiece as one per character, and runs ``<unk>`` written out in the text together with
unknown characters or another ``<unk>`` beside it: each such run is split back into one piece per character and one
per ``<unk>``. An export checks that this gives the ``use_text`` encoder's own piece ids on sample texts before it is
kept.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tokenizers import Encoding, Regex, Tokenizer, models, normalizers, pre_tokenizers

PIECES = "pieces.json"


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

"""An exported encoder part's preprocessing, with ``tokenizers``, Pillow and numpy: the same inputs the encoder's
own preprocessor gives the eager model, as numpy arrays in the graph's input order."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from tokenizers import Tokenizer

from faim.preprocess.confusables import ConfusableFolder
from faim.preprocess.e5_pieces import leetspeak_folder, piece_rows, read_tokenizer
from faim.preprocess.folding import fold_texts
from faim.preprocess.leetspeak import LeetspeakFolder
from faim.preprocess.meta import MetaRows
from faim.preprocess.ngrams import NgramBags, read_vocabulary
from faim.preprocess.padding import padded
from faim.preprocess.pixels import CentreCrop
from faim.runtime.bundle import FileResolver, setting, text, whole_number
from faim.runtime.pieces import UnigramPieces


class PieceCounter:
    """What ``LeetspeakFolder`` asks of a tokenizer (``tokenize``), answered by a ``tokenizers.Tokenizer``."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    def tokenize(self, word: str) -> list[str]:
        return self.tokenizer.encode(word, add_special_tokens=False).tokens


class TokenizedText:
    """Texts → ``(input_ids, attention_mask)``, int64 ``[N, T]``, padded to the longest, after the encoder's
    foldings (homoglyphs, then leetspeak).

    Args:
        tokenizer: ``tokenizer.json``, truncating and padding as the encoder does.
        confusables: The homoglyph tables (``ConfusableFolder.to_dict`` as JSON), or ``None`` not to fold them.
        leetspeak: Fold leetspeak as this tokenizer reads it.
    """

    def __init__(self, tokenizer: Path, confusables: Path | None, leetspeak: bool) -> None:
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.confusables = read_folder(confusables)
        self.leetspeak = LeetspeakFolder(PieceCounter(self.tokenizer)) if leetspeak else None

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        encoded = self.tokenizer.encode_batch(fold_texts(texts, self.confusables, self.leetspeak))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        return ids, mask


class PieceText:
    """Texts → ``(input_ids, attention_mask)``, int64 ``[N, T]`` padded with 0 to the longest, as the ``use_text``
    encoder gives them: homoglyphs folded first when ``confusables`` names the tables, then the sentence markers
    around the text's pieces (``faim.runtime.pieces``), cut to ``max_length`` keeping the closing marker."""

    def __init__(self, pieces: Path, max_length: int, confusables: Path | None) -> None:
        self.pieces = UnigramPieces(pieces)
        self.max_length = max_length
        self.confusables = read_folder(confusables)

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        texts = fold_texts(texts, self.confusables)
        bos, eos = self.pieces.bos, self.pieces.eos
        rows = [[bos, *pieces, eos] for pieces in self.pieces.encode_batch(texts)]
        rows = [row[: self.max_length - 1] + [eos] if len(row) > self.max_length else row for row in rows]
        return padded(rows, 0)


class E5PieceText:
    """Texts → ``(input_ids, attention_mask)``, int64 ``[N, T]`` padded with ``<pad>`` to the longest, as the
    ``e5_text`` encoder gives them: homoglyphs folded first when ``confusables`` names the tables, then leetspeak
    where ``leetspeak`` (as these pieces read it), then the prefix, the markers and the pieces
    (``faim.preprocess.e5_pieces``), cut to ``max_length``."""

    def __init__(self, pieces: Path, max_length: int, prefix: str, confusables: Path | None, leetspeak: bool) -> None:
        self.pieces, self.special = read_tokenizer(pieces)
        self.max_length = max_length
        self.prefix = prefix
        self.confusables = read_folder(confusables)
        self.leetspeak = leetspeak_folder(self.pieces) if leetspeak else None

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        texts = fold_texts(texts, self.confusables, self.leetspeak)
        return padded(piece_rows(self.pieces, self.special, texts, self.max_length, self.prefix), self.special["pad"])


def read_folder(confusables: Path | None) -> ConfusableFolder | None:
    """The homoglyph folding whose tables ``confusables`` holds (``ConfusableFolder.to_dict`` as JSON), if any."""
    tables = json.loads(confusables.read_text(encoding="utf-8")) if confusables else None
    return ConfusableFolder.from_dict(tables) if tables else None


class CroppedPictures:
    """Pictures → normalised pixels ``[N, 3, size, size]`` float32 (``faim.preprocess.pixels``)."""

    def __init__(self, crop: CentreCrop) -> None:
        self.crop = crop

    def __call__(self, images: list[Image.Image]) -> tuple[np.ndarray]:
        return (np.ascontiguousarray(self.crop(images)),)


class MetaFeatures:
    """``Post.meta`` mappings → ``[N, F]`` float32 features (``faim.preprocess.meta``); ``check`` names a bad field."""

    def __init__(self, rows: MetaRows) -> None:
        self.rows = rows
        self.check = rows.check

    def __call__(self, metas: list[Any]) -> tuple[np.ndarray]:
        return (self.rows(metas),)


PREPROCESSING = ("text", "pieces", "e5_pieces", "ngrams", "image", "meta")
"""The ``type``s of preprocessing an export's encoder parts describe (``faim.export.preprocessing`` writes them)."""


def switch(spec: dict[str, Any], key: str, default: bool | None = None) -> bool:
    """The true-or-false setting ``key`` of a preprocessing entry (``default`` where it has none, if one is given).

    Raises:
        KeyError: Naming ``key`` where the entry lacks it and there is no ``default``.
        ValueError: Naming ``key`` and its value when it is not true or false (``"yes"``, 1).
    """
    value = spec[key] if default is None else spec.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{key} {value!r} is not true or false")
    return value


Preprocessing = TokenizedText | PieceText | E5PieceText | NgramBags | CroppedPictures | MetaFeatures
"""What preprocesses an exported encoder part's elements into its graph's inputs."""


def part_preprocessing(spec: dict[str, Any], files: FileResolver) -> Callable[[], Preprocessing]:
    """What builds the preprocessing an exported encoder part's manifest entry describes, the entry read (its
    settings checked, each file it names found by ``files`` among the export's listed files:
    ``faim.file_digests.listed_file``) but no file opened: reading the entry, whose faults are the manifest's, and
    building the preprocessing from the export's verified files are apart.

    Raises:
        ValueError: Naming a ``type`` the runtime does not read, a file ``files`` refuses, or a setting the
            preprocessing refuses.
        KeyError: Naming a setting the entry lacks.
    """
    confusables = files("confusables", spec["confusables"]) if spec.get("confusables") else None
    if spec["type"] == "text":
        return partial(TokenizedText, files("tokenizer", spec["tokenizer"]), confusables, switch(spec, "leetspeak"))
    if spec["type"] == "pieces":
        return partial(
            PieceText, files("pieces", spec["pieces"]), setting(spec, "max_length", whole_number), confusables
        )
    if spec["type"] == "e5_pieces":
        # an e5 export written before e5_text folded leetspeak has no "leetspeak"
        leetspeak = switch(spec, "leetspeak", False)
        pieces = files("pieces", spec["pieces"])
        max_length, prefix = setting(spec, "max_length", whole_number), setting(spec, "prefix", text)
        return partial(E5PieceText, pieces, max_length, prefix, confusables, leetspeak)
    if spec["type"] == "ngrams":
        return partial(ngram_bags, files("vocabulary", spec["vocabulary"]), confusables)
    if spec["type"] == "image":
        crop = CentreCrop(
            spec["size"], tuple(spec["mean"]), tuple(spec["std"]), spec["interpolation"], spec["crop_pct"]
        )
        return partial(CroppedPictures, crop)
    if spec["type"] == "meta":
        return partial(MetaFeatures, MetaRows(spec["fields"], switch(spec, "shares")))
    valid = ", ".join(PREPROCESSING)
    raise ValueError(f"preprocessing type {spec['type']!r} is not one the runtime reads; valid: {valid}")


def ngram_bags(vocabulary: Path, confusables: Path | None) -> NgramBags:
    """The n-gram preprocessing of the vocabulary file ``vocabulary`` and the homoglyph tables ``confusables``."""
    return NgramBags(read_vocabulary(vocabulary), read_folder(confusables))

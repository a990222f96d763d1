"""Each encoder's preprocessing written out for ``faim.runtime``: a tokenizer file and folding tables for text, the
unigram pieces of ``use_text``'s SentencePiece model and of ``e5_text``'s packed file, the n-gram vocabulary and
its IDF weights for ``ngram_text``, the centre crop's numbers for pictures, the fields of numeric metadata. A
preprocessing the runtime cannot repeat exactly fails the export, naming the encoder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer
from transformers.convert_slow_tokenizer import convert_slow_tokenizer

from faim.encoders.e5_text import E5PieceTokenizer
from faim.encoders.image_preprocess import ImagePreprocessor
from faim.encoders.ngram_text import NgramFeatures
from faim.encoders.text_normalize import confusable_folder
from faim.encoders.text_preprocess import TextPreprocessor
from faim.encoders.use_text import BOS, EOS, UNK, PieceTokenizer, read_sentencepiece_model
from faim.preprocess.e5_pieces import write_tokenizer
from faim.preprocess.meta import MetaRows
from faim.preprocess.ngrams import write_vocabulary
from faim.runtime.bundle import ExportError
from faim.runtime.pieces import PIECES, write_pieces

TOKENIZER = "tokenizer.json"
CONFUSABLES = "confusables.json"
NGRAMS = "ngrams.json"
E5_PIECES = "e5_pieces.json"


def preprocessing_spec(preprocess: Any, directory: Path, label: str) -> dict[str, Any]:
    """Write what ``preprocess`` needs to ``directory`` and return its description (paths relative to
    ``directory``'s export root are made by the caller).

    Args:
        preprocess: An encoder's preprocessor.
        directory: The encoder part's folder in the export.
        label: The encoder, for messages (``"text (hf_text)"``).

    Raises:
        ExportError: For a preprocessing the runtime cannot repeat.
    """
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(preprocess, TextPreprocessor):
        return text_spec(preprocess, directory)
    if isinstance(preprocess, PieceTokenizer):
        return pieces_spec(preprocess, directory, label)
    if isinstance(preprocess, E5PieceTokenizer):
        write_tokenizer(preprocess.pieces, preprocess.special, directory / E5_PIECES)
        spec = {"type": "e5_pieces", "pieces": str(directory / E5_PIECES), "max_length": preprocess.max_length}
        spec |= {"prefix": preprocess.prefix, "leetspeak": preprocess.leetspeak is not None}
        return spec | confusables_spec(preprocess.fold_confusables, directory)
    if isinstance(preprocess, NgramFeatures):
        write_vocabulary(preprocess.bags.families, directory / NGRAMS)
        return {"type": "ngrams", "vocabulary": str(directory / NGRAMS)} | confusables_spec(
            preprocess.bags.fold is not None, directory
        )
    if isinstance(preprocess, ImagePreprocessor):
        if not preprocess.crops_in_one_resize:
            raise ExportError(
                f"{label}: its picture preprocessing (crop_mode={preprocess.crop_mode!r}, size "
                f"{preprocess.image_size}) has no export; the runtime repeats square centre crops only"
            )
        crop = preprocess.centre_crop()
        return {
            "type": "image",
            "size": crop.size,
            "mean": list(crop.mean),
            "std": list(crop.std),
            "interpolation": crop.interpolation,
            "crop_pct": crop.crop_pct,
        }
    if isinstance(preprocess, MetaRows):
        return {"type": "meta", "fields": preprocess.fields, "shares": preprocess.shares}
    raise ExportError(
        f"{label}: its preprocessing ({type(preprocess).__name__}) has no export; the runtime reads "
        "transformers-tokenised text, SentencePiece and e5 pieces, n-grams, centre-cropped pictures and numeric "
        "metadata"
    )


def text_spec(preprocess: TextPreprocessor, directory: Path) -> dict[str, Any]:
    """Write the tokenizer (truncating and padding as the encoder does, each on the side its tokenizer does it) and,
    when the encoder folds homoglyphs, the confusables tables; the description names them."""
    source = preprocess.tokenizer
    if getattr(source, "is_fast", False):
        tokenizer = Tokenizer.from_str(source.backend_tokenizer.to_str())
    else:
        tokenizer = convert_slow_tokenizer(source)
    tokenizer.enable_truncation(preprocess.max_length, direction=source.truncation_side)
    tokenizer.enable_padding(pad_id=source.pad_token_id, pad_token=source.pad_token, direction=source.padding_side)
    tokenizer.save(str(directory / TOKENIZER))
    spec = {"type": "text", "tokenizer": str(directory / TOKENIZER), "leetspeak": preprocess.leetspeak is not None}
    return spec | confusables_spec(preprocess.fold_confusables, directory)


def pieces_spec(preprocess: PieceTokenizer, directory: Path, label: str) -> dict[str, Any]:
    """Write the SentencePiece model's pieces, scores and normalisation map (``faim.runtime.pieces``); the
    description names them and the length texts are cut to."""
    if preprocess.model_file is None:
        raise ExportError(f"{label}: its tokenizer reads no SentencePiece model, so it has no export")
    model = read_sentencepiece_model(preprocess.model_file)
    pieces = [(piece.piece, piece.score) for piece in model.pieces]
    markers = {"bos": BOS, "eos": EOS, "unk": UNK}
    write_pieces(pieces, model.normalizer_spec.precompiled_charsmap, markers, directory / PIECES)
    spec = {"type": "pieces", "pieces": str(directory / PIECES), "max_length": preprocess.max_length}
    return spec | confusables_spec(preprocess.fold_confusables, directory)


def confusables_spec(fold: bool, directory: Path) -> dict[str, str | None]:
    """``{"confusables": path}`` of the homoglyph tables, written to ``directory`` when the encoder ``fold``s them,
    ``{"confusables": None}`` otherwise."""
    if not fold:
        return {"confusables": None}
    (directory / CONFUSABLES).write_text(json.dumps(confusable_folder().to_dict()), encoding="utf-8")
    return {"confusables": str(directory / CONFUSABLES)}

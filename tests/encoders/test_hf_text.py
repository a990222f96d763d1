"""The pieces a transformers encoder attributes to: the text's own, an unknown word's ``[UNK]`` included; its
sentence markers and padding are fixed. A folder without a model is named."""

from __future__ import annotations

from pathlib import Path

import pytest
from token_pieces import attributed_names

from faim.encoders.hf_text import HFTextEncoder
from faim.encoders.tiny_text import TinyTextEncoder


def test_the_texts_own_pieces_are_attributed_an_unknown_words_included_and_the_markers_are_not() -> None:
    encoder = TinyTextEncoder(dim=16)
    assert attributed_names(encoder, "ab a\U0001f633b") == ["a", "##b", "[UNK]"]
    inputs = encoder.preprocessor()(["ab", "a b c d"])
    pieces = encoder.token_embeddings()
    attributed = pieces.attributed(inputs["input_ids"], inputs["attention_mask"]).int().tolist()
    assert attributed == [[0, 1, 1, 0, 0, 0], [0, 1, 1, 1, 1, 0]]  # [CLS], [SEP] and padding left out


def test_a_folder_without_a_model_is_named(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=rf"hf_text: cannot load weights '{tmp_path}' \(resolved to {tmp_path}\)"):
        HFTextEncoder(str(tmp_path))

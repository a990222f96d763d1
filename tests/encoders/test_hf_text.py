"""The pieces a transformers encoder attributes to: the text's own, an unknown word's ``[UNK]`` included; its
sentence markers and padding are fixed. A folder without a model is named, and a max_length past the pieces the model
can number is refused when the encoder is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import tiny_recipe
from tiny_decoder import save_tiny_decoder
from token_pieces import attributed_names
from transformers import AutoModel, BertConfig, BertTokenizer, DebertaV2Config, PretrainedConfig, RobertaConfig

import faim
from faim.components import component_spec
from faim.encoders.hf_text import HFTextEncoder
from faim.encoders.tiny_text import TinyTextEncoder, tiny_vocab


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


def save_tiny_model(
    directory: Path, config_class: type[PretrainedConfig], positions: int, padding_side: str = "right", **settings: Any
) -> Path:
    """A random one-layer model of ``config_class`` numbering ``positions`` pieces (and other config ``settings``),
    with the character tokenizer padding on ``padding_side``, saved as a hub model is."""
    sizes = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32}
    config = config_class(vocab_size=len(tiny_vocab()), max_position_embeddings=positions, **sizes, **settings)
    AutoModel.from_config(config).save_pretrained(directory)
    BertTokenizer(vocab=tiny_vocab(), padding_side=padding_side).save_pretrained(directory)
    return directory


@pytest.mark.parametrize("config_class", [BertConfig, RobertaConfig])
@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_a_tokenizer_padding_on_the_left_embeds_a_text_as_it_does_alone(
    config_class: type[PretrainedConfig], pooling: str, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    # RoBERTa numbers positions past its padding piece itself: the tokenizer's, as in a real checkpoint
    weights = str(save_tiny_model(tmp_path, config_class, positions=40, padding_side="left", pad_token_id=0))
    encoder = HFTextEncoder(weights, pooling=pooling, max_length=32).eval()
    batch = encoder.preprocessor()(["ab c", "a much longer text than the first"])
    assert batch["attention_mask"][0, 0] == 0  # the short text is padded on the left
    with torch.no_grad():
        alone, batched = encoder(encoder.preprocessor()(["ab c"]))[0], encoder(batch)[0]
    assert torch.allclose(alone, batched, atol=1e-6)


def test_a_max_length_past_the_models_positions_is_refused_naming_both(tmp_path: Path) -> None:
    weights = str(save_tiny_model(tmp_path, BertConfig, positions=16))
    with pytest.raises(ValueError, match=r"^hf_text: max_length 64 must be between 1 and 16, the positions the model"):
        HFTextEncoder(weights, max_length=64)
    encoder = HFTextEncoder(weights, max_length=16)
    assert encoder(encoder.preprocessor()(["a" * 100])).shape == (1, 16)


def test_a_model_numbering_positions_past_its_padding_piece_reads_that_many_fewer(tmp_path: Path) -> None:
    weights = str(save_tiny_model(tmp_path, RobertaConfig, positions=20))  # positions 2 to 19: 18 pieces
    with pytest.raises(ValueError, match=r"hf_text: max_length 19 must be between 1 and 18"):
        HFTextEncoder(weights, max_length=19)
    encoder = HFTextEncoder(weights, max_length=18)
    assert encoder(encoder.preprocessor()(["a" * 100])).shape == (1, 16)


def test_a_model_with_relative_positions_only_reads_past_its_position_count(tmp_path: Path) -> None:
    weights = str(save_tiny_model(tmp_path, DebertaV2Config, positions=20, position_biased_input=False,
                                  relative_attention=True))  # fmt: skip
    encoder = HFTextEncoder(weights, max_length=60)
    assert encoder(encoder.preprocessor()(["a" * 100])).shape == (1, 16)
    with pytest.raises(ValueError, match=r"^hf_text: max_length 0 must be at least 1$"):
        HFTextEncoder(weights, max_length=0)


def test_a_recipes_max_length_past_the_models_positions_is_named_by_its_path(tmp_path: Path) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path / "run")
    weights = str(save_tiny_model(tmp_path / "bert", BertConfig, positions=512))
    recipe["model"]["encoders"]["text"] = {"type": "hf_text", "weights": weights, "max_length": 1024}
    with pytest.raises(ValueError, match=r"model\.encoders\.text: hf_text: max_length 1024 must be between 1 and 512"):
        faim.build(recipe)


def test_weights_given_as_a_path_are_read_and_written_to_the_recipe_as_their_string(tmp_path: Path) -> None:
    weights = save_tiny_model(tmp_path / "bert", BertConfig, positions=16)
    encoder = HFTextEncoder(weights, max_length=16)
    assert encoder(encoder.preprocessor()(["a b"])).shape == (1, 16)
    assert component_spec("encoder", encoder)["weights"] == str(weights)


def test_a_decoder_whose_tokenizer_has_no_padding_piece_pads_with_its_end_of_text_piece(tmp_path: Path) -> None:
    torch.manual_seed(0)
    encoder = HFTextEncoder(str(save_tiny_decoder(tmp_path, eos_token="<|endoftext|>")), max_length=16).eval()
    texts = ["hello world", "a b c hello world a"]
    with torch.no_grad():
        batched = encoder(encoder.preprocessor()(texts))
        alone = torch.cat([encoder(encoder.preprocessor()([text])) for text in texts])
    assert torch.allclose(batched, alone, atol=1e-6)


def test_a_tokenizer_with_neither_a_padding_nor_an_end_of_text_piece_is_refused_naming_the_weights(
    tmp_path: Path,
) -> None:
    weights = str(save_tiny_decoder(tmp_path))
    with pytest.raises(ValueError, match=rf"^hf_text: the tokenizer of {weights!r} has no padding piece"):
        HFTextEncoder(weights, max_length=16)


def test_a_folder_holding_its_weights_only_as_pickles_is_refused_saying_how_to_convert_them(tmp_path: Path) -> None:
    save_tiny_model(tmp_path, BertConfig, positions=16)
    torch.save(AutoModel.from_pretrained(tmp_path).state_dict(), tmp_path / "pytorch_model.bin")
    (tmp_path / "model.safetensors").unlink()
    said = r"hf_text reads weights from safetensors only, not the pickled pytorch_model\.bin this folder holds"
    with pytest.raises(OSError, match=rf"found in directory {tmp_path}; {said}: where you trust them, convert them"):
        HFTextEncoder(str(tmp_path), max_length=16)

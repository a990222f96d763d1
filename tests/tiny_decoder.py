"""A decoder checkpoint as users plug one into hf_text: a tiny random GPT-2 whose tokenizer, as GPT-2's, has no
padding piece."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoModel, GPT2Config, PreTrainedTokenizerFast


def save_tiny_decoder(directory: Path, **specials: str) -> Path:
    """A random one-layer GPT-2 with a word-level tokenizer holding the ``specials`` given (``eos_token``, ...) and,
    as GPT-2's, no padding piece, saved as a hub model is."""
    words = ["<|endoftext|>", "[UNK]", "a", "b", "c", "hello", "world"]
    pieces = Tokenizer(models.WordLevel({word: index for index, word in enumerate(words)}, unk_token="[UNK]"))
    pieces.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=pieces, unk_token="[UNK]", **specials).save_pretrained(directory)
    config = GPT2Config(vocab_size=len(words), n_embd=16, n_layer=1, n_head=2, n_positions=32, bos_token_id=0,
                        eos_token_id=0)  # fmt: skip
    AutoModel.from_config(config).save_pretrained(directory)
    return directory

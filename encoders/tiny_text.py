"""A tiny random BERT with a character-level vocabulary, built offline in milliseconds, for tests."""

from __future__ import annotations

import string
from typing import Any

from faim.encoders.hf_text import TransformerTextEncoder
from faim.registry import register_encoder

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARACTERS = string.ascii_lowercase + string.digits + string.punctuation


def tiny_vocab() -> dict[str, int]:
    """Special tokens, single characters and their ``##`` continuations."""
    tokens = SPECIAL_TOKENS + list(CHARACTERS) + [f"##{c}" for c in CHARACTERS]
    return {token: index for index, token in enumerate(tokens)}


@register_encoder("tiny_text")
class TinyTextEncoder(TransformerTextEncoder):
    """Random 2-layer BERT (hidden ``dim``); deterministic given the global torch seed.

    Args:
        dim: Hidden size (a multiple of 2: two attention heads).
        max_length: Truncate texts to this many tokens.
        pooling: ``"mean"`` or ``"cls"``.
        freeze: Keep the weights fixed.
        fold_confusables: Fold homoglyphs before tokenising, as ``hf_text`` does.
        fold_leetspeak: Fold leetspeak before tokenising, as ``hf_text`` does (its tokenizer reads single characters,
            so no reading has fewer pieces and the text stays as it is).
    """

    def __init__(
        self,
        dim: int = 32,
        max_length: int = 32,
        pooling: str = "mean",
        freeze: bool = False,
        fold_confusables: bool = False,
        fold_leetspeak: bool = False,
    ) -> None:
        from transformers import AutoModel, BertConfig, BertTokenizer  # heavy: loaded when first used

        vocab = tiny_vocab()
        config = BertConfig(
            vocab_size=len(vocab),
            hidden_size=dim,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=2 * dim,
            max_position_embeddings=max(64, max_length),
        )
        tokenizer = BertTokenizer(vocab=vocab)
        super().__init__(
            AutoModel.from_config(config), tokenizer, pooling, max_length, freeze, fold_confusables, fold_leetspeak
        )
        self.dim = dim

    def identity(self) -> dict[str, Any]:
        return super().identity() | {"dim": self.dim, "pooling": self.pooling}

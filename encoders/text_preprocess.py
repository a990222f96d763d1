"""Tokenisation for text encoders, as a picklable callable that runs in DataLoader workers."""

from __future__ import annotations

from typing import Any

import torch


class TextPreprocessor:
    """Tokenise a list of strings into padded ``input_ids`` / ``attention_mask`` tensors.

    Args:
        tokenizer: A transformers tokenizer (picklable).
        max_length: Texts are truncated to this many tokens, special tokens included.
    """

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        if not texts:
            empty = torch.zeros(0, 1, dtype=torch.long)
            return {"input_ids": empty, "attention_mask": empty.clone()}
        encoded = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]}

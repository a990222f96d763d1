"""Tokenisation for text encoders, as a picklable callable that runs in DataLoader workers."""

from __future__ import annotations

from typing import Any

import torch

from faim.encoders.text_normalize import fold_confusables, tables_digest
from faim.preprocess import leetspeak
from faim.preprocess.folding import fold_texts
from faim.preprocess.leetspeak import LeetspeakFolder


def folding_identity(fold_confusables: bool, fold_leetspeak: bool) -> dict[str, Any]:
    """What a text encoder's cache ``identity`` adds for each folding that is on: the digest of the homoglyph tables
    (``text_normalize.tables_digest``) for ``fold_confusables``, the leetspeak folding's ``REVISION`` for
    ``fold_leetspeak``; nothing for a plain encoder, whose embedding-cache keys stay those of encoders that predate
    the options."""
    return ({"fold_confusables": tables_digest()} if fold_confusables else {}) | (
        {"fold_leetspeak": leetspeak.REVISION} if fold_leetspeak else {}
    )


class TextPreprocessor:
    """Tokenise a list of strings into padded ``input_ids`` / ``attention_mask`` tensors.

    Args:
        tokenizer: A transformers tokenizer (picklable).
        max_length: Texts are truncated to this many tokens, special tokens included.
        fold_confusables: Fold homoglyphs to the Latin letters they imitate first (``faim.encoders.text_normalize``).
        fold_leetspeak: Then fold look-alike digits inside words to letters where ``tokenizer`` reads them better
            so (``faim.preprocess.leetspeak``).
    """

    def __init__(
        self, tokenizer: Any, max_length: int, fold_confusables: bool = False, fold_leetspeak: bool = False
    ) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.fold_confusables = fold_confusables
        self.leetspeak = LeetspeakFolder(tokenizer) if fold_leetspeak else None

    def __call__(self, texts: list[str]) -> dict[str, torch.Tensor]:
        if not texts:
            empty = torch.zeros(0, 1, dtype=torch.long)
            return {"input_ids": empty, "attention_mask": empty.clone()}
        texts = fold_texts(texts, fold_confusables if self.fold_confusables else None, self.leetspeak)
        encoded = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]}

    def length(self, text: str) -> int:
        """How many tokens ``text`` is read as before it is cut to ``max_length``, special tokens included
        (``TokenEmbeddings.length``)."""
        (folded,) = fold_texts([text], fold_confusables if self.fold_confusables else None, self.leetspeak)
        return len(self.tokenizer(folded, truncation=False, verbose=False)["input_ids"])

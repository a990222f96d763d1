"""A text encoder's tokenisation: a long text is folded and tokenised from its start alone, read as it is whole."""

from __future__ import annotations

from typing import Any

from faim.encoders.text_normalize import fold_confusables
from faim.encoders.tiny_text import TinyTextEncoder


class Handed:
    """A tokenizer noting the longest text it is handed."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer, self.longest = tokenizer, 0

    def __call__(self, texts: str | list[str], **options: Any) -> Any:
        self.longest = max([self.longest, *map(len, [texts] if isinstance(texts, str) else texts)])
        return self.tokenizer(texts, **options)


def test_a_long_text_is_tokenised_from_its_start_alone_into_the_pieces_of_the_whole() -> None:
    preprocessor = TinyTextEncoder(dim=16, max_length=32, fold_confusables=True).preprocessor()
    tokenizer = preprocessor.tokenizer
    text = " ".join(["h\u0430te", "ab", "a b c"] * 5_000)  # a Cyrillic "а" in a Latin word, folded
    whole = tokenizer([fold_confusables(text), "ab"], padding=True, truncation=True, max_length=32, return_tensors="pt")
    preprocessor.tokenizer = handed = Handed(tokenizer)
    read = preprocessor([text, "ab"])
    assert read["input_ids"].tolist() == whole["input_ids"].tolist()
    assert read["attention_mask"].tolist() == whole["attention_mask"].tolist()
    assert handed.longest < 1000 < len(text)

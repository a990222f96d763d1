"""An exported encoder part's preprocessing entry is read, its settings checked, before any post is read."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from faim.encoders.text_normalize import confusable_folder, fold_confusables
from faim.runtime.preprocess import TokenizedText, part_preprocessing


def listed(setting: str, name: Any) -> Path:
    """Every file the entry names, found where it is named (no file is opened while an entry is read)."""
    return Path(name)


@pytest.mark.parametrize(
    ("spec", "wrong"),
    [
        (
            {"type": "pieces", "pieces": "p", "max_length": "512"},
            "max_length: expected a whole number of at least 1, got '512'",
        ),
        (
            {"type": "pieces", "pieces": "p", "max_length": 2.5},
            "max_length: expected a whole number of at least 1, got 2.5",
        ),
        (
            {"type": "pieces", "pieces": "p", "max_length": 0},
            "max_length: expected a whole number of at least 1, got 0",
        ),
        ({"type": "e5_pieces", "pieces": "p", "max_length": True, "prefix": ""}, "max_length: expected a whole"),
        ({"type": "e5_pieces", "pieces": "p", "max_length": 64, "prefix": 5}, "prefix: expected a string, got 5"),
        ({"type": "e5_pieces", "pieces": "p", "max_length": 64, "prefix": None}, "prefix: expected a string"),
        ({"type": "meta", "fields": "likes", "shares": False}, "fields 'likes' is not a list of Post.meta keys"),
        ({"type": "meta", "fields": ["likes", 1], "shares": False}, "fields ['likes', 1] is not a list of Post"),
        ({"type": "meta", "fields": ["likes"], "shares": "yes"}, "shares 'yes' is not true or false"),
    ],
)
def test_a_setting_of_the_wrong_type_is_refused_as_the_entry_is_read_naming_it(spec: dict, wrong: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(wrong)}"):
        part_preprocessing(spec, listed)


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "pieces", "pieces": "p", "max_length": 512},
        {"type": "e5_pieces", "pieces": "p", "max_length": 64, "prefix": "query: "},
        {"type": "meta", "fields": ["likes", "shares"], "shares": True},
    ],
)
def test_settings_of_their_types_are_read(spec: dict) -> None:
    assert callable(part_preprocessing(spec, listed))


class Handed:
    """A tokenizer noting the longest text it is handed."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer, self.truncation, self.longest = tokenizer, tokenizer.truncation, 0

    def encode(self, text: str) -> Any:
        self.longest = max(self.longest, len(text))
        return self.tokenizer.encode(text)

    def encode_batch(self, texts: list[str]) -> Any:
        self.longest = max([self.longest, *map(len, texts)])
        return self.tokenizer.encode_batch(texts)


def test_a_long_text_is_tokenised_from_its_start_alone_into_the_pieces_of_the_whole(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["[UNK]", "[PAD]", "hate", "ab"]
    tokenizer = Tokenizer(models.WordLevel({word: i for i, word in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.enable_truncation(16)
    tokenizer.enable_padding(pad_id=1, pad_token="[PAD]")
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    text = " ".join(["h\u0430te", "ab", "a b c"] * 50_000)  # a Cyrillic "а" in a Latin word, folded
    folder = tmp_path / "confusables.json"
    folder.write_text(json.dumps(confusable_folder().to_dict()), encoding="utf-8")
    reading = TokenizedText(tmp_path / "tokenizer.json", folder, False)
    whole = reading.tokenizer.encode_batch([fold_confusables(text), "ab"])
    reading.tokenizer = handed = Handed(reading.tokenizer)
    ids, mask = reading([text, "ab"])
    assert ids.tolist() == [e.ids for e in whole] and mask.tolist() == [e.attention_mask for e in whole]
    assert ids[0].tolist()[:4] == [2, 3, 0, 0]  # the folded word read
    assert handed.longest < 1000 < len(text)

"""Folding homoglyphs to the Latin letters they imitate: mixed-script words only, NFKC first, and through the text
encoders' preprocessing (tokens and embedding-cache identity)."""

from __future__ import annotations

import random

import pytest
import torch

from faim.encoders import text_normalize
from faim.encoders.text_normalize import fold_confusables, latin_lookalikes
from faim.encoders.tiny_text import TinyTextEncoder
from faim.perturb.text import HOMOGLYPHS, homoglyphs


def test_a_latin_word_with_cyrillic_and_greek_lookalikes_reads_as_latin() -> None:
    assert fold_confusables("I h\u0430te th\u043ese \u0440e\u043eple") == "I hate those people"
    assert fold_confusables("\u039aILL \u0396ONE") == "KILL ZONE"  # Greek capital kappa and zeta


def test_capital_lookalikes_fold_to_capital_letters_an_i_like_one_to_i() -> None:
    assert fold_confusables("K\u0406LL ALL \u0406MM\u0406GRANTS") == "KILL ALL IMMIGRANTS"  # Cyrillic І
    assert fold_confusables("HATE \u0399SLAM, \u04c0LLEGALS") == "HATE ISLAM, ILLEGALS"  # Greek Ι, palochka
    assert fold_confusables("k\u0456ll \u0456mm\u0456grants") == "kill immigrants"  # Cyrillic і


def test_every_lookalike_of_a_letter_with_case_folds_to_a_letter_of_that_case() -> None:
    table = latin_lookalikes()
    assert all(letter.isupper() for glyph, letter in table.items() if glyph.isupper())
    assert all(letter.islower() for glyph, letter in table.items() if glyph.islower())


def test_words_wholly_in_another_script_are_kept() -> None:
    text = "Привет мир, \u0441\u043e\u0440 and καλημέρα"  # "сор" is all look-alikes, but wholly Cyrillic
    assert fold_confusables(text) == text


def test_compatibility_forms_fold_to_ascii() -> None:
    assert fold_confusables("ｈａｔｅ 𝐡𝐚𝐭𝐞 café") == "hate hate café"


@pytest.mark.parametrize("seed", range(5))
def test_the_homoglyph_perturbation_is_undone_where_a_word_keeps_a_latin_letter(seed: int) -> None:
    text = "Those people are vermin and should leave our country now"
    perturbed = homoglyphs(text, random.Random(seed), 0.5)
    assert perturbed != text
    for original, word in zip(text.split(), fold_confusables(perturbed).split()):
        if any(char.isascii() for char in word):  # a word whose every letter was replaced is wholly Cyrillic
            assert word == original


def test_every_homoglyph_of_the_perturbation_has_its_latin_letter_in_the_table() -> None:
    table = latin_lookalikes()
    assert {letter: table[glyph] for letter, glyph in HOMOGLYPHS.items()} == {letter: letter for letter in HOMOGLYPHS}
    assert all(len(value) == 1 and value.isascii() and value.isalpha() for value in table.values())


def test_a_folding_encoder_tokenises_the_evasion_as_the_plain_text_and_keys_its_cache_apart() -> None:
    torch.manual_seed(0)
    folding, plain = TinyTextEncoder(fold_confusables=True), TinyTextEncoder()
    evasion, text = ["I h\u0430te th\u043ese people"], ["I hate those people"]
    assert torch.equal(folding.preprocessor()(evasion)["input_ids"], plain.preprocessor()(text)["input_ids"])
    assert not torch.equal(plain.preprocessor()(evasion)["input_ids"], plain.preprocessor()(text)["input_ids"])
    assert folding.identity() != plain.identity()


def test_the_cache_digest_follows_the_revision_of_the_folding(monkeypatch: pytest.MonkeyPatch) -> None:
    before = text_normalize.tables_digest()
    monkeypatch.setattr(text_normalize, "REVISION", text_normalize.REVISION + 1)
    assert text_normalize.tables_digest() != before

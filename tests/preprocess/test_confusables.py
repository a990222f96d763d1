"""Folding homoglyphs word by word: a word keeps the marks written on its letters, and folding is idempotent."""

from __future__ import annotations

import random

import pytest

from faim.encoders.text_normalize import fold_confusables

STROKE, ACUTE = "\u0336", "\u0301"


def test_marks_on_the_letters_of_a_word_keep_it_one_word() -> None:
    struck = "".join(letter + STROKE for letter in "h\u0430te")  # struck through, with a Cyrillic "а"
    assert fold_confusables(struck) == "".join(letter + STROKE for letter in "hate")
    stressed = f"моло{ACUTE}ко"  # wholly Cyrillic, an accent marking the stress: kept
    assert fold_confusables(stressed) == stressed


def test_a_look_alike_letter_with_an_accent_folds_to_the_accented_latin_letter() -> None:
    assert fold_confusables(f"h\u0430{ACUTE}te") == "h\u00e1te"


@pytest.mark.parametrize("seed", range(3))
def test_folding_twice_is_folding_once(seed: int) -> None:
    rng = random.Random(seed)
    latin, others = "hateHATE\u00e9 1-", "\u0430\u0435\u043e\u0410\u041c\u043a\u0432\u039a\u03b1\u0456"
    alphabet = latin + others + ACUTE + STROKE + "\u0308"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        once = fold_confusables(text)
        assert fold_confusables(once) == once, ascii(text)


def test_a_script_written_without_spaces_ends_the_words_of_others() -> None:
    for text in ("我爱Москва和Paris", "МоскваとTokyoへ行く", "서울Seoul과Москва", "Facebook\u101d\u1004\u103a"):
        assert fold_confusables(text) == text  # Москва is wholly Cyrillic: kept
    assert fold_confusables("g\u101d\u101dd") == "g\u101d\u101dd"  # wa ends a word: no Latin word holds it
    assert fold_confusables("我h\u0430te你") == "我hate你"  # the Latin word beside it still folds

from faim.encoders.text_normalize import fold_confusables
from faim.preprocess.folding import fold_texts


def test_homoglyphs_fold_before_leetspeak():
    seen = []

    def leetspeak(text: str) -> str:
        seen.append(text)
        return text.replace("4", "a")

    # "h4tе" ends in a Cyrillic "е": leetspeak must see the Latin word, as the tokenizer will
    assert fold_texts(["h4t\u0435"], fold_confusables, leetspeak) == ["hate"]
    assert seen == ["h4te"]


def test_a_missing_fold_is_skipped():
    assert fold_texts(["h4t\u0435"], None, None) == ["h4t\u0435"]
    assert fold_texts(["h4t\u0435"], fold_confusables) == ["h4te"]
    assert fold_texts([], fold_confusables, str.upper) == []

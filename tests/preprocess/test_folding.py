from faim.encoders.text_normalize import fold_confusables
from faim.preprocess.folding import fold_texts, read_start


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


def test_a_text_is_read_up_to_the_space_after_which_its_pieces_reach_the_length_it_is_cut_to():
    counted = []

    def count(start: str) -> int:  # a piece a word, as a tokeniser reads them
        counted.append(len(start))
        return len(start.split())

    text = " ".join(f"w{i}" for i in range(100_000))
    start = read_start(text, 10, count)
    assert start == text[: text.rfind(" ", 0, 80)]  # the first try, 80 characters, cut at its last space
    assert start.split() == text.split()[:22]
    assert counted == [len(start)]
    assert read_start(text[:79], 10, count) == text[:79]  # shorter than a try: read whole, uncounted
    assert counted == [len(start)]


def test_a_text_whose_tries_reach_too_few_pieces_or_hold_no_space_is_read_whole():
    assert read_start("x" * 100_000, 10, len) == "x" * 100_000  # no space: a script that parts no words
    spaced = " " * 50_000 + "w" * 50_000  # spaces alone, which are read as no piece
    assert read_start(spaced, 10, lambda start: len(start.split())) == spaced

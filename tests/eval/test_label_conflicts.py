"""Terms two labelled datasets read the opposite way, on texts built so that the answer is known, and their table
in the transfer results."""

from __future__ import annotations

import unicodedata

import pytest

from faim.eval.benchmark_transfer_report import conflict_table
from faim.eval.label_conflicts import (
    MIN_POSTS,
    SHOWN_TERMS,
    LabelledTexts,
    conflict_summary,
    conflicts,
    decision_conflicts,
    decision_conflicts_note,
    share_holding,
    words,
)


def dataset(name: str, groups: list[tuple[str, int, int]]) -> LabelledTexts:
    """``(text, posts, positives)`` groups: ``posts`` posts of ``text``, the first ``positives`` of them positive."""
    texts, labels = [], []
    for text, posts, positives in groups:
        texts += [text] * posts
        labels += [1] * positives + [0] * (posts - positives)
    return LabelledTexts(name, texts, labels)


def test_a_term_one_dataset_calls_positive_and_the_other_negative_is_found() -> None:
    first = dataset("first", [("you rat", 100, 80), ("nice day", 100, 20)])
    second = dataset("second", [("you rat", 100, 2), ("nice day", 100, 40)])
    found = {conflict.term: conflict for conflict in conflicts(first, second)}
    assert "rat" in found and "you" in found
    rat = found["rat"]
    assert [count.posts for count in rat.counts] == [100, 100]
    assert [count.share for count in rat.counts] == pytest.approx([0.8, 0.02])
    assert rat.leans[0] > 0 > rat.leans[1]


def test_a_different_share_of_positives_alone_is_no_conflict() -> None:
    # "rat" doubles the odds of a positive in both; the second dataset just has fewer positives on the whole
    first = dataset("first", [("rat here", 60, 40), ("plain post", 60, 30)])
    second = dataset("second", [("rat here", 60, 10), ("plain post", 600, 30)])
    assert conflicts(first, second) == []


def test_terms_in_too_few_posts_or_leaning_the_same_way_are_left_out() -> None:
    few = MIN_POSTS - 1
    first = dataset("first", [("rare slur", few, few), ("vermin", 100, 90), ("hello", 100, 10)])
    second = dataset("second", [("rare slur", 100, 0), ("vermin", 100, 60), ("hello", 100, 5)])
    assert [conflict.term for conflict in conflicts(first, second)] == []


def test_the_terms_in_the_most_posts_come_first() -> None:
    first = dataset("first", [("rat", 50, 45), ("pig", 200, 180), ("hi", 250, 25)])
    second = dataset("second", [("rat", 50, 0), ("pig", 300, 0), ("hi", 150, 120)])
    found = [conflict.term for conflict in conflicts(first, second)]
    assert found[:3] == ["pig", "hi", "rat"]  # in 500, 400 and 100 posts of the two


def test_the_share_of_posts_holding_a_term() -> None:
    data = dataset("data", [("You RAT!", 3, 1), ("a pig", 1, 0), ("nothing", 4, 0)])
    assert share_holding(data, ["rat", "pig"]) == pytest.approx(0.5)
    assert share_holding(LabelledTexts("empty", [], []), ["rat"]) == 0.0


def test_the_summary_counts_every_conflict_and_shows_the_first() -> None:
    first = dataset("first", [("you rat", 100, 80), ("nice day", 100, 20), ("plain", 50, 25)])
    second = dataset("second", [("you rat", 100, 2), ("nice day", 100, 40), ("plain", 50, 5)])
    summary = conflict_summary(first, second, shown=1)
    assert summary["terms"] == len(conflicts(first, second)) == 4  # day, nice, rat, you
    assert summary["share_holding"] == pytest.approx([0.8, 0.8])
    assert summary["shown"] == [
        {"term": "day", "posts": [100, 100], "shares": [0.2, 0.4], "leans": list(conflicts(first, second)[0].leans)}
    ]


def test_labels_must_be_binary_and_aligned() -> None:
    with pytest.raises(ValueError, match="first: 2 texts but 1 label$"):
        LabelledTexts("first", ["a", "b"], [1])
    with pytest.raises(ValueError, match="second: the label of post 1 is 2, not 0 or 1"):
        LabelledTexts("second", ["a", "b"], [0, 2])


def test_the_table_shows_each_pair_and_its_terms() -> None:
    pairs = [
        {"datasets": ["A", "B"], "terms": 1, "share_holding": [0.5, 0.25],
         "shown": [{"term": "rat", "posts": [1200, 40], "shares": [0.8, 0.05], "leans": [1.4, -1.1]}]},
        {"datasets": ["A", "C"], "terms": 0, "share_holding": [0.0, 0.0], "shown": []},
    ]  # fmt: skip
    markdown = "\n\n".join(conflict_table(pairs))
    assert "**A / B**: 1 terms read the opposite way; 50 % of A's posts and 25 % of B's hold at least one." in markdown
    assert "| rat | 1,200 posts, 80 % hate (+1.4) | 40 posts, 5 % hate (-1.1) |" in markdown
    assert "**A / C**: 0 terms" in markdown and markdown.count("| term | A |") == 1
    assert conflict_table([]) == []


def test_a_models_decisions_read_against_the_labels_name_the_words_it_weighs_the_other_way() -> None:
    texts = [f"you {word} rat" for word in ("filthy", "sly") * 30] + ["a fine day"] * 60 + ["a rat day"] * 30
    flagged = [1] * 60 + [0] * 60 + [1] * 30  # the model flags every post calling someone a rat
    labels = [0] * 60 + [1] * 30 + [0] * 30 + [0] * 30  # the labels call them benign, and some fine days harmful
    found = decision_conflicts(texts, flagged, labels, "harmful")
    assert found["positive"] == "harmful" and found["terms"] == 7  # every word here is in 30 posts or more
    assert [t["term"] for t in found["shown"]] == ["a", "day", "rat", "fine", "you"][:SHOWN_TERMS]
    assert found["overall"] == [0.6, 0.2]  # 90 of the 150 posts flagged, 30 labelled harmful
    rat = next(t for t in found["shown"] if t["term"] == "rat")
    assert rat["posts"] == [90, 90] and rat["shares"] == [1.0, 0.0]
    said = decision_conflicts_note(found)
    assert said.startswith(f"Words the model and these labels read the opposite way: {found['terms']}, in 100 %")
    assert "of all the posts, the model flags 60 % and the labels call 20 % harmful): 'a' (" in said
    assert "'rat' (90 posts: the model flags 100 %, the labels call 0 % harmful)" in said
    assert decision_conflicts_note(decision_conflicts(texts, flagged, flagged, "harmful")) is None
    assert decision_conflicts_note(None) is None
    with pytest.raises(ValueError, match="model: 150 texts but 149 labels"):
        decision_conflicts(texts, flagged[:-1], labels, "harmful")
    with pytest.raises(ValueError, match="labels: the label of post 0 is 2, not 0 or 1"):
        decision_conflicts(texts, flagged, [2] + labels[1:], "harmful")


def test_a_word_is_read_by_its_share_against_the_whole_not_by_the_smoothing() -> None:
    # the model flags 5 posts in 500; 'lol' is in 25, none flagged and none labelled positive: the half posts added
    # to each class would pull its lean above the rare base, but neither side reads it as a sign of anything
    texts = ["lol"] * 25 + ["bad word"] * 5 + ["x"] * 470
    flagged, labels = [0] * 25 + [1] * 5 + [0] * 470, [0] * 25 + [1] * 5 + [0] * 470
    labels[30:60] = [1] * 30
    assert "lol" not in {
        t["term"] for t in conflicts(LabelledTexts("model", texts, flagged), LabelledTexts("labels", texts, labels))
    }
    one_class = decision_conflicts(texts, [0] * 500, labels, "harmful")  # the model flags nothing: no direction
    assert one_class["terms"] == 0 and decision_conflicts_note(one_class) is None


def test_a_word_keeps_the_marks_written_on_its_letters_and_is_one_word_composed_or_not() -> None:
    # Hindi's vowel signs and Arabic's vowel marks are no letters; "café" is written composed (NFC) in some posts,
    # decomposed (NFD: e and a combining acute) in others
    texts = ["आज मौसम", "كَلْب هنا", "un café", unicodedata.normalize("NFD", "un café")]
    assert words(texts[0]) == {"आज", "मौसम"}
    assert words(texts[1]) == {"كَلْب", "هنا"}
    assert words(texts[2]) == words(texts[3]) == {"un", "café"}
    first = dataset("first", [(texts[2], 50, 45), (texts[3], 50, 45), ("plain post", 100, 10)])
    second = dataset("second", [(texts[2], 50, 0), (texts[3], 50, 0), ("plain post", 100, 90)])
    cafe = next(conflict for conflict in conflicts(first, second) if conflict.term == "café")
    assert [count.posts for count in cafe.counts] == [100, 100]


def test_chinese_and_japanese_written_without_spaces_are_read_a_han_character_or_a_hiragana_each() -> None:
    # a run of them read as one word is the whole post: no two posts share it, and no word would be found
    assert words("你这个老鼠") == {"你", "这", "个", "老", "鼠"}
    assert words("あなたはネズミだ") == {"あ", "な", "た", "は", "ネズミ", "だ"}  # a katakana word is one
    assert words("我爱Москва和Paris") == {"我", "爱", "москва", "和", "paris"}
    # a mark lengthening or repeating the character before it is read with it
    assert words("すごーい人々、いすゞ、ラーメン") == {"す", "ごー", "い", "人々", "すゞ", "ラーメン"}
    texts = [f"你这个{word}老鼠" for word in ("脏", "狡猾") * 30] + [f"今天{n}天气好" for n in range(60)]
    flagged, labels = [1] * 60 + [0] * 60, [0] * 60 + [1] * 30 + [0] * 30  # the model flags every post calling a rat
    model, read = LabelledTexts("model", texts, flagged), LabelledTexts("labels", texts, labels)
    rat = next(conflict for conflict in conflicts(model, read) if conflict.term == "鼠")
    assert [count.posts for count in rat.counts] == [60, 60] and [count.share for count in rat.counts] == [1.0, 0.0]


def test_a_right_to_left_word_leaves_the_figures_after_it_left_to_right_in_the_note() -> None:
    term = {"posts": [90, 90], "shares": [1.0, 0.0]}
    summary = {"positive": "harmful", "terms": 2, "share_holding": [1.0], "overall": [0.6, 0.2]}
    said = decision_conflicts_note(summary | {"shown": [term | {"term": "فأر"}, term | {"term": "rat"}]})
    assert "'\u200eفأر\u200e' (90 posts: the model flags 100 %, the labels call 0 % harmful); 'rat' (90 posts" in said

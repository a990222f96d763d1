"""Text perturbations: seeded, controlled by rate, leave mentions and URLs alone, and do what they claim."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from faim.perturb.text import HOMOGLYPHS, char_swap, homoglyphs, insert_spaces, leetspeak

TEXT = "I hate those people so much, they should all go back where they came from #sick"
PROTECTED = "@user_42 said https://example.com/post?id=7 and www.site.org"
FUNCTIONS = [char_swap, leetspeak, insert_spaces, homoglyphs]
TextFn = Callable[[str, random.Random, float], str]


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_same_seed_same_output_and_other_seed_differs(fn: TextFn) -> None:
    assert fn(TEXT, random.Random(3), 0.5) == fn(TEXT, random.Random(3), 0.5)
    assert fn(TEXT, random.Random(3), 0.5) != fn(TEXT, random.Random(4), 0.5)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_rate_one_changes_and_rate_zero_keeps_the_text(fn: TextFn) -> None:
    assert fn(TEXT, random.Random(0), 1.0) != TEXT
    assert fn(TEXT, random.Random(0), 0.0) == TEXT
    assert fn("", random.Random(0), 1.0) == ""


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_mentions_and_urls_are_never_changed(fn: TextFn) -> None:
    out = fn(f"{PROTECTED} ok", random.Random(0), 1.0)
    assert out.startswith("@user_42 ") and "https://example.com/post?id=7" in out and "www.site.org" in out
    shouted = "HTTPS://BIT.LY/XYZ and WWW.SITE.ORG and Http://Example.com"
    out = fn(shouted, random.Random(0), 1.0)
    assert all(link in out for link in ("HTTPS://BIT.LY/XYZ", "WWW.SITE.ORG", "Http://Example.com"))


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_rate_outside_unit_interval_raises(fn: TextFn, rate: float) -> None:
    with pytest.raises(ValueError, match="rate must be between 0 and 1"):
        fn(TEXT, random.Random(0), rate)


def test_leetspeak_mapping() -> None:
    assert leetspeak("hate Boats, gil", random.Random(0), 1.0) == "h473 80475, 911"


def test_char_swap_transposes_one_adjacent_pair_per_word() -> None:
    out = char_swap("hello world aa", random.Random(0), 1.0)
    for before, after in zip("hello world aa".split(), out.split()):
        diff = [i for i in range(len(before)) if before[i] != after[i]]
        if before == "aa":
            assert after == "aa"  # no two different letters to swap
        else:
            assert len(diff) == 2 and diff[1] == diff[0] + 1 and sorted(before) == sorted(after)


def test_insert_spaces_only_adds_spaces_inside_words() -> None:
    out = insert_spaces(TEXT, random.Random(0), 1.0)
    assert out.replace(" ", "") == TEXT.replace(" ", "")
    assert out.count(" ") > TEXT.count(" ") + len(TEXT.split())  # every word of 2+ letters got at least one


@pytest.mark.parametrize("fn", [char_swap, insert_spaces])
def test_words_written_with_marks_are_swapped_and_spaced_a_letter_with_its_marks_at_a_time(fn: TextFn) -> None:
    hindi = "तुम गंदे चूहे हो"  # each vowel sign a mark on the letter before it: no two letters in a row
    out = fn(hindi, random.Random(0), 1.0)
    assert out != hindi  # every word of two letters or more is touched
    assert all(unicodedata.category(after)[0] != "M" or before.isalpha() for before, after in zip(out, out[1:]))
    assert sorted(out.replace(" ", "")) == sorted(hindi.replace(" ", ""))
    assert "गं" in out.replace(" ", "") and "हे" in out.replace(" ", "")  # a letter keeps its marks


def test_homoglyphs_differ_in_code_points_only() -> None:
    out = homoglyphs(TEXT, random.Random(0), 1.0)
    assert out != TEXT and len(out) == len(TEXT)
    assert out.translate({ord(v): k for k, v in HOMOGLYPHS.items()}) == TEXT
    changed = {(a, b) for a, b in zip(TEXT, out) if a != b}
    assert changed and all(HOMOGLYPHS[a] == b for a, b in changed)


def test_homoglyph_table_is_same_case_cyrillic_or_greek() -> None:
    for latin, glyph in HOMOGLYPHS.items():
        name = unicodedata.name(glyph)
        assert latin.isascii() and not glyph.isascii()
        assert name.split()[0] in ("CYRILLIC", "GREEK")
        assert ("SMALL" in name) == latin.islower()


def test_homoglyphs_render_identically() -> None:
    font = ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"), 32)

    def render(char: str) -> np.ndarray:
        image = Image.new("L", (50, 50))
        ImageDraw.Draw(image).text((5, 5), char, fill=255, font=font)
        return np.asarray(image)

    # glyph by glyph: fonts kern Latin pairs, so whole words may be spaced a little differently
    assert all(np.array_equal(render(latin), render(glyph)) for latin, glyph in HOMOGLYPHS.items())

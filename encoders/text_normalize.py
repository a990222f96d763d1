"""The confusables folding of text encoders (``faim.preprocess.confusables``), with its tables built from Unicode's
confusables data as bundled by the ``confusable-homoglyphs`` package."""

from __future__ import annotations

from functools import cache

from confusable_homoglyphs.categories import alias, categories_data
from confusable_homoglyphs.confusables import confusables_data

from faim.preprocess.confusables import ConfusableFolder


@cache
def latin_lookalikes() -> dict[str, str]:
    """Letter of a script other than Latin → the ASCII letter the confusables table draws it as (``а`` → ``a``),
    for every such letter that has one."""
    table = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or not char.isalpha() or alias(char) == "LATIN":
            continue
        letters = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        if letters:
            table[char] = letters[0]
    return table


@cache
def latin_ranges() -> list[tuple[int, int]]:
    """The code point ranges the package's script data assigns to Latin, sorted."""
    aliases = categories_data["iso_15924_aliases"]
    return sorted(
        (first, last) for first, last, script, _ in categories_data["code_points_ranges"] if aliases[script] == "LATIN"
    )


@cache
def confusable_folder() -> ConfusableFolder:
    """The folder with this package's tables."""
    return ConfusableFolder(latin_lookalikes(), latin_ranges())


def fold_confusables(text: str) -> str:
    """``text`` in NFKC with the look-alike letters of every mixed-script word (Latin letters next to letters of
    another script drawn like Latin ones) replaced by the Latin letters they imitate."""
    return confusable_folder()(text)

"""The confusables folding of text encoders (``faim.preprocess.confusables``), with its tables built from Unicode's
confusables data as bundled by the ``confusable-homoglyphs`` package."""

from __future__ import annotations

import hashlib
import json
from functools import cache

from confusable_homoglyphs.categories import alias, categories_data
from confusable_homoglyphs.confusables import confusables_data

from faim.preprocess.confusables import REVISION, ConfusableFolder


@cache
def latin_lookalikes() -> dict[str, str]:
    """Letter of a script other than Latin → the ASCII letter the confusables table draws it as (``а`` → ``a``), in
    the letter's own case (``same_case``), for every such letter that has one."""
    table = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or not char.isalpha() or alias(char) == "LATIN":
            continue
        letters = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        if letters:
            table[char] = same_case(char, letters[0])
    return table


def same_case(char: str, letter: str) -> str:
    """``letter`` (an ASCII letter ``char`` is drawn like) in the case of ``char``: UTS #39 draws a capital and a small
    letter alike as one of them (``І``, ``Ι`` and ``I`` itself as ``l``; ``Ь`` as ``b``), which would turn ``KІLL`` into
    ``KlLL``. An upper-case ``char`` gives the upper-case letter, a vertical stroke (``l``) being the capital ``I``; a
    lower-case one the lower-case letter; a letter without case the letter as the table draws it."""
    if char.isupper():
        return "I" if letter == "l" else letter.upper()
    return letter.lower() if char.islower() else letter


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


def tables_digest() -> str:
    """sha256 of the folder's tables (``ConfusableFolder.to_dict``) and the folding's ``REVISION``, as JSON with sorted
    keys: what the embedding cache keys an encoder folding homoglyphs by, so that other tables (another release of
    the data) or another folding compute its embeddings anew."""
    tables = json.dumps(confusable_folder().to_dict() | {"revision": REVISION}, sort_keys=True)
    return hashlib.sha256(tables.encode()).hexdigest()


def fold_confusables(text: str) -> str:
    """``text`` in NFKC with the look-alike letters of every mixed-script word (Latin letters next to letters of
    another script drawn like Latin ones) replaced by the Latin letters they imitate, each in its own case."""
    return confusable_folder()(text)

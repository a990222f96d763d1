"""A source with some of its groups left out of every split: for measuring how a recipe does on a group that
neither its training nor its validation saw (an event, a platform, a language).

::

    data:
      type: without
      source: {type: vmu, root: ../shared/data/mediaeval2016_vmu, task: fake}
      field: event
      values: [Hurricane Sandy]

Posts whose ``meta[field]`` is one of ``values`` are dropped from the train and validation splits alike; the rest
come through as the wrapped source gives them. Left out by ``lang``, a post's language is the one evaluation gives it
(``grouped``): its own ``meta.lang`` as ``faim.data.language.given_code`` reads it (``ES`` and ``spa`` are ``es``),
or, where it gives none, the language its text is written in, and each of ``values`` is read as a code so.
``python -m faim.eval.trained_holdout`` trains a recipe this way once per group and measures it on the group left
out.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import faim.data.sources  # noqa: F401  (registers every source the wrapped one may name)
from faim.data.language import Told, given_code, with_languages
from faim.data.language_codes import (
    EXTLANGS,
    GRANDFATHERED,
    LOCALE_PARTS,
    NAMED,
    TWO_LETTER,
    TWO_LETTER_NAMED,
    WITHDRAWN,
    name_key,
)
from faim.data.post import LANGUAGE, Post, is_missing
from faim.data.sources import check_split
from faim.registry import build_source_spec, member_path, register_source

LANG_READING = "language"
"""How a ``without`` source reads ``lang`` (``WithoutSource``'s ``read_lang``): each value as its language alone
(``grouped``: ``pt-BR`` and ``por_Latn`` are ``pt``), where an earlier faim's ``code`` kept a region or script."""

EARLIER_READING = "code"
"""The ``read_lang`` an earlier faim wrote into each fold grouped by ``lang`` (``code_read``): a region or script kept,
``pt-BR`` a language apart from ``pt``."""

SUBTAG = re.compile(r"[-_]|\s*\(")
"""Where a script or region may follow a language in a ``lang`` value: BCP 47's hyphen, a locale's underscore, a
menu's bracket, with or without a space before it (``pt-BR``, ``pt_BR``, ``Portuguese (Brazil)``, ``English(USA)``)."""


@register_source("without")
class WithoutSource:
    """Every post of a source but those of some groups.

    Args:
        source: The wrapped source's ``data:`` mapping (its ``type:`` and arguments).
        field: The ``Post.meta`` field whose values name the groups.
        values: The groups left out; each must name a group of the source, or the recipe would silently measure
            a group it trained on.
        read_lang: How values and posts of the field ``lang`` are read: ``language``, the only reading, each as the
            language evaluation gives it (``grouped``). ``python -m faim.eval.trained_holdout`` writes it into the
            recipe of each fold grouped by ``lang``, so that a fold an earlier faim trained, which compared ``lang``
            as given (``ES`` apart from ``es``), is not taken for one of now by ``--reuse``, nor one that read it as a
            code keeping its region (``code``: ``pt-br`` apart from ``pt``) unless each post reads alike both ways
            (``read_as_now``); ``code`` is refused, saying so.
        left_out: Of the field ``lang``, which posts were left out when the recipe was written (``left_out_digest``),
            as ``python -m faim.eval.trained_holdout`` writes it into each fold, so that ``--reuse`` trains a fold
            again where faim now reads any post's language otherwise: a ``meta.lang`` read as another code (``fil``
            as ``tl``), or a text the language detector (its package's version or faim's reading of text) tells
            otherwise; the posts are left out as they are read now either way.

    Raises:
        ValueError: On a wrapped mapping without ``type``, an empty ``values``, a ``field`` that is not a string, a
            ``read_lang`` other than ``language``, or a value of ``lang`` that would read as its language without the
            region or script written after it (``region_left_out``), leaving out every post in that language.
    """

    def __init__(
        self,
        source: dict[str, Any],
        field: str,
        values: list[Any],
        read_lang: str = LANG_READING,
        left_out: str | None = None,
    ) -> None:
        if not isinstance(source, dict) or "type" not in source:
            raise ValueError("without: source must be a data: mapping with a type:")
        if not isinstance(field, str) or not field:
            raise ValueError(f"without: field must name a meta field, got {field!r}")
        if not isinstance(values, list) or not values:
            raise ValueError(f"without: values must be a non-empty list of {field} values, got {values!r}")
        if read_lang == EARLIER_READING:
            raise ValueError(
                f"without: read_lang: {read_lang!r} was the earlier reading of lang, which kept a region or script "
                f"apart (pt-BR apart from pt); lang is read as the language alone now: write read_lang: "
                f"{LANG_READING} or leave the key out"
            )
        if read_lang != LANG_READING:
            raise ValueError(f"without: read_lang must be {LANG_READING!r}, got {read_lang!r}")
        if left_out is not None and (field != LANGUAGE or not isinstance(left_out, str)):
            raise ValueError(
                f"without: left_out is a digest of the posts left out of field {LANGUAGE}, got {left_out!r}"
            )
        for value in values if field == LANGUAGE else ():
            if region_left_out(value):
                raise ValueError(
                    f"without: values: {value!r} reads as {given_code(value)}, its language without the region or "
                    f"script after it, so every post in {given_code(value)} would be left out: lang groups are "
                    f"languages; write {given_code(value)} to leave out the language, or hold out a locale by a meta "
                    "field of its own mapped from the same column (columns: {meta: {lang: lang, locale: lang}}) with "
                    "field: locale"
                )
        self.member = build_source_spec(source, member_path("source"))
        self.field = field
        self.values = list(values)
        # the groups left out as posts are grouped (``grouped``): of the field lang, each value read as a code
        self.groups = [given_code(value) or value for value in values] if field == LANGUAGE else self.values
        self.read: dict[str, list[Post]] = {}
        self.told: Told = {}  # the languages told of the posts read, so that reading a split again tells none again

    def splits(self) -> list[str]:
        """The wrapped source's splits."""
        return self.member.splits()

    def posts(self, split: str) -> list[Post]:
        """The wrapped source's posts of ``split`` whose ``meta[field]`` is none of ``values``.

        Raises:
            FileNotFoundError: The first time, before any split is read, naming a split whose file is not there
                (``check_split``).
            ValueError: The first time, when a value names no group in any split, naming the groups there are.
        """
        if not self.read:
            self.check_split(split)
            self.read = {name: self.member.posts(name) for name in self.splits()}  # each split read once
            self.check_values()
        if split not in self.read:
            return self.member.posts(split)  # raises, naming the splits there are
        posts = self.read[split]
        return [
            post
            for post, kept in zip(posts, grouped(posts, self.field, self.told))
            if kept.meta.get(self.field) not in self.groups
        ]

    def check_split(self, split: str) -> None:
        """Find the files of every split of the wrapped source, as reading ``split`` reads them all
        (``faim.data.sources.check_split``), reading none."""
        for name in self.splits():
            check_split(self.member, name)

    def split_inputs(self, split: str) -> list[Path]:
        """The files the wrapped source reads ``split`` from, as one reading files by a mapping lists them
        (``faim.data.tabular.FileSource.split_inputs``); none where it reads files of its own."""
        return self.member.split_inputs(split) if hasattr(self.member, "split_inputs") else []

    def check_values(self) -> None:
        """Raise ``ValueError`` when one of ``values`` is the ``meta[field]`` of no post in any split."""
        grouped_by = (grouped(posts, self.field, self.told) for posts in self.read.values())
        found = {post.meta.get(self.field) for posts in grouped_by for post in posts}
        missing = [value for value, group in zip(self.values, self.groups) if group not in found]
        if missing:
            self.read = {}
            groups = ", ".join(sorted(str(value) for value in found if value is not None)) or "none"
            raise ValueError(f"without: no post has meta.{self.field} {missing}; the groups there are: {groups}")

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Posts of a file in the wrapped source's format, none left out (new data to score or evaluate)."""
        return self.member.iter_posts(path)

    def describe(self, split: str) -> str:
        """The wrapped source's description, and the groups left out."""
        return f"{self.member.describe(split)} without {self.field} {', '.join(map(str, self.values))}"

    def fingerprint(self, split: str) -> str:
        """sha256 over the wrapped source's fingerprint and the groups left out (and, of ``lang``, how it is read)."""
        reading = {"read_lang": LANG_READING} if self.field == LANGUAGE else {}
        left_out = json.dumps({"field": self.field, "values": self.values} | reading, sort_keys=True, default=str)
        return hashlib.sha256(f"{self.member.fingerprint(split)}\n{left_out}".encode()).hexdigest()


def region_left_out(value: Any) -> bool:
    """Whether ``given_code`` reads a ``lang`` value as its language without a script or region written after it
    (``pt-BR``, ``pt_BR``, ``zh-Hant``, ``por_Latn``, ``English (US)``: the language before it is read alike), not as
    a language written whole (``es``, ``zh-yue``, a name ISO 639 gives with a bracket, ``Greek, Modern (1453-)``) or
    a variety read as its language (``Persian (Dari)``, ``zh-cmn``, ``no-bok``: ``locale_cut``)."""
    written = unicodedata.normalize("NFKC", str(value)).strip()
    cuts = [match.start() for match in SUBTAG.finditer(written) if match.start()]
    code = given_code(written)
    return name_key(written) not in NAMED and any(
        given_code(written[:cut]) == code and locale_cut(written, cut) for cut in cuts
    )


def locale_cut(written: str, cut: int) -> bool:
    """Whether what follows ``written[:cut]`` is a region or script: a bracket holding their names or codes alone
    (``LOCALE_PARTS``, not a variety: ``Persian (Dari)``), or a subtag that is neither an extended language subtag of
    the language before it (``zh-cmn``) nor part of a legacy tag (``no-bok``: ``GRANDFATHERED``)."""
    before, rest = written[:cut].casefold().replace("_", "-"), name_key(written[cut:])
    if rest.lstrip().startswith("("):
        inside = rest.lstrip()[1:].removesuffix(")").strip()
        return inside in LOCALE_PARTS or {part.strip() for part in inside.split(",")} <= LOCALE_PARTS
    subtag = re.split(r"[-_]", rest[1:])[0]
    return subtag not in EXTLANGS.get(before, ()) and written.casefold().replace("_", "-") not in GRANDFATHERED


def code_read(value: Any) -> str | None:
    """A ``lang`` value as an earlier faim's ``read_lang: code`` read it: as ``given_code`` reads it, but with a region
    or script after the language kept (``pt-BR`` and ``pt_BR`` are ``pt-br``), and without the individual languages
    of a macrolanguage, the extended language subtags and the codes of no language read as ``given_code`` reads them
    now (``cmn``, ``zh-yue`` and ``qme`` as written)."""
    given = "" if is_missing(value) else unicodedata.normalize("NFKC", str(value)).strip()
    if named := TWO_LETTER_NAMED.get(given.casefold()):
        return named
    language, hyphen, rest = given.lower().replace("_", "-").partition("-")
    return (WITHDRAWN.get(language) or TWO_LETTER.get(language, language)) + hyphen + rest or None


def read_as_now(data: dict[str, Any], left_out: str | None) -> dict[str, Any]:
    """A ``data:`` section as faim reads it now: one an earlier faim wrote leaving out ``lang`` values read as codes
    (``read_lang: code``), with ``read_lang: language`` and ``left_out`` (the ``left_out_digest`` of the posts its
    fold leaves out now) where each value and each post's ``meta.lang`` in every split of its source reads alike both
    ways (``code_read``, ``given_code``), so that it leaves out the very posts it left out then; otherwise as it is. A
    post giving no ``meta.lang`` (or one ``given_code`` reads as none) is of the language its text is told in, and the
    telling may have changed since, so every post must give its own. ``python -m faim.eval.trained_holdout --reuse``
    takes the run of such a fold so."""
    if (data.get("type"), data.get("field"), data.get("read_lang")) != ("without", LANGUAGE, EARLIER_READING):
        return data
    now = data | {"read_lang": LANG_READING, "left_out": left_out}
    if any(code_read(value) != given_code(value) for value in now["values"]):
        return data
    source = build_source_spec(now, "data")
    given = (post.meta.get(LANGUAGE) for split in source.splits() for post in source.member.posts(split))
    return now if all(code_read(value) == given_code(value) is not None for value in given) else data


def left_out_digest(left: dict[str, list[Post]]) -> str:
    """sha256 over the posts left out, by split: each one's ``post_digest``, in sorted order, so that the same posts
    in another order read alike, and other posts where they stood do not."""
    posts = {split: sorted(map(post_digest, posts)) for split, posts in left.items()}
    return hashlib.sha256(json.dumps(posts, sort_keys=True).encode()).hexdigest()


def post_digest(post: Post) -> str:
    """sha256 over what a post is: its id, text, comments and pictures (each as written, or the sha256 of its
    bytes)."""
    pictures = [hashlib.sha256(ref).hexdigest() if isinstance(ref, bytes) else str(ref) for ref in post.images]
    return hashlib.sha256(json.dumps([post.id, post.text, post.comments, pictures]).encode()).hexdigest()


def grouped(posts: list[Post], field: str, told: Told | None = None) -> list[Post]:
    """``posts`` as they are grouped by their ``meta[field]``: grouped by ``lang``, each given the language evaluation
    gives it (``faim.data.language.with_languages``: its own code as ``given_code`` reads it, or the one its text is
    written in, read from ``told`` where an earlier call told it), as ``eval.slice: lang`` slices them; otherwise as
    they are. The posts given are not modified."""
    return with_languages(posts, told) if field == LANGUAGE else posts

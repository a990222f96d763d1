"""Language identification for posts without ``meta.lang``, and per-language figures in evaluation."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import torch
from conftest import tiny_recipe

import faim
from faim.data import language as language_module
from faim.data.language import UNDETERMINED, given_code, identify, with_languages
from faim.data.post import Post
from faim.data.sources import read_posts
from faim.eval.evaluate import evaluate

SPANISH = "no puedo creer lo que está pasando en esta ciudad hoy"


def test_languages_of_tweet_like_texts_and_too_little_to_tell() -> None:
    assert identify("I cannot believe what is happening in this city today @someone http://t.co/x") == "en"
    assert identify(f"RT @amiga: {SPANISH} #increible") == "es"
    assert identify("Ich kann nicht glauben, was heute in dieser Stadt passiert") == "de"
    assert identify("lol http://t.co/abc @x #y") == UNDETERMINED and identify(None) == UNDETERMINED


def test_short_sentences_of_scripts_that_write_syllables_or_vowel_signs_are_told() -> None:
    # nine Han ideographs, eleven kana and kanji, ten Hangul syllables: a sentence each, under twelve letters as
    # isalpha counts them; Bengali and Hindi write their vowels as marks
    sentences = {
        "这部电影真的很好看": "zh",
        "この映画は本当に面白い": "ja",
        "영화가 정말 재미있어요": "ko",
        "আমি তোমাকে ভালোবাসি": "bn",
        "मैं तुमसे प्यार करता हूँ": "hi",
    }
    assert {sentence: identify(sentence) for sentence in sentences} == sentences
    assert identify("谢谢") == UNDETERMINED and identify("hahaha") == UNDETERMINED


def test_html_escapes_as_twitters_api_gives_them_are_read_as_the_characters_they_stand_for() -> None:
    escaped = ["idk what to say &#128514;&#128514;&#128514;", "&#128079;&#128079;&#128079;&#128588; who even cares"]
    escaped += [
        '"@someone: gonna be a long day" &#128525;&#128525;',
        '"@someone: hit me up later" &#128514;&#128514;&#128514;',
    ]
    assert [identify(text) for text in escaped] == ["en"] * len(escaped)  # each was es or fr
    assert identify("you know it &amp; &amp;") == UNDETERMINED  # nine letters: amp is none of the text's words


def test_an_ampersand_before_a_word_without_a_semicolon_is_read_as_written() -> None:
    # HTML's old escapes read without their ; (&not, &cent, &para) are words after an ampersand in a post's text
    assert [identify(text) for text in ["fish&chips&not", "&centre&parade news"]] == ["en", "en"]  # each was und
    assert identify("&#128514;&#x1F602; &amp;&amp; &lt;3 we had fun at the beach") == "en"


def test_half_a_surrogate_pair_is_read_past() -> None:
    assert identify(f"{SPANISH} \ud83d") == "es"


def test_text_in_capitals_is_told_as_it_is_in_small_letters() -> None:
    shouted = ["STOP THE INVASION OF OUR COUNTRY NOW", "THEY SHOULD ALL GO BACK WHERE THEY CAME FROM", SPANISH.upper()]
    assert [identify(text) for text in shouted] == ["en", "en", "es"]
    assert identify("HTTPS://T.CO/ABCDEFGHIJKL WWW.EXAMPLE.COM/MNOPQRSTU @SOMEONE") == UNDETERMINED  # links only


def test_homoglyph_evasion_is_told_as_the_words_it_imitates() -> None:
    evaded = (
        "th\u0435y sh\u043euld \u0430ll g\u043e b\u0430\u0441k wh\u0435r\u0435 th\u0435y \u0441\u0430m\u0435 fr\u043em"
    )
    assert identify(evaded) == "en"
    assert identify("Привет мир, как у тебя дела сегодня") == "ru"  # wholly Cyrillic: kept


def test_text_struck_through_or_under_stacked_marks_is_told_as_its_letters() -> None:
    def overlaid(text: str, marks: str) -> str:
        return "".join(char + marks if char.isalpha() else char for char in text)

    for marks in ("\u0336", "\u0334\u0315\u0358\u0489"):  # a stroke, a "zalgo" stack
        assert identify(overlaid(SPANISH, marks)) == "es"
        assert identify(overlaid("ok lol yes", marks)) == UNDETERMINED  # the marks are no letters
    assert identify("Моло\u0301ко и хлеб на столе сегодня") == "ru"  # a stress mark, as in a dictionary


def test_a_posts_own_language_is_kept_and_the_posts_given_are_not_changed() -> None:
    posts = [Post("a", SPANISH), Post("b", SPANISH, meta={"lang": "pt"}), Post("c", "ok", comments=[SPANISH])]
    filled = with_languages(posts)
    assert [post.meta["lang"] for post in filled] == ["es", "pt", "es"]
    assert posts[0].meta == {} and posts[2].meta == {}


def test_a_code_a_post_gives_is_read_in_small_letters_as_its_language_alone() -> None:
    given = [{"lang": "ES"}, {"lang": " pt-BR "}, {"lang": "  "}, {}]
    filled = with_languages([Post(str(n), SPANISH, meta=meta) for n, meta in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["es", "pt", "es", "es"]


def test_a_region_or_script_after_the_language_is_left_out_as_the_language_told_has_none() -> None:
    given = ["pt_BR", "pt-br", "PT", "zh_Hant_TW", "zh-Hans", "en-US", "en_GB", "sr-Latn", "es-419"]
    flores = ["eng_Latn", "zho_Hans", "zho_Hant", "arb_Arab", "por_Latn", "rus_Cyrl", "hin_Deva", "spa_Latn"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given + flores)])
    expected = ["pt", "pt", "pt", "zh", "zh", "en", "en", "sr", "es"] + ["en", "zh", "zh", "ar", "pt", "ru", "hi", "es"]
    assert [post.meta["lang"] for post in filled] == expected
    assert with_languages([Post("a", SPANISH, meta={"lang": "spa_Latn"}), Post("b", SPANISH)])[0].meta["lang"] == "es"


def test_the_individual_language_a_macrolanguage_code_is_written_for_is_that_code_others_as_written() -> None:
    given = ["cmn", "cmn_Hans", "arb", "pes_Arab", "swh_Latn", "zsm_Latn", "npi_Deva", "uzn_Latn"]
    kept = ["yue", "yue_Hant", "arz_Arab", "azb"]  # Cantonese; Egyptian Arabic and South Azerbaijani, told apart
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given + kept)])
    expected = ["zh", "zh", "ar", "fa", "sw", "ms", "ne", "uz"] + ["yue", "yue", "arz", "azb"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_three_letter_code_or_english_name_of_a_language_with_a_two_letter_code_is_that_code() -> None:
    given = ["eng", "ENG", "English", " ＥＮＧ ", "ｅｎ", "ger", "deu", "ｐｏｒ＿ＢＲ", "Modern Greek", "Swahili"]
    kept = ["yue", "Tonga", "xyz"]  # no two-letter code, a name of several languages, no code
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given + kept)])
    expected = ["en", "en", "en", "en", "en", "de", "de", "pt", "el", "sw", "yue", "tonga", "xyz"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_code_iso_639_1_withdrew_is_the_code_that_replaced_it_as_the_text_is_told() -> None:
    indonesian, hebrew = (
        "saya tidak percaya apa yang terjadi di kota ini hari ini",
        "אני לא מאמין מה שקורה בעיר הזאת היום",
    )
    posts = [
        Post("a", indonesian, meta={"lang": "in"}),
        Post("b", indonesian),
        Post("c", indonesian, meta={"lang": "in_ID"}),
    ]
    posts += [Post("d", hebrew, meta={"lang": "IW"}), Post("e", hebrew), Post("f", "kein", meta={"lang": "ji"})]
    assert [post.meta["lang"] for post in with_languages(posts)] == ["id", "id", "id", "he", "he", "yi"]


def test_a_code_iso_639_3_merged_into_another_is_that_code() -> None:
    # South Levantine Arabic, ajp, merged into apc, Levantine Arabic, in 2023: the IANA registry's Preferred-Value
    given = ["ajp", "AJP", "ajp_Arab", "ar-ajp", "apc", "apc_Arab", "ar-apc"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["apc"] * len(given)


def test_a_name_joined_by_a_hyphen_that_is_no_language_tag_is_read_whole() -> None:
    # BCP 47 writes a language by two or three letters: Swiss, Judeo, Nigerian are no language cut from a region
    given = ["Swiss-German", "Swiss-French", "Judeo-Arabic", "Judeo-Spanish", "Nigerian_Pidgin", "Nigerian-Pidgin"]
    given += ["pt-BR", "zh-Hant-TW", "Luba-Katanga", "x-klingon", "i-navajo"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given)])
    expected = ["swiss-german", "swiss-french", "judeo-arabic", "judeo-spanish", "nigerian-pidgin", "nigerian-pidgin"]
    assert [post.meta["lang"] for post in filled] == [*expected, "pt", "zh", "lu", "x-klingon", "nv"]


def test_a_missing_code_a_null_read_as_nan_is_told_from_the_text() -> None:
    given = [{"lang": math.nan}, {"lang": None}, {"lang": ""}]
    filled = with_languages([Post(str(n), SPANISH, meta=meta) for n, meta in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["es", "es", "es"]  # not "nan"


def test_evaluation_reports_each_language_when_more_than_one_appears(demo_data, tmp_path: Path) -> None:
    torch.manual_seed(0)
    detector = faim.build(tiny_recipe(demo_data, tmp_path / "run"))
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))
    english = evaluate(detector, posts, tmp_path / "en", "validation")["tasks"]["harmful"]
    assert "languages" not in english
    mixed = [replace(post, text=SPANISH) if i % 2 else post for i, post in enumerate(posts)]
    mixed[1] = replace(mixed[1], meta=mixed[1].meta | {"lang": "ES"})  # a code given in capitals is the one detected
    languages = evaluate(detector, mixed, tmp_path / "mixed", "validation")["tasks"]["harmful"]["languages"]
    assert set(languages) == {"en", "es"} and languages["es"]["n"] == len(posts) // 2
    assert "### Languages" in (tmp_path / "mixed" / "metrics.md").read_text(encoding="utf-8")


def test_a_code_x_gives_a_post_with_too_little_text_or_und_gives_no_language_and_the_text_is_told() -> None:
    codes = ["qme", "qht", "qam", "qct", "qst", "zxx", "ZXX", "und", "und_Latn"]  # media, hashtags, mentions alone
    assert all(given_code(code) is None for code in codes)
    filled = with_languages(
        [Post(str(n), text, meta={"lang": code}) for n, code in enumerate(codes) for text in (SPANISH, "see this")]
    )
    assert [post.meta["lang"] for post in filled] == ["es", UNDETERMINED] * len(codes)


def test_emoji_drawn_in_colour_by_a_variation_selector_are_no_letters() -> None:
    for text in ("❤️" * 12, "❤️❤️❤️ ☺️☺️☺️ ✌️✌️✌️ ☀️☀️☀️", "#️⃣" * 12, "ok " + "❤️" * 11):
        assert identify(text) == UNDETERMINED
    assert identify("❤️ " + SPANISH + " ❤️") == "es" and identify("葛\U000e0100城市の天気は晴れです") == "ja"


def test_a_text_in_a_script_none_of_the_models_languages_is_written_in_is_undetermined() -> None:
    unread = ["ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴰⵏⴰⵡⴰⵢⵜ ⵜⴰⵎⴰⵣⵉⵖⵜ", "ܠܫܢܐ ܣܘܪܝܝܐ ܠܫܢܐ ܣܘܪܝܝܐ"]
    # which the model tells as Galician, French and English, at more than its empty text's probability
    unread += ["ⴰⵣⵓⵍ ⴼⵍⴰⵡⵏ ⵎⴰⵏⵣⴰⴽⵉⵏ", "ⴰⵎⴰⵣⵉⵖ ⴷ ⴰⵎⴷⴰⴽⴽⵯⵍ ⵉⵏⵓ", "ܐܢܐ ܟܬܒܐ ܩܪܝܬ ܝܘܡܢܐ", "ⴰⵣⵓⵍ ⴼⵍⴰⵡⵏ ok"]
    assert [identify(text) for text in unread] == [UNDETERMINED] * len(unread)
    # a script written for one language alone is that language: Ol Chiki Santali
    santali = ["ᱥᱟᱱᱛᱟᱲᱤ ᱯᱟᱹᱨᱥᱤ ᱥᱟᱱᱛᱟᱲᱤ", "ᱤᱧ ᱫᱚ ᱥᱟᱱᱛᱟᱲ ᱠᱟᱱᱟᱹᱧ ᱟᱨ ᱤᱧ ᱥᱟᱱᱛᱟᱲᱤ ᱨᱚᱲ ᱫᱟᱲᱮᱭᱟᱜᱼᱟ"]
    assert [identify(text) for text in santali] == ["sat", "sat"]
    # but not the Cherokee syllabary, whose letters look Latin: English written in them (kill them all traitors)
    cherokee = ["ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ", "ᏣᎳᎩ ᎠᏕᎶᏆᏍᏗ ᎣᏍᏓ ᏑᎾᎴᎢ", "ᏦᎥᏞᏞ ᎢᎻᎬᎷ ᎪᏞᏞ ᎢᎡᎪᎥᎢOᎡᏚ"]
    assert [identify(text) for text in cherokee] == [UNDETERMINED] * len(cherokee)
    assert identify("ᱥᱟᱱᱛᱟᱲᱤ") == UNDETERMINED  # too few letters to tell, as any text
    assert identify("what a lovely day it is today ⴰⵣⵓⵍ") == "en" and identify("오늘 날씨가 정말 좋네요") == "ko"


def test_hangul_the_model_knows_nothing_of_is_korean_the_one_language_written_so() -> None:
    for text in ("ㅠㅠ 너무 슬퍼요", "ㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋ", "진짜 싫어 ㅋㅋㅋ"):
        assert identify(text) == "ko"
    assert identify("ㅋㅋㅋ") == UNDETERMINED  # three letters, too few to tell (MIN_LETTERS), as the README says
    # a text of another script the model's languages are written in keeps its answer, its empty text's too (English)
    assert identify("ᴛʜɪs ɪs ᴠᴇʀʏ ʙᴀᴅ ᴛᴇxᴛ ɪɴᴅᴇᴇᴅ") == "en"


def test_flores_codes_of_a_language_the_detector_tells_as_its_macrolanguage_are_that_code() -> None:
    given = ["kmr_Latn", "pbt_Arab", "pbu", "kpv_Cyrl", "prs_Arab", "pes_Arab", "ckb_Arab"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["ku", "ps", "ps", "kv", "fa", "fa", "ckb"]


def test_pulaar_given_by_its_code_or_its_name_is_the_ff_cldr_names_so() -> None:
    given = ["fuc", "FUC", "fuc_Latn", "ff-fuc", "Pulaar", "ff", "ful", "Fulah", "Fula", "ff_SN"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["ff"] * len(given)
    assert given_code("fuf") == "fuf"  # Pular, of Guinea, another Fula language


def test_tshiluba_named_so_is_the_lua_it_is_and_not_luba_katanga() -> None:
    given = ["lua", "LUA", "lua_Latn", "Tshiluba", "tshiluba", "Luba-Lulua"]
    katanga = ["lu", "lub", "Luba-Katanga"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given + katanga)])
    assert [post.meta["lang"] for post in filled] == ["lua"] * len(given) + ["lu"] * len(katanga)


def test_norwegian_bokmal_given_in_any_form_is_the_no_told_of_its_text() -> None:
    bokmal = "Jeg vet ikke hva jeg skal gjøre med dette, men det er bare tull og tøys fra hele regjeringen."
    nynorsk = "Eg veit ikkje kva eg skal gjere med dette, men det er berre tull og vas frå heile regjeringa."
    given = ["nb", "NB_no", "nob_Latn", "no-bok", "Norwegian Bokmål", "no", "nor"]
    posts = [Post(str(n), nynorsk, meta={"lang": code}) for n, code in enumerate(given)]
    filled = with_languages([*posts, Post("b", bokmal), Post("n", nynorsk), Post("g", bokmal, meta={"lang": "nno"})])
    assert [post.meta["lang"] for post in filled] == ["no"] * len(given) + ["no", "nn", "nn"]


def test_filipino_given_in_any_form_is_the_tl_told_of_its_text() -> None:
    filipino = "Magandang umaga sa inyong lahat, maraming salamat po sa tulong ninyo"
    given = ["fil", "FIL", "fil-PH", "fil_PH", "Filipino", "Pilipino", "tl", "tgl", "Tagalog", "tl_PH"]
    filled = with_languages([Post(str(n), filipino, meta={"lang": code}) for n, code in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["tl"] * len(given)
    assert with_languages([Post("t", filipino)])[0].meta["lang"] == "tl"


def test_alemannic_is_told_by_its_iso_code_apart_from_the_tosk_albanian_of_als() -> None:
    swiss, albanian = (
        "Unterem Strich isch s Wätter hüt schöö gsi und mir sind go schwümme",
        "Sot të gjithë shkojmë në shkollë dhe mësojmë shumë gjëra të reja",
    )
    posts = [Post("a", swiss), Post("b", albanian), Post("c", albanian, meta={"lang": "als_Latn"})]
    posts += [Post("d", swiss, meta={"lang": "als"}), Post("e", swiss, meta={"lang": "ALS"})]  # as Wikipedia writes it
    posts += [Post("f", albanian, meta={"lang": "als-Latn"})]
    assert [post.meta["lang"] for post in with_languages(posts)] == ["gsw", "sq", "sq", "gsw", "gsw", "sq"]


def test_bhojpuri_given_as_bihari_or_told_by_wikipedias_bh_is_one_language_bho(monkeypatch) -> None:
    bhojpuri = "ई एगो गाँव हवे जे बलिया जिला में बाटे आ इहाँ के लोग भोजपुरी बोलेलें"
    given = ["bho", "BHO", "bho_Deva", "Bhojpuri", "bh", "BH", "bih", "Bihari languages", "bh-IN"]
    filled = with_languages([Post(str(n), bhojpuri, meta={"lang": code}) for n, code in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["bho"] * len(given)
    labelled = SimpleNamespace(predict=lambda text: (("__label__bh",), (0.9,)))  # Wikipedia's code of its Bhojpuri
    monkeypatch.setattr(language_module, "model", lambda: labelled)
    assert identify(bhojpuri) == "bho"


def test_a_language_written_as_an_extended_subtag_after_its_macrolanguage_is_that_language() -> None:
    given = ["zh-yue", "zh-yue-HK", "zh-cmn-Hans", "ar-arz", "ar-arb", "zh-Hans", "en-US", "es-419", "zh-min-nan"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given + ["no-nyn"])])
    assert [post.meta["lang"] for post in filled] == ["yue", "yue", "zh", "arz", "ar", "zh", "en", "es", "nan", "nn"]
    signed = [
        "sgn-ils",
        "sgn-sfb",
        "sgn-vgt",
        "sgn-BE-FR",
        "sgn-BE-NL",
    ]  # as the registry writes them, and its legacy tags
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(signed)])
    assert [post.meta["lang"] for post in filled] == ["ils", "sfb", "vgt", "sfb", "vgt"]


def test_a_three_letter_subtag_that_is_no_extended_language_subtag_of_the_language_is_a_region_left_out() -> None:
    given = ["zh-CHS", "zh-CHT", "en-USA", "es-MEX", "fr-CAN", "eng-USA", "ar-SAU", "zh-hak", "ms-min", "sgn-ase"]
    legacy = ["zh-hakka", "zh-xiang", "zh-guoyu", "art-lojban", "i-navajo", "i-klingon", "x-klingon", "X-Private"]
    legacy += ["cel-gaulish", "CEL-gaulish", "i-default"]  # Gaulish, which cel, Celtic languages, is not, and i-default
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(given + legacy)])
    expected = ["zh", "zh", "en", "es", "fr", "en", "ar", "hak", "min", "ase"]
    expected += ["hak", "hsn", "zh", "jbo", "nv", "tlh", "x-klingon", "x-private", "cel-gaulish", "cel-gaulish"]
    expected += ["i-default"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_second_language_written_where_a_region_goes_is_the_code_mixed_pair_of_the_two() -> None:
    # Hinglish, Tanglish, Spanglish as code-mixed data tags them: no region is EN, HI or ENG, so the two are languages
    mixed = ["hi-en", "HI_EN", "hi-Latn-en", "hin-eng", "hi-en-IN", "en-hi", "ta-en", "spa-eng"]
    regions = ["en-UK", "en-EN", "hi-IN", "en-EU", "es-419", "eu-ES", "uk-UA", "ar-AR", "zh-CHS"]  # and a slip, en-EN
    regions += ["nl-AN", "pap-AN"]  # the Netherlands Antilles, deprecated in the registry, not Aragonese
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": code}) for n, code in enumerate(mixed + regions)])
    expected = ["hi-en", "hi-en", "hi-en", "hi-en", "hi-en", "en-hi", "ta-en", "es-en"]
    expected += ["en", "en", "hi", "en", "es", "eu", "uk", "ar", "zh", "nl", "pap"]
    assert [post.meta["lang"] for post in filled] == expected


def test_the_english_name_of_a_language_told_by_a_three_letter_code_is_that_code() -> None:
    swiss = "Unterem Strich isch s Wätter hüt schöö gsi und mir sind go schwümme"
    given = ["Swiss German", "swiss german", "Alemannic", "German, Swiss", "Swiss German (Switzerland)", "Santali"]
    given += ["Cebuano", "Low German", "Egyptian Arabic", "Yue Chinese", "Cherokee"]
    filled = with_languages(
        [Post(str(n), swiss, meta={"lang": name}) for n, name in enumerate(given)] + [Post("t", swiss)]
    )
    expected = ["gsw"] * 5 + ["sat", "ceb", "nds", "arz", "yue", "chr", "gsw"]  # the last told of its text
    assert [post.meta["lang"] for post in filled] == expected


def test_a_language_named_as_cldr_names_it_in_english_is_its_code() -> None:
    # as ICU, Java's Locale.getDisplayLanguage and Babel name languages in English, where ISO 639 names them otherwise
    given = ["Greek", "Odia", "Fula", "Māori", "Tongan", "Cantonese", "Palatine German", "Piedmontese", "West Flemish"]
    given += ["Greek (Greece)", "Cantonese (Hong Kong)"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": name}) for n, name in enumerate(given)])
    expected = ["el", "or", "ff", "mi", "to", "yue", "pfl", "pms", "vls", "el", "yue"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_language_named_in_itself_as_cldr_writes_it_is_its_code() -> None:
    given = [
        "Deutsch",
        "español",
        "Español",
        "FRANÇAIS",
        "中文",
        "日本語",
        "русский",
        "العربية",
        "Türkçe",
        "Tiếng Việt",
    ]
    given += ["norsk bokmål", "Schwiizertüütsch", "kurdî (kurmancî)", "isiNdebele"]  # the last, both Ndebeles' name
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": name}) for n, name in enumerate(given)])
    expected = ["de", "es", "es", "fr", "zh", "ja", "ru", "ar", "tr", "vi", "no", "gsw", "ku", "isindebele"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_language_named_as_language_menus_name_it_in_itself_is_its_code() -> None:
    indonesian = "saya tidak percaya apa yang terjadi di kota ini hari ini"
    given = ["Bahasa Indonesia", "bahasa indonesia", "Bahasa Melayu", "Bahasa Malaysia", "BAHASA MELAYU"]
    given += ["Bahasa Indonesia (Indonesia)"]
    filled = with_languages([Post(str(n), indonesian, meta={"lang": name}) for n, name in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["id", "id", "ms", "ms", "ms", "id"]


def test_a_name_is_read_whichever_apostrophe_it_is_written_with() -> None:
    # CLDR writes o‘zbek, avañe’ẽ, Côte d’Ivoire and N’Ko, Uzbek's alphabet oʻzbek, a keyboard o'zbek
    given = ["o‘zbek", "oʻzbek", "o'zbek", "Oʼzbek", "avañe'ẽ", "avañe’ẽ", "Neddersass'sch", "French (Côte d’Ivoire)"]
    given += ["French (Côte d'Ivoire)", "Bambara (N'Ko)", "Bambara (N’Ko)"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": name}) for n, name in enumerate(given)])
    expected = ["uz"] * 4 + ["gn", "gn", "nds", "fr", "fr", "bm", "bm"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_language_named_with_its_region_or_script_in_brackets_is_that_language() -> None:
    given = ["English (US)", "Chinese (Simplified)", "Portuguese (Brazil)", "Tonga (Tonga Islands)", "Tonga (Nyasa)"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": name}) for n, name in enumerate(given)])
    assert [post.meta["lang"] for post in filled] == ["en", "zh", "pt", "to", "tonga (nyasa)"]  # no code of its own
    # a script or region named without ISO's bracket after it, or by an alias in it, by CLDR, or as an adjective
    given = ["Kashmiri (Devanagari)", "Bengali (Ol Chiki)", "Korean (Hangul)", "Amharic (Ethiopic)", "Hindi (Nagari)"]
    given += ["Chinese (Simplified Han)", "Chinese (Hong Kong SAR China)", "Chinese (Traditional Han, Macao SAR China)"]
    given += ["Portuguese (Brazilian)", "Spanish (Falkland Islands)", "Korean (Hangeul)"]
    filled = with_languages([Post(str(n), SPANISH, meta={"lang": name}) for n, name in enumerate(given)])
    expected = ["ks", "bn", "ko", "am", "hi", "zh", "zh", "zh", "pt", "es", "ko"]
    assert [post.meta["lang"] for post in filled] == expected


def test_a_language_named_with_a_variety_in_brackets_is_that_variety_and_an_unknown_bracket_is_kept() -> None:
    regions = ["English (UK)", "English(USA)", "Serbian (Latin)", "Chinese (Traditional, Hong Kong)", "Arabic (Egypt)"]
    regions += [
        "English (United Kingdom)",
        "Spanish (Latin America)",
        "Chinese (Taiwan)",
        "Uzbek (Cyrl)",
        "French (Swiss)",
        "German (Swiss)",  # the locale de-CH, as menus name it: standard German, which the detector tells de
    ]
    varieties = ["Norwegian (Nynorsk)", "Norwegian (Bokmål)", "Kurdish (Sorani)", "Kurdish (Kurmanji)"]
    varieties += ["Chinese (Cantonese)", "Chinese (Mandarin)", "Arabic (Egyptian)", "Persian (Dari)"]
    kept = ["German (Swabian)", "Deutsch (Schweiz)", "French (Moroccan)", "English (Egyptian)", "English (Cantonese)"]
    filled = with_languages(
        [Post(str(n), SPANISH, meta={"lang": name}) for n, name in enumerate(regions + varieties + kept)]
    )
    expected = ["en", "en", "sr", "zh", "ar", "en", "es", "zh", "uz", "fr", "de"]
    expected += ["nn", "no", "ckb", "ku", "yue", "zh", "arz", "fa", "german (swabian)", "deutsch (schweiz)"]
    expected += ["french (moroccan)", "english (egyptian)", "english (cantonese)"]  # another language's varieties
    assert [post.meta["lang"] for post in filled] == expected

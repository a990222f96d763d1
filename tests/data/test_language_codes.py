"""The table of two-letter language codes, with the three-letter codes and English names of each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from faim.data.language import given_code
from faim.data.language_codes import (
    AUTONYMS,
    CLDR_NAMES,
    ENCOMPASSED,
    EXTLANGS,
    LOCALE_PARTS,
    LOCALE_WORDS,
    MENU_NAMES,
    NAMED,
    TABLE,
    TOLD_TABLE,
    TWO_LETTER,
    TWO_LETTER_NAMED,
    VARIETIES,
    name_key,
    read_table,
)

ISO_CODES = Path("/usr/share/iso-codes/json")


def test_each_cldr_name_names_a_code_faim_gives_that_no_iso_name_names() -> None:
    told = read_table(TOLD_TABLE)[1]
    for line in CLDR_NAMES.strip().splitlines():
        code, name = line.split(" | ")
        assert code in TWO_LETTER.values() or code in told.values()
        assert (
            name.casefold() not in TWO_LETTER_NAMED and name.casefold() not in told and NAMED[name.casefold()] == code
        )


def test_each_autonym_names_a_code_faim_gives_alone() -> None:
    told, cldr = read_table(TOLD_TABLE)[1], read_table(CLDR_NAMES)[1]
    lines = [line.split(" | ") for line in AUTONYMS.strip().splitlines()]
    names = [name_key(name) for _, name in lines]
    assert len(names) == len(set(names)) and not set(names) & (set(TWO_LETTER_NAMED) | set(told) | set(cldr))
    assert all(code in TWO_LETTER.values() or code in told.values() for code, _ in lines)
    assert all(NAMED[name_key(name)] == code for code, name in lines)


def test_each_menu_name_names_a_code_faim_gives_that_no_other_name_names() -> None:
    others = read_table(TOLD_TABLE)[1] | read_table(CLDR_NAMES)[1] | read_table(AUTONYMS)[1] | TWO_LETTER_NAMED
    for line in MENU_NAMES.strip().splitlines():
        code, *names = line.split(" | ")
        assert code in TWO_LETTER.values() or given_code(code) == code
        assert all(name_key(name) not in others and NAMED[name_key(name)] == code for name in names)


def test_each_two_letter_code_is_one_line_and_each_three_letter_code_and_name_one_languages() -> None:
    lines = TABLE.strip().splitlines()
    twos = [line.split()[0] for line in lines]
    assert len(twos) == len(set(twos)) == 185 and all(len(two) == 2 and two.islower() for two in twos)
    threes = [three for line in lines for three in line.split(" | ")[0].split()[1:]]
    assert len(threes) == len(set(threes)) == len(TWO_LETTER) and all(len(three) == 3 for three in threes)
    names = [name.casefold() for line in lines for name in line.split(" | ")[1:]]
    assert len(names) == len(set(names)) == len(TWO_LETTER_NAMED)
    assert (TWO_LETTER["eng"], TWO_LETTER["fre"], TWO_LETTER["fra"], NAMED["bangla"]) == ("en", "fr", "fr", "bn")


@pytest.mark.skipif(not ISO_CODES.is_dir(), reason="Debian's iso-codes, which the table is built from, is not here")
def test_the_table_holds_every_three_letter_code_iso_codes_gives_a_two_letter_one() -> None:
    entries = [
        entry
        for name in ("639-2", "639-3")
        for entry in json.loads((ISO_CODES / f"iso_{name}.json").read_text(encoding="utf-8"))[name]
    ]
    given = {}
    for entry in (entry for entry in entries if "alpha_2" in entry):
        given |= dict.fromkeys(filter(None, (entry["alpha_3"], entry.get("bibliographic"))), entry["alpha_2"])
        assert NAMED[entry["name"].split("; ")[0].casefold()] == entry["alpha_2"]
    assert given == TWO_LETTER


@pytest.mark.skipif(not ISO_CODES.is_dir(), reason="Debian's iso-codes, which the table is built from, is not here")
def test_each_name_of_a_language_told_by_a_three_letter_code_is_iso_codes_name_of_it_alone() -> None:
    entries = json.loads((ISO_CODES / "iso_639-3.json").read_text(encoding="utf-8"))["639-3"]
    entries += json.loads((ISO_CODES / "iso_639-2.json").read_text(encoding="utf-8"))["639-2"]
    written: dict[str, set[str]] = {}
    cut: dict[str, set[str]] = {}  # as written, and without a closing bracket
    for entry in entries:
        for name in [*entry.get("inverted_name", "").split("; "), *entry["name"].split("; ")]:
            written.setdefault(name.casefold(), set()).add(entry["alpha_3"])
            for form in (name, re.sub(r" \([^)]*\)$", "", name)):
                cut.setdefault(form.casefold(), set()).add(entry["alpha_3"])
    lines = [line.split(" | ") for line in TOLD_TABLE.strip().splitlines()]
    for code, *names in lines:
        for name in names:
            assert {code} in (written.get(name.casefold()), cut.get(name.casefold())), name
            assert name.casefold() not in TWO_LETTER_NAMED and NAMED[name.casefold()] == code
        assert code not in TWO_LETTER and len(code) == 3


@pytest.mark.skipif(not ISO_CODES.is_dir(), reason="Debian's iso-codes, which the table is built from, is not here")
def test_a_name_cldr_gives_that_iso_639_3_gives_a_code_is_read_as_that_code_is() -> None:
    entries = json.loads((ISO_CODES / "iso_639-3.json").read_text(encoding="utf-8"))["639-3"]
    coded: dict[str, set[str]] = {}
    for entry in entries:
        for name in (entry["name"], entry.get("inverted_name", "")):
            coded.setdefault(name_key(name), set()).add(entry["alpha_3"])
    lines = [line.split(" | ") for table in (CLDR_NAMES, AUTONYMS) for line in table.strip().splitlines()]
    for code, name in lines:  # Pulaar, ff's name in itself, is fuc's; Odia, or's, ory's
        assert all(given_code(other) == code for other in coded.get(name_key(name), ())), name


def test_each_encompassed_language_is_an_individual_one_read_as_its_macrolanguages_code() -> None:
    entries = json.loads((ISO_CODES / "iso_639-3.json").read_text(encoding="utf-8"))["639-3"]
    scopes = {entry["alpha_3"]: entry["scope"] for entry in entries}
    two_letter = {entry["alpha_2"]: entry["scope"] for entry in entries if "alpha_2" in entry}
    assert all(scopes[three] == "I" and three not in TWO_LETTER for three in ENCOMPASSED)
    assert all(two_letter[two] == "M" for two in ENCOMPASSED.values())


@pytest.mark.skipif(not ISO_CODES.is_dir(), reason="Debian's iso-codes, which the table is built from, is not here")
def test_each_extended_language_subtag_is_an_individual_language_and_those_of_sgn_each_sign_language() -> None:
    entries = json.loads((ISO_CODES / "iso_639-3.json").read_text(encoding="utf-8"))["639-3"]
    scopes = {entry["alpha_3"]: entry["scope"] for entry in entries}
    signed = {entry["alpha_3"] for entry in entries if "Sign Language" in entry["name"]}
    signed |= {
        "ils",
        "sfb",
        "vgt",
    }  # International Sign, Langue des signes de Belgique Francophone, Vlaamse Gebarentaal
    assert all(scopes[three] == "I" for extlangs in EXTLANGS.values() for three in extlangs)
    assert EXTLANGS["sgn"] == signed and not {"chs", "cht", "usa", "mex", "can"} & set().union(*EXTLANGS.values())


@pytest.mark.skipif(not ISO_CODES.is_dir(), reason="Debian's iso-codes, which the table is built from, is not here")
def test_the_regions_and_scripts_are_iso_codes_ones_and_no_variety_is_one() -> None:
    regions = json.loads((ISO_CODES / "iso_3166-1.json").read_text(encoding="utf-8"))["3166-1"]
    scripts = json.loads((ISO_CODES / "iso_15924.json").read_text(encoding="utf-8"))["15924"]
    fields = ("alpha_2", "alpha_3", "name", "common_name", "alpha_4")
    given = {name_key(entry[field]) for entry in regions + scripts for field in fields if field in entry}
    # each as written, without its bracket and by each alias in it: Devanagari (Nagari), Hangul (Hangŭl, Hangeul)
    given |= {re.sub(r" ?\([^)]*\)", "", name) for name in given}
    given |= {
        alias.strip() for name in given for inside in re.findall(r"\((.*?)\)", name) for alias in inside.split(",")
    }
    assert {"devanagari", "nagari", "hangul", "hangeul", "ethiopic", "falkland islands"} <= given
    assert LOCALE_PARTS - LOCALE_WORDS == given and not LOCALE_WORDS & given
    assert not LOCALE_PARTS & {variety for _, variety in VARIETIES}  # a bracket names a region or a variety, not both

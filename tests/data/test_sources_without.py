"""The ``without`` source: a source's posts but those of some groups, in every split, on generated files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from faim.assembly import build_source
from faim.data import language as language_module
from faim.recipe.errors import RecipeError
from faim.recipe.validate import validate

COLUMNS = {"labels": {"fake": "fake"}, "meta": ["event"]}


def jsonl(path: Path, events: list[str]) -> str:
    """A JSONL file of one labelled post per event given, ids ``<stem>-<index>``."""
    rows = [{"id": f"{path.stem}-{i}", "text": f"post {i}", "fake": i % 2, "event": e} for i, e in enumerate(events)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


@pytest.fixture
def wrapped(tmp_path: Path) -> dict:
    return {
        "type": "jsonl",
        "train": jsonl(tmp_path / "train.jsonl", ["storm", "quake", "storm", "fire"]),
        "validation": jsonl(tmp_path / "val.jsonl", ["quake", "storm", "eclipse"]),
        "columns": COLUMNS,
    }


def test_the_groups_named_are_left_out_of_every_split_and_the_rest_kept(wrapped):
    source = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["storm"]})
    assert source.splits() == ["train", "validation"]
    assert [(p.id, p.meta["event"]) for p in source.posts("train")] == [("train-1", "quake"), ("train-3", "fire")]
    assert [(p.id, p.meta["event"]) for p in source.posts("validation")] == [("val-0", "quake"), ("val-2", "eclipse")]
    both = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["storm", "quake"]})
    assert [p.id for p in both.posts("validation")] == ["val-2"]


def test_a_split_file_not_there_is_named_by_its_recipe_path_before_any_split_is_read(wrapped, tmp_path, monkeypatch):
    from faim.data.sources import JsonlSource

    source = build_source(
        {"type": "without", "source": wrapped | {"test": str(tmp_path / "tset.jsonl")}, "field": "event", "values": [1]}
    )
    monkeypatch.setattr(JsonlSource, "rows", lambda self, path: pytest.fail(f"{path} was read"))
    with pytest.raises(FileNotFoundError, match=r"^data.source.test: .*tset.jsonl does not exist"):
        source.check_split("train")  # reading train reads every split
    with pytest.raises(FileNotFoundError, match=r"^data.source.test: .*tset.jsonl does not exist"):
        source.posts("train")


def test_new_data_is_read_whole(wrapped, tmp_path):
    source = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["storm"]})
    fresh = jsonl(tmp_path / "new.jsonl", ["storm", "quake"])
    assert [p.meta["event"] for p in source.iter_posts(fresh)] == ["storm", "quake"]


def test_what_is_left_out_is_described_and_changes_the_fingerprint(wrapped):
    plain = build_source(wrapped)
    storm = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["storm"]})
    quake = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["quake"]})
    assert storm.describe("train") == f"{plain.describe('train')} without event storm"
    fingerprints = {s.fingerprint("train") for s in (plain, storm, quake)}
    assert len(fingerprints) == 3
    again = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["storm"]})
    assert again.fingerprint("train") == storm.fingerprint("train")


def test_a_group_no_post_has_is_named_with_the_groups_there_are(wrapped):
    source = build_source({"type": "without", "source": wrapped, "field": "event", "values": ["strom"]})
    with pytest.raises(ValueError, match=r"no post has meta.event \['strom'\].*eclipse, fire, quake, storm"):
        source.posts("train")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"source": {"root": "x"}, "field": "event", "values": ["a"]}, "source must be a data: mapping with a type"),
        ({"field": "", "values": ["a"]}, "field must name a meta field"),
        ({"field": "event", "values": []}, "values must be a non-empty list"),
        (
            {"field": "lang", "values": ["es"], "read_lang": "code"},
            "read_lang: 'code' was the earlier reading.*pt-BR "
            "apart from pt.*write read_lang: language or leave the key out",
        ),
        ({"field": "lang", "values": ["es"], "read_lang": "codes"}, "read_lang must be 'language', got 'codes'"),
    ],
)
def test_bad_arguments_are_refused(wrapped, arguments, message):
    with pytest.raises(ValueError, match=message):
        build_source({"type": "without", "source": wrapped} | arguments)


def recipe(data: dict, balance: str | None = None) -> dict:
    return {
        "data": data,
        "model": {
            "encoders": {"text": {"type": "tiny_text"}},
            "fusion": {"type": "concat"},
            "heads": {"fake": {"type": "binary", "labels": ["real", "fake"]}},
        },
        "train": {"balance": balance},
    }


def test_the_recipe_validates_the_wrapped_source(wrapped):
    bad = wrapped | {"type": "jsnol"}
    with pytest.raises(RecipeError, match=r"data\.source\.type.*unknown source 'jsnol'.*did you mean 'jsonl'"):
        validate(recipe({"type": "without", "source": bad, "field": "event", "values": ["storm"]}))
    with pytest.raises(RecipeError, match=r"data\.source\.sources\[1\]\.type"):
        members = [wrapped, wrapped | {"type": "nope"}]
        validate(
            recipe({"type": "without", "source": {"type": "concat", "sources": members}, "field": "e", "values": [1]})
        )


def test_a_without_member_of_a_concat_is_validated_and_cannot_hide_a_concat(wrapped):
    typo = {"type": "without", "source": wrapped | {"type": "jsnol"}, "field": "event", "values": ["storm"]}
    with pytest.raises(RecipeError, match=r"data\.sources\[1\]\.source\.type.*unknown source 'jsnol'"):
        validate(recipe({"type": "concat", "sources": [wrapped, typo]}))
    nested = {
        "type": "without",
        "source": {"type": "concat", "sources": [wrapped, wrapped]},
        "field": "e",
        "values": [1],
    }
    with pytest.raises(RecipeError, match=r"data\.sources\[1\].*a concat member cannot be a concat itself"):
        validate(recipe({"type": "concat", "sources": [wrapped, nested]}))
    fine = {"type": "without", "source": wrapped, "field": "event", "values": ["storm"]}
    validate(recipe({"type": "concat", "sources": [wrapped, fine]}))


def test_balancing_sources_sees_through_to_a_wrapped_concat(wrapped):
    concat = {"type": "concat", "sources": [wrapped, wrapped]}
    validate(recipe({"type": "without", "source": concat, "field": "event", "values": ["storm"]}, "sources"))
    with pytest.raises(RecipeError, match="this data is one source"):
        validate(recipe({"type": "without", "source": wrapped, "field": "event", "values": ["storm"]}, "sources"))


SPANISH = "no puedo creer lo que está pasando en esta ciudad hoy"
ENGLISH = "i cannot believe what happened in town today"


def test_left_out_by_language_a_post_giving_none_is_of_the_language_it_is_written_in(tmp_path):
    rows = [{"id": "es-given", "text": SPANISH, "lang": "ES"}, {"id": "es-told", "text": SPANISH}]
    rows += [{"id": "en-given", "text": ENGLISH, "lang": "eng"}, {"id": "en-told", "text": ENGLISH}]
    path = tmp_path / "posts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    wrapped = {"type": "jsonl", "train": str(path), "validation": str(path), "columns": {"meta": ["lang"]}}
    for values in (["es"], ["Spanish"], ["SPA"]):  # a value is read as the code a post gives is
        source = build_source({"type": "without", "source": wrapped, "field": "lang", "values": values})
        assert [post.id for post in source.posts("train")] == ["en-given", "en-told"], values
        assert source.posts("validation")[1].meta == {"lang": None}  # the posts come through as the source gives them


def test_left_out_by_language_each_text_is_told_once_however_often_its_splits_are_read(tmp_path, monkeypatch):
    rows = [{"id": f"t{i}", "text": f"{text} {i}"} for i, text in enumerate([SPANISH, ENGLISH] * 3)]
    for split in ("train", "val"):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    wrapped = {"type": "jsonl", "train": str(tmp_path / "train.jsonl"), "validation": str(tmp_path / "val.jsonl")}
    told = []
    identify = language_module.identify
    monkeypatch.setattr(language_module, "identify", lambda text: told.append(text) or identify(text))
    source = build_source({"type": "without", "source": wrapped, "field": "lang", "values": ["es"]})
    for split in ("train", "validation") * 3:  # as training and evaluating a fold read them
        assert len(source.posts(split)) == 3
    assert sorted(told) == sorted(row["text"] for row in rows)


VARIETIES = ["Persian (Dari)", "Norwegian (Bokmål)", "Kurdish (Kurmanji)", "Chinese (Mandarin)", "zh-cmn", "no-bok"]


@pytest.mark.parametrize(
    "value",
    ["pt-BR", "pt_BR", "zh-TW", "zh-Hant", "por_Latn", "English (US)", "English(USA)", "zh-yue-HK", "zh-cmn-Hans"]
    + ["French (Côte d’Ivoire)"],  # as CLDR writes it, where iso-codes writes Côte d'Ivoire
)
def test_a_lang_value_read_without_its_region_or_script_is_refused_naming_the_locale_field_to_use(wrapped, value):
    lang = {"type": "without", "source": wrapped | {"columns": {"meta": ["lang"]}}, "field": "lang"}
    refused = rf"^data: without: values: {re.escape(repr(value))} reads as .*field: locale$"
    with pytest.raises(ValueError, match=refused):
        build_source(lang | {"values": [value]})
    for value in (
        "pt",
        "Portuguese",
        "POR",
        "zh-yue",
        "zh-min-nan",
        "Greek, Modern (1453-)",
        "hi-en",
        "hi-Latn-en",
    ):  # languages as written, and code-mixed pairs
        build_source(lang | {"values": [value]})
    for value in VARIETIES:  # a variety, extended language subtag or legacy tag read as its language: nothing cut
        build_source(lang | {"values": [value]})
    build_source({"type": "without", "source": wrapped, "field": "event", "values": ["pt-BR"]})  # not lang: as written

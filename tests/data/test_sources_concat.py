"""The ``concat`` source: training posts of several sources, validation from the first, on generated files."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from faim.assembly import build_source
from faim.data.concat import ConcatSource
from faim.data.post import Post
from faim.data.sources import check_split
from faim.recipe.errors import RecipeError
from faim.recipe.validate import validate
from faim.training.loaders import sources_balanced


def tweeteval(root: Path) -> Path:
    """A TweetEval task folder: 4 train tweets (one hateful), 2 validation tweets."""
    root.mkdir()
    for prefix, texts, labels in (("train", ["a", "b", "c", "d"], [0, 1, 0, 0]), ("val", ["e", "f"], [1, 0])):
        (root / f"{prefix}_text.txt").write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
        (root / f"{prefix}_labels.txt").write_text("".join(f"{x}\n" for x in labels), encoding="utf-8")
    return root


def davidson(root: Path) -> Path:
    """A Davidson ``labeled_data.csv`` with 10 tweets of each 3-way class."""
    root.mkdir()
    with open(root / "labeled_data.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "count", "hate_speech", "offensive_language", "neither", "class", "tweet"])
        for index in range(30):
            writer.writerow([index, 3, 0, 0, 3, index % 3, f"davidson {index}"])
    return root


@pytest.fixture
def members(tmp_path: Path) -> list[dict]:
    return [
        {"type": "tweeteval", "root": str(tweeteval(tmp_path / "te")), "task": "hate"},
        {"type": "davidson", "root": str(davidson(tmp_path / "dv")), "task": "hate", "labels": "binary"},
    ]


def test_train_joins_every_member_and_validation_stays_the_first(members):
    source = build_source({"type": "concat", "sources": members})
    train = source.posts("train")
    assert [post.id for post in train[:4]] == ["0-tweeteval/0", "0-tweeteval/1", "0-tweeteval/2", "0-tweeteval/3"]
    davidson_train = [post for post in train if post.id.startswith("1-davidson/")]
    assert len(train) == 4 + len(davidson_train) and len(davidson_train) == 27  # 10% of each class held out
    assert sum(post.labels["hate"] for post in davidson_train) == 9  # class 0 (hate) → 1, the rest → 0
    assert len({post.id for post in train}) == len(train)
    validation = source.posts("validation")
    assert [(post.id, post.text, post.labels) for post in validation] == [
        ("0-tweeteval/0", "e", {"hate": 1}),
        ("0-tweeteval/1", "f", {"hate": 0}),
    ]
    assert source.splits() == ["train", "validation"]
    assert source.describe("validation").endswith("val_text.txt")
    assert " + " in source.describe("train")


def test_a_member_post_whose_id_was_taken_away_is_refused_naming_it_not_prefixed_as_none(members, monkeypatch):
    source = build_source({"type": "concat", "sources": members})
    posts = source.members[1].posts("train")
    posts[2].id = None  # as a data source's plug-in may set it, after the post was built
    monkeypatch.setattr(source.members[1], "posts", lambda split: posts)
    with pytest.raises(ValueError, match=rf"^{posts[2].origin} field 'id': missing; give each post an id"):
        source.posts("train")


def test_evaluate_on_all_validates_on_every_member(members):
    source = ConcatSource(members, evaluate_on="all")
    assert len(source.posts("validation")) == 2 + 3
    assert [post.meta["source"] for post in source.posts("validation")] == ["0-tweeteval"] * 2 + ["1-davidson"] * 3


def test_balanced_draws_take_each_member_equally_often(members):
    train = build_source({"type": "concat", "sources": members}).posts("train")  # 4 tweets against 27
    sampler = sources_balanced(train, seed=0)
    drawn = Counter(train[index].meta["source"] for _ in range(200) for index in sampler)
    assert len(list(sampler)) == len(train)
    assert 0.45 < drawn["0-tweeteval"] / sum(drawn.values()) < 0.55
    assert list(sources_balanced(train, seed=0)) == list(sources_balanced(train, seed=0))
    with pytest.raises(ValueError, match=r"^post id='lone': no meta.source to balance on"):
        sources_balanced([Post(id="lone", text="x")], seed=0)
    with pytest.raises(ValueError, match=r"^t.jsonl:4 \(post id='lone'\): no meta.source to balance on"):
        sources_balanced([Post(id="lone", text="x", origin="t.jsonl:4")], seed=0)


def test_balancing_over_sources_needs_several(members, tmp_path):
    heads = {"hate": {"type": "binary", "labels": ["no", "yes"]}}
    model = {"encoders": {"text": {"type": "tiny_text"}}, "fusion": {"type": "concat"}, "heads": heads}
    recipe = {"data": members[0], "model": model, "train": {"balance": "sources"}}
    with pytest.raises(RecipeError, match="train.balance: sources balances the members of a concat"):
        validate(recipe, "r.yaml")
    recipe["data"] = {"type": "concat", "sources": members}
    validate(recipe, "r.yaml")
    recipe["eval"] = {"threshold_balance": "source"}
    with pytest.raises(RecipeError, match="eval.threshold_balance: unknown balance 'source'.*did you mean 'sources'"):
        validate(recipe, "r.yaml")


def test_fingerprint_follows_the_contributing_members(members, tmp_path):
    first = ConcatSource(members)
    before = first.fingerprint("train")
    assert first.fingerprint("validation") == ConcatSource(members[:1] + members[:1]).fingerprint("validation")
    assert before != ConcatSource(members[:1] + members[:1]).fingerprint("train")
    (tmp_path / "dv" / "labeled_data.csv").write_text(
        (tmp_path / "dv" / "labeled_data.csv").read_text(encoding="utf-8").replace("davidson 7", "changed"),
        encoding="utf-8",
    )
    assert ConcatSource(members).fingerprint("train") != before


def test_a_members_split_file_not_there_is_named_by_its_recipe_path_before_any_is_read(members, tmp_path, monkeypatch):
    jsonl = {"type": "jsonl", "train": str(tmp_path / "t.jsonl"), "validation": str(tmp_path / "v.jsonl")}
    (tmp_path / "t.jsonl").write_text('{"text": "a", "hate": 1}\n', encoding="utf-8")
    source = build_source({"type": "concat", "sources": [*members, jsonl], "evaluate_on": "all"})
    monkeypatch.setattr(ConcatSource, "member_posts", lambda self, index, split: pytest.fail(f"member {index} read"))
    source.check_split("train")
    with pytest.raises(FileNotFoundError, match=r"^data.sources\[2\].validation: .*v.jsonl does not exist"):
        check_split(source, "validation")
    with pytest.raises(FileNotFoundError, match=r"^data.sources\[2\].validation: .*v.jsonl does not exist"):
        source.posts("validation")


def test_missing_split_names_the_concat_by_its_recipe_path_and_the_ones_there_are(members):
    source = build_source({"type": "concat", "sources": members})
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(KeyError, match=r"^\"data: no split 'test'; found: train, validation\"$"):
            read(source, "test")


@pytest.mark.parametrize(
    ("sources", "evaluate_on", "message"),
    [
        ("x", "first", "at least two"),
        ([{"type": "tweeteval", "root": "r"}], "first", "at least two"),
        ([{"root": "r"}, {"type": "tweeteval", "root": "r"}], "first", r"^sources\[0\]: a concat member must"),
        ([{"type": "tweeteval", "root": "r"}] * 2, "second", "evaluate_on must be one of first, all"),
    ],
)
def test_bad_arguments_are_named(sources, evaluate_on, message):
    with pytest.raises(ValueError, match=message):
        ConcatSource(sources, evaluate_on)


def recipe(data: dict) -> dict:
    return {
        "data": data,
        "model": {
            "encoders": {"text": {"type": "hf_text", "weights": "w"}},
            "fusion": {"type": "concat"},
            "heads": {"hate": {"type": "binary", "labels": ["no", "yes"]}},
        },
    }


def test_recipe_validation_checks_each_member(members):
    validate(recipe({"type": "concat", "sources": members}))
    bad = [members[0], {**members[1], "label": "binary"}]
    with pytest.raises(RecipeError, match=r"data.sources\[1\].label.*did you mean 'labels'"):
        validate(recipe({"type": "concat", "sources": bad}))
    with pytest.raises(RecipeError, match=r"data.sources\[1\]: a concat member cannot be a concat"):
        validate(recipe({"type": "concat", "sources": [members[0], {"type": "concat", "sources": members}]}))

"""Field-by-field differences between resolved recipes."""

from __future__ import annotations

from faim.recipe.compare import changed_fields, describe_changes


def test_changed_fields_name_each_differing_leaf_by_its_dotted_path() -> None:
    old = {"train": {"lr": 0.001, "seed": 0}, "model": {"heads": {"hate": {"dropout": 0.1}}}, "eval": {}}
    new = {"train": {"lr": 0.01, "seed": 0}, "model": {"heads": {"hate": {"dropout": 0.1}}}, "eval": {"split": "x"}}
    assert changed_fields(old, new) == {"train.lr": (0.001, 0.01), "eval.split": (None, "x")}


def test_a_section_that_changes_kind_is_one_change() -> None:
    old = {"data": {"type": "tweeteval", "root": "a"}}
    new = {"data": ["not", "a", "mapping"]}
    assert changed_fields(old, new) == {"data": ({"type": "tweeteval", "root": "a"}, ["not", "a", "mapping"])}


def test_equal_recipes_have_no_changes() -> None:
    recipe = {"train": {"lr": 0.001}, "data": {"columns": {"labels": {"hate": "label"}}}}
    assert changed_fields(recipe, {"train": {"lr": 0.001}, "data": {"columns": {"labels": {"hate": "label"}}}}) == {}


def test_describe_changes_shows_the_first_few_and_counts_the_rest() -> None:
    changes = {f"train.field{n}": (n, n + 1) for n in range(5)}
    assert describe_changes(changes, limit=2) == "train.field0: 0 -> 1; train.field1: 1 -> 2; and 3 more"
    assert describe_changes({"train.lr": (0.001, 0.01)}) == "train.lr: 0.001 -> 0.01"

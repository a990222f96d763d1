"""base: merging, --set overrides and shipped recipes."""

from __future__ import annotations

import collections
import re
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import tiny_recipe

import faim
from faim import registry
from faim.recipe import Recipe, RecipeError, as_recipe
from faim.recipe.loader import (
    SHIPPED,
    apply_overrides,
    load_recipe_dict,
    parse_override,
    python_values,
    shipped_file,
    shipped_recipes,
)
from faim.recipe.sections import TrainConfig
from faim.wording import shell_path


def test_overrides_parse_yaml_values() -> None:
    result = apply_overrides({"train": {"max_epochs": 1}}, ["train.max_epochs=3", "train.lr=1e-4", "eval.slice=lang"])
    assert result == {"train": {"max_epochs": 3, "lr": 1e-4}, "eval": {"slice": "lang"}}


def test_override_without_equals_fails() -> None:
    with pytest.raises(RecipeError, match="KEY.PATH=VALUE"):
        apply_overrides({}, ["train.max_epochs"])


def test_an_override_of_a_components_type_replaces_it_whole() -> None:
    component = {"model": {"fusion": {"type": "attention", "dim": 32, "num_heads": 2}}}
    assert apply_overrides(component, ["model.fusion.type=attention"]) == component
    assert apply_overrides(component, ["model.fusion.type=concat"]) == {"model": {"fusion": {"type": "concat"}}}
    recipe = Recipe.load("hate_text_frozen", ["model.encoders.text.type=tiny_text", "model.encoders.text.dim=8"])
    assert recipe.model["encoders"]["text"] == {"type": "tiny_text", "dim": 8}
    assert apply_overrides(component, ["model.fusion.type=gated", "model.fusion.type=concat"])["model"] == {
        "fusion": {"type": "concat"}
    }
    dims = ("model.fusion.dim=64", "model.fusion={type: gated, dim: 64}", "model={fusion: {type: gated, dim: 64}}")
    for earlier in dims:
        with pytest.raises(RecipeError, match=r"model.fusion.type: replaces the component whole, dropping what --set "):
            apply_overrides(component, [earlier, "model.fusion.type=concat"])  # dim would be lost
    assert apply_overrides(component, ["model.fusion={type: gated}", "model.fusion.type=concat"]) == {
        "model": {"fusion": {"type": "concat"}}
    }


def test_an_error_an_override_causes_names_the_override(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"hate_text_frozen.yaml: --set model.fusion.dimm=3: model.fusion.dimm: unk"):
        Recipe.load("hate_text_frozen", ["train.max_epochs=2", "model.fusion.dimm=3"])
    with pytest.raises(RecipeError, match=r"^<dict>: --set train.max_epochs=0: train.max_epochs: expected at least 1"):
        as_recipe(Recipe.load("hate_text_frozen").to_dict(), ["train.max_epochs=0"])
    with pytest.raises(RecipeError, match=r"hate_text_frozen.yaml: --set eval=3: eval: expected a mapping"):
        as_recipe(Recipe.load("hate_text_frozen"), ["eval=3"])
    with pytest.raises(RecipeError, match=r"hate_text_frozen.yaml: train.monitor: 'val/hate/auroc' is not logged"):
        Recipe.load("hate_text_frozen", ["model.heads={spam: {type: binary, labels: [no, yes]}}"])


def test_base_is_merged_and_type_change_replaces(tmp_path: Path) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path)
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = {"base": "base.yaml", "model": {"fusion": {"type": "concat"}}, "train": {"max_epochs": 7}}
    (tmp_path / "child.yaml").write_text(yaml.safe_dump(child))
    recipe = Recipe.load(tmp_path / "child.yaml")
    assert recipe.model["fusion"] == {"type": "concat"}
    assert recipe.train.max_epochs == 7
    assert recipe.train.batch_size == 32


def test_null_in_a_child_recipe_removes_the_key(tmp_path: Path) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path)
    base["train"]["encoder_lr"] = 0.5
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = {"base": "base.yaml", "model": {"encoders": {"image": None}}, "train": {"encoder_lr": None}}
    (tmp_path / "child.yaml").write_text(yaml.safe_dump(child))
    recipe = Recipe.load(tmp_path / "child.yaml")
    assert sorted(recipe.model["encoders"]) == ["comments", "text"]
    assert recipe.train.encoder_lr is None
    assert faim.build(recipe).model.kinds == ["comments", "text"]


def test_a_null_override_drops_a_head_an_encoder_or_a_train_key_and_sets_any_other_null() -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, Path("run"))
    base["model"]["heads"]["other"] = {"type": "binary", "labels": ["no", "yes"]}
    base["data"]["columns"] |= {"comments": "replies", "labels": {"other": "label"}}
    dropped = ["model.heads.harmful=null", "model.encoders.image=null", "model.encoders.comments=null"]
    recipe = as_recipe(base, [*dropped, "data.columns.comments=null"])
    assert list(recipe.model["heads"]) == ["other"] and sorted(recipe.model["encoders"]) == ["text"]
    assert recipe.data["columns"]["comments"] is None  # null means something here: the comments are not read
    assert as_recipe(base, ["train.lr=null"]).train.lr == TrainConfig().lr  # the recipe's lr dropped: the default
    with pytest.raises(RecipeError, match=r"--set train.lrr=null: train.lrr: unknown key \(did you mean 'lr'\?\)"):
        as_recipe(base, ["train.lrr=null"])


@pytest.mark.parametrize(
    ("written", "override", "read"),
    [
        ({"train": {"lr": None}}, "train.lr=null", lambda recipe: recipe.train.lr == TrainConfig().lr),
        ({"data": {"columns": {"comments": None}}}, "data.columns.comments=null",
         lambda recipe: recipe.data["columns"]["comments"] is None),
    ],
    ids=["train.lr", "data.columns.comments"],
)  # fmt: skip
def test_a_null_for_a_key_the_base_holds_reads_as_the_same_null_given_by_set(
    tmp_path: Path, written: dict, override: str, read
) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, Path("run"))
    base["data"]["columns"]["comments"] = "replies"
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({"base": "base.yaml", **written}))
    child, overridden = Recipe.load(tmp_path / "child.yaml"), Recipe.load(tmp_path / "base.yaml", [override])
    assert read(child) and read(overridden) and child.to_dict() == overridden.to_dict()


def test_a_null_for_a_key_the_base_has_not_is_judged_as_without_a_base(tmp_path: Path) -> None:
    child = tmp_path / "child.yaml"
    for written, refused in (
        ("trian: null\n", r"trian: unknown key \(did you mean 'train'\?\); valid: base, data, model, train, eval"),
        ("model:\n  fusionn: null\n", r"model.fusionn: unknown key \(did you mean 'fusion'\?\)"),
        ("train:\n  lrr: null\n", r"train.lrr: unknown key \(did you mean 'lr'\?\)"),
        ("model:\n  heads:\n    hate: {dropout: null}\n", r"model.heads.hate.dropout: expected float, got None"),
    ):
        child.write_text(f"base: hate_text_frozen\n{written}")
        with pytest.raises(RecipeError, match=rf"^{child}: {refused}"):
            Recipe.load(child)
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(tiny_recipe({"train": "t.jsonl", "validation": "v"}, tmp_path)))
    child.write_text("base: base.yaml\ndata:\n  columns:\n    comments: null\nmodel:\n  heads:\n    x: null\n")
    recipe = Recipe.load(child)  # a head the base has not is dropped as --set drops it; a null comments reads none
    assert recipe.data["columns"]["comments"] is None and list(recipe.model["heads"]) == ["harmful"]


def test_an_error_in_what_the_base_writes_names_the_base_file_and_one_in_the_child_the_child(tmp_path: Path) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, Path("run"))
    base["model"]["heads"]["harmful"]["dropuot"] = 0.1
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = tmp_path / "child.yaml"
    child.write_text("base: base.yaml\ntrain: {max_epochs: 1}\n")
    unknown = r"model.heads.harmful.dropuot: unknown key \(did you mean 'dropout'\?\)"
    with pytest.raises(RecipeError, match=rf"^{tmp_path / 'base.yaml'} \(the base of {child}\): {unknown}"):
        Recipe.load(child)
    with pytest.raises(RecipeError, match=rf"^{tmp_path / 'base.yaml'} \(the base of <dict>\): {unknown}"):
        as_recipe({"base": str(tmp_path / "base.yaml")})
    del base["model"]["heads"]["harmful"]["dropuot"]
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child.write_text("base: base.yaml\nmodel:\n  heads:\n    harmful: {hidden_dim: x}\n")
    with pytest.raises(RecipeError, match=rf"^{child}: model.heads.harmful.hidden_dim: expected int"):
        Recipe.load(child)
    with pytest.raises(RecipeError, match=rf"^{child}: --set model.heads.harmful.dropuot=0.2: {unknown}"):
        Recipe.load(child, ["model.heads.harmful.dropuot=0.2"])
    child.write_text("base: base.yaml\nmodel:\n  heads:\n    harmful: {type: multiclass}\n")  # drops the base's labels
    with pytest.raises(RecipeError, match=rf"^{child}: model.heads.harmful.labels: "):
        Recipe.load(child)
    child.write_text("base: base.yaml\n")
    with pytest.raises(RecipeError, match=rf"^{child}: model.heads.harmful.labels: "):
        Recipe.load(child, ["model.heads.harmful.type=multiclass"])


def test_a_null_train_or_eval_key_takes_its_default_set_by_the_base_or_not_from_a_file_or_a_mapping(
    tmp_path: Path,
) -> None:
    nulls = {"train": {"seed": None, "lr": None}, "eval": {"batch_size": None}}
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({"base": "hate_text_frozen", **nulls}))
    whole = Recipe.load("hate_text_frozen").to_dict()
    whole["train"] |= {"seed": None, "lr": 0.5}  # the shipped recipe sets lr, not seed
    whole["eval"] |= nulls["eval"]
    (tmp_path / "whole.yaml").write_text(yaml.safe_dump(whole))
    for loaded in (
        Recipe.load(tmp_path / "child.yaml"),
        Recipe.load("hate_text_frozen", ["train.seed=null", "train.lr=null", "eval.batch_size="]),
        Recipe.load(tmp_path / "whole.yaml", ["train.lr=null"]),
        Recipe.from_dict(whole | {"train": whole["train"] | {"lr": None}, "eval": None}),
        as_recipe(whole, ["train.lr=null"]),
    ):
        assert (loaded.train.seed, loaded.train.lr, loaded.eval.batch_size) == (0, 0.001, 64)


def test_dropping_the_only_head_or_every_encoder_is_refused_naming_the_null_that_did(tmp_path: Path) -> None:
    child = tmp_path / "child.yaml"
    child.write_text("base: hate_text_frozen\nmodel:\n  heads:\n    hate: null\n")
    without = "dropping head 'hate' leaves the model without heads; keep one or give one of its own"
    with pytest.raises(RecipeError, match=rf"^{child}: model.heads.hate: {without}"):
        Recipe.load(child)
    child.write_text("base: hate_text_frozen\n")
    with pytest.raises(RecipeError, match=rf"^{child}: --set model.heads.hate=null: model.heads.hate: {without}"):
        Recipe.load(child, ["model.heads.hate=null"])
    with pytest.raises(RecipeError, match=r"^<dict>: --set model.encoders.text=: model.encoders.text: dropping encod"):
        as_recipe({"base": "hate_text_frozen"}, ["model.encoders.text="])
    with pytest.raises(RecipeError, match=r"hate_text_frozen.yaml: --set model.heads.hate=null: model.heads.hate: dr"):
        Recipe.load("hate_text_frozen").override(["model.heads.hate=null"])
    child.write_text("base: hate_text_frozen\nmodel:\n  heads:\n    hate: null\n    other: null\n")
    with pytest.raises(RecipeError, match=rf"^{child}: model.heads.hate: {without}"):  # other dropped nothing
        Recipe.load(child)
    with pytest.raises(RecipeError, match=rf"^{child}: model.heads.hate: {without}"):
        Recipe.load(child, ["model.heads.nothing=null"])
    with pytest.raises(RecipeError, match=r"--set model.heads.hate=null: model.heads.hate: dr"):
        Recipe.load("hate_text_frozen", ["model.heads.nothing=null", "model.heads.hate=null", "model.heads.x=null"])
    encoders_only = "model={encoders: {text: {type: hf_text, weights: x}}, fusion: {type: concat}}"
    given_back = ["model.heads.hate=null", "model.heads.spam={type: binary, labels: [a, b]}", encoders_only]
    spam = ["data.task=spam", "train.monitor=val/loss", "train.mode=min"]  # what else the base gives hate
    with pytest.raises(RecipeError, match=r"--set model=\{encoders.*: model.heads: expected a mapping of task name"):
        Recipe.load("hate_text_frozen", given_back)  # the null was undone: the model= that left none is named
    with pytest.raises(RecipeError, match=r"--set model=\{encoders.*: model.heads: expected a mapping of task name"):
        Recipe.load(child, given_back[1:])
    child.write_text(
        "base: hate_text_frozen\nmodel:\n  heads:\n    hate: null\n    spam: {type: binary, labels: [a, b]}\n"
    )
    assert list(Recipe.load(child, spam).model["heads"]) == ["spam"]
    replaced = ["model.heads.hate=null", "model.heads.spam={type: binary, labels: [a, b]}", *spam]
    assert list(Recipe.load("hate_text_frozen", replaced).model["heads"]) == ["spam"]


def test_apply_overrides_records_the_last_override_that_left_no_heads_or_no_encoders() -> None:
    model = {"model": {"heads": {"hate": {"type": "binary"}}, "encoders": {"text": {"type": "tiny_text"}}}}
    emptied: dict[tuple[str, str], Any] = {}
    spam = "model.heads.spam={type: binary}"
    apply_overrides(model, ["model.heads.hate=null", spam, "model.heads.spam=", "train.lr=0.1"], emptied)
    assert emptied == {("model", "heads"): ("--set model.heads.spam=", "model.heads.spam", "dropping head 'spam'")}
    apply_overrides(model, ["model={fusion: {type: concat}}"], emptied)  # another key's: left to validation to name
    assert emptied == {("model", "heads"): None, ("model", "encoders"): None}
    apply_overrides(model, ["model.encoders={}"], emptied)
    assert emptied[("model", "encoders")] == ("--set model.encoders={}", "model.encoders", "an empty mapping")


@pytest.mark.parametrize(("kind", "what"), [("heads", "head"), ("encoders", "encoder")])
def test_a_null_or_an_empty_mapping_for_every_head_or_encoder_is_refused_naming_where_and_the_key(
    kind: str, what: str, tmp_path: Path
) -> None:
    dropped = f"null, dropping every {what}, leaves the model without {kind}; keep one or give one of its own"
    emptied = f"an empty mapping leaves the model without {kind}; keep one or give one of its own"
    child = tmp_path / "child.yaml"
    for value, said in (("null", dropped), ("{}", emptied)):  # an empty mapping empties the base's, as --set does
        child.write_text(f"base: hate_text_frozen\nmodel:\n  {kind}: {value}\n")
        with pytest.raises(RecipeError, match=rf"^{child}: model.{kind}: {said}$"):
            Recipe.load(child)
    given = {"heads": "spam={type: binary, labels: [a, b]}", "encoders": "image={type: tiny_image, dim: 8}"}[kind]
    again = [f"model.{kind}.{given}", "train.monitor=val/loss", "train.mode=min"]
    again += ["data.task=spam"] if kind == "heads" else []  # what else the base gives hate
    emptied_then_given = Recipe.load("hate_text_frozen", [f"model.{kind}={{}}", *again]).model
    assert Recipe.load(child, again).model == emptied_then_given
    whole = Recipe.load("hate_text_frozen").to_dict()
    for value in (None, {}):  # without a base there is nothing to drop: validation says none are given
        whole["model"][kind] = value
        child.write_text(yaml.safe_dump(whole))
        with pytest.raises(RecipeError, match=rf"^{child}: model.{kind}: expected a mapping of .*; none given$"):
            Recipe.load(child)
        with pytest.raises(RecipeError, match=rf"^<dict>: model.{kind}: expected a mapping of .*; none given$"):
            as_recipe(whole)
    child.write_text("base: hate_text_frozen\n")
    for value, said in (("null", dropped), ("", dropped), ("{}", emptied)):
        with pytest.raises(RecipeError, match=rf"^{child}: --set model.{kind}={value}: model.{kind}: {said}$"):
            Recipe.load(child, [f"model.{kind}={value}"])
        with pytest.raises(RecipeError, match=rf"hate_text_frozen.yaml: --set model.{kind}={value}: model.{kind}: "):
            Recipe.load("hate_text_frozen").override([f"model.{kind}={value}"])
    del whole["model"][kind]  # a recipe that never had any is missing them, as validation says
    with pytest.raises(RecipeError, match=rf"^<dict>: model.{kind}: expected a mapping of "):
        as_recipe(whole)


def test_a_misindented_head_of_a_recipe_without_a_base_is_named_as_an_unknown_key_not_as_a_drop(
    tmp_path: Path,
) -> None:
    recipe = tmp_path / "mine.yaml"
    model = "model:\n  encoders:\n    text: {type: tiny_text}\n  fusion: {type: concat}\n"
    recipe.write_text(f"{model}  heads:\n  hate:\n    type: binary\n    labels: [no, yes]\n")
    with pytest.raises(RecipeError, match=rf"^{recipe}: model.hate: unknown key; valid: encoders, fusion, heads$"):
        Recipe.load(recipe)
    recipe.write_text(f"{model}  heads:\n")
    with pytest.raises(
        RecipeError, match=rf"^{recipe}: model.heads: expected a mapping of task name to head; none given$"
    ):
        Recipe.load(recipe)
    recipe.write_text(
        "model:\n  encoders:\n  fusion: {type: concat}\n  heads: {hate: {type: binary, labels: [a, b]}}\n"
    )
    with pytest.raises(RecipeError, match=rf"^{recipe}: model.encoders: expected a mapping of .*; none given$"):
        Recipe.load(recipe)


def test_a_misindented_head_of_a_recipe_with_a_base_is_named_as_an_unknown_key_not_as_a_drop(tmp_path: Path) -> None:
    recipe = tmp_path / "mine.yaml"
    unknown = "model.hate: unknown key; valid: encoders, fusion, heads"
    head = "hate: {type: binary, labels: [a, b]}\n"
    for written in (f"  heads:\n  {head}", f"  {head}"):
        recipe.write_text(f"base: hate_text_frozen\nmodel:\n{written}")
        with pytest.raises(RecipeError, match=rf"^{recipe}: {unknown}$"):
            Recipe.load(recipe)
    recipe.write_text("base: hate_text_frozen\nmodel:\n  encoders:\n  text: {type: tiny_text}\n")
    with pytest.raises(RecipeError, match=rf"^{recipe}: model.text: unknown key; valid: encoders, fusion, heads$"):
        Recipe.load(recipe)
    recipe.write_text("base: hate_text_frozen\n")
    with pytest.raises(RecipeError, match=rf"^{recipe}: --set model.hate=.*: {unknown}$"):
        Recipe.load(recipe, ["model.heads=null", "model.hate={type: binary, labels: [a, b]}"])


def test_a_section_left_null_falls_back_to_its_defaults_with_a_base_or_without(tmp_path: Path) -> None:
    defaults = Recipe.load("hate_text_frozen", ["train={monitor: val/hate/auroc}", "eval={}"]).to_dict()
    written = Recipe.load("hate_text_frozen").to_dict()
    del written["train"], written["eval"]
    recipe = tmp_path / "mine.yaml"
    recipe.write_text(yaml.safe_dump(written) + "train:\n  monitor: val/hate/auroc\neval:\n")
    assert Recipe.load(recipe).to_dict() == defaults
    recipe.write_text("base: hate_text_frozen\neval: null\n")
    assert Recipe.load(recipe, ["train=null", "train.monitor=val/hate/auroc"]).to_dict() == defaults
    recipe.write_text(yaml.safe_dump(written))
    assert Recipe.load(recipe, ["eval=null", "train.monitor=val/hate/auroc"]).to_dict() == defaults
    assert as_recipe({**written, "train": {"monitor": "val/hate/auroc"}, "eval": None}).to_dict() == defaults
    with pytest.raises(RecipeError, match=rf"^{recipe}: --set model=null: model: expected a mapping with encoders, "):
        Recipe.load(recipe, ["model=null"])
    recipe.write_text(yaml.safe_dump({key: value for key, value in written.items() if key != "data"}) + "data:\n")
    with pytest.raises(RecipeError, match=rf"^{recipe}: data: expected a mapping with 'type:' \(one of "):
        Recipe.load(recipe)


def test_a_null_data_or_model_section_is_refused_as_a_file_refuses_it_by_set_or_in_a_child_recipe(
    tmp_path: Path,
) -> None:
    written = Recipe.load("hate_text_frozen").to_dict()
    without_data = tmp_path / "model_alone.yaml"
    without_data.write_text(yaml.safe_dump({key: value for key, value in written.items() if key != "data"}))
    child = tmp_path / "child.yaml"
    child.write_text("base: hate_text_frozen\ndata: null\n")
    sources = r"data: expected a mapping with 'type:' \(one of .*jsonl"
    for recipe, overrides, where in (
        ("hate_text_frozen", ["data=null"], "--set data=null: "),
        (without_data, ["data=null"], "--set data=null: "),
        (child, [], ""),
    ):
        with pytest.raises(RecipeError, match=rf"{where}{sources}"):
            Recipe.load(recipe, overrides)
    child.write_text("base: hate_text_frozen\nmodel: null\n")
    with pytest.raises(RecipeError, match=rf"^{child}: model: expected a mapping with encoders, fusion and heads$"):
        Recipe.load(child)
    other = "data.root=elsewhere"  # a section left null, then given again key by key
    assert Recipe.load("hate_text_frozen", ["data=null", "data.type=tweeteval", other]).data == {
        "type": "tweeteval",
        "root": "elsewhere",
    }


def test_a_folder_given_for_a_recipe_is_refused_a_saved_models_naming_its_recipe_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "run" / "model"
    model.mkdir(parents=True)
    for name in ("faim.json", "recipe.yaml"):
        (model / name).write_text("{}", encoding="utf-8")
    with pytest.raises(RecipeError, match=rf"^{model}: a saved model, not a recipe; give its recipe, {model}/recipe.y"):
        faim.build(model)
    with pytest.raises(RecipeError, match=rf"^{tmp_path / 'run'}: a folder, not a recipe; give a recipe file or a"):
        Recipe.load(tmp_path / "run")
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({"base": "run/model"}), encoding="utf-8")
    with pytest.raises(RecipeError, match=r"child.yaml: base: run/model: a saved model, not a recipe; give its recipe"):
        Recipe.load(tmp_path / "child.yaml")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hate_text_frozen").mkdir()  # a folder named as a shipped recipe (a run's, say)
    assert Recipe.load("hate_text_frozen").to_dict() == Recipe.load(SHIPPED / "hate_text_frozen.yaml").to_dict()
    (tmp_path / "child.yaml").write_text(yaml.safe_dump({"base": "hate_text_frozen"}), encoding="utf-8")
    assert Recipe.load(tmp_path / "child.yaml").model == Recipe.load("hate_text_frozen").model  # beside it too


def test_two_levels_of_base_fail_naming_the_recipe_its_base_and_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump({"base": "b.yaml"}))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"base": "a.yaml"}))
    with pytest.raises(RecipeError) as info:
        Recipe.load(tmp_path / "c.yaml")
    assert str(info.value).startswith(f"{tmp_path / 'c.yaml'}: base: a.yaml has a base: of its own (b.yaml)")
    assert f"faim recipe show {tmp_path / 'a.yaml'} > FILE" in str(info.value)
    assert "base on a recipe without a base:" in str(info.value)


def test_a_recipe_based_on_itself_or_on_a_recipe_based_on_it_is_refused_as_such(tmp_path: Path) -> None:
    (tmp_path / "self.yaml").write_text("base: self.yaml\n")
    with pytest.raises(RecipeError, match=r"self.yaml: base: self.yaml is this recipe itself; base it on another"):
        Recipe.load(tmp_path / "self.yaml")  # said to write it out with faim recipe show self.yaml before, which fails
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text(f"base: {tmp_path / 'a.yaml'}\n")
    cycle = re.escape(f"{tmp_path / 'a.yaml'}: base: b.yaml has this recipe as its base: ({tmp_path / 'a.yaml'}), so")
    with pytest.raises(RecipeError, match=rf"^{cycle} each is based on the other; give one of them no base:"):
        Recipe.load(tmp_path / "a.yaml")


def test_a_base_that_is_neither_a_file_nor_a_shipped_recipe_is_named_with_the_recipe_that_gives_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"base": "hate_txt_frozen", "train": {"max_epochs": 1}}))
    with pytest.raises(RecipeError) as info:
        Recipe.load(tmp_path / "mine.yaml")
    assert str(info.value).startswith(
        f"{tmp_path / 'mine.yaml'}: base: hate_txt_frozen: no such file, nor a shipped recipe; shipped: "
    )
    assert "hate_text_frozen, " in str(info.value) and f"(looked in {tmp_path})" in str(info.value)


def test_a_recipe_files_base_is_looked_for_beside_it_not_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("base.yaml").write_text(yaml.safe_dump(tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path)))
    Path("hate_text_frozen.yaml").write_text("model: {}\n")  # a file named as a shipped recipe, not beside the child
    Path("recipes").mkdir()
    Path("recipes/child.yaml").write_text("base: base.yaml\n")
    with pytest.raises(
        RecipeError, match=r"^recipes/child.yaml: base: base.yaml: no such file, .*\(looked in recipes\)"
    ):
        Recipe.load("recipes/child.yaml")  # as from recipes/ itself, where no base.yaml is
    Path("recipes/child.yaml").write_text("base: hate_text_frozen.yaml\n")
    assert Recipe.load("recipes/child.yaml").model == Recipe.load(SHIPPED / "hate_text_frozen.yaml").model


def test_a_mapping_takes_a_base_as_a_file_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = as_recipe({"base": "hate_text_frozen", "train": {"max_epochs": 2}}, ["eval.slice=lang"])
    assert shipped.model == Recipe.load("hate_text_frozen").model
    assert (shipped.train.max_epochs, shipped.train.batch_size, shipped.eval.slice) == (2, 64, "lang")
    monkeypatch.chdir(tmp_path)
    Path("base.yaml").write_text(yaml.safe_dump(tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path)))
    assert as_recipe({"base": "base.yaml", "model": {"encoders": {"image": None}}}).model["encoders"] == {
        "text": {"type": "tiny_text", "dim": 32},
        "comments": "text",
    }
    Path("chained.yaml").write_text("base: base.yaml\n")
    with pytest.raises(RecipeError, match=r"^<dict>: base: chained.yaml has a base: of its own \(base.yaml\)"):
        as_recipe({"base": "chained.yaml"})


@pytest.mark.parametrize("name", shipped_recipes())
def test_shipped_recipes_validate(name: str) -> None:
    recipe = Recipe.load(name)
    assert recipe.model["heads"]


@pytest.mark.parametrize("name", shipped_recipes())
def test_every_shipped_recipe_can_be_a_base(name: str, tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(f"base: {name}\n", encoding="utf-8")
    assert Recipe.load(tmp_path / "mine.yaml").to_dict() == Recipe.load(name).to_dict()


def test_a_recipe_that_is_not_utf8_an_override_that_is_not_yaml_and_a_base_that_is_not_a_name_are_named(
    tmp_path: Path,
) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"model: {}\n# caf\xe9\n")
    with pytest.raises(RecipeError, match=r"latin.yaml: not UTF-8 text \(byte 16\)"):
        load_recipe_dict(latin)
    with pytest.raises(
        RecipeError,
        match=r"--set: train.augment: the value '\{a' is not YAML at line 1, column 3: expected ',' or '\}', but got",
    ):
        apply_overrides({}, ["train.augment={a"])
    listed = tmp_path / "listed.yaml"
    listed.write_text("base: [a, b]\nmodel: {}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"listed.yaml: base: expected one recipe's name or path, got \['a', 'b'\]"):
        load_recipe_dict(listed)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "model:\n  fusion: {type: concat\n  heads: {}\n",
            "at line 3, column 8: expected ',' or '}', but got ':' (while parsing a flow mapping at line 2, column 11)",
        ),
        ("model: {}\ntrain: {lr: 1,\n  lr: 2}\n", "at line 3, column 3: found key 'lr' a second time (first given on"),
        ("model:\n\t- x\n", "at line 2, column 1: found character '\\t' that cannot start any token (while scanning"),
        ("model: {}\neval: \x00\n", "at line 2, column 7: character '\\x00': special characters are not allowed"),
    ],
)
def test_a_recipe_that_is_not_yaml_is_named_once_with_the_line_and_column_of_what_is_wrong(
    text: str, said: str, tmp_path: Path
) -> None:
    recipe = tmp_path / "broken.yaml"
    recipe.write_text(text, encoding="utf-8")
    with pytest.raises(RecipeError) as refused:
        Recipe.load(recipe)
    assert str(refused.value).startswith(f"{recipe}: invalid YAML {said}")
    assert "\n" not in str(refused.value) and "<unicode string>" not in str(refused.value)


def test_an_override_splitting_a_key_that_holds_a_dot_says_to_write_the_mapping_whole() -> None:
    remedy = "--set 'train.augment={text.char_swap: 0.25}'"
    refused = r"train\.augment: expected dict\[str, float\], got .*; --set reads each dot as a key inside the one "
    with pytest.raises(RecipeError, match=refused) as error:
        Recipe.load("hate_text_frozen", ["train.augment.text.char_swap=0.25"])
    assert str(error.value).endswith(f"the key text.char_swap, write its whole value as a mapping: {remedy}")
    assert Recipe.load("hate_text_frozen", [remedy[6:].strip("'")]).train.augment == {"text.char_swap": 0.25}
    with pytest.raises(RecipeError, match=r"eval\.fixed_recall: expected list\[float\], got \{'x': 0\.5\}$"):
        Recipe.load("hate_text_frozen", ["eval.fixed_recall.x=0.5"])  # one key below: no key split, nothing to add


@pytest.mark.parametrize(
    ("override", "refused"),
    [
        ("train.augmnt.text.char_swap=0.25", r"train\.augmnt: unknown key \(did you mean 'augment'\?\); valid: [^;]*"),
        ("model.heads.hate.dropuot.x.y=1", r"hate\.dropuot: unknown key \(did you mean 'dropout'\?\); valid: [^;]*"),
        ("model.fusion.dim.a.b=3", r"model\.fusion\.dim: expected int \| None, got \{'a': \{'b': 3\}\}"),
        ("eval.fixed_recall.a.b=0.5", r"eval\.fixed_recall: expected list\[float\], got \{'a': \{'b': 0\.5\}\}"),
    ],
)
def test_an_override_splitting_a_key_taking_no_mapping_is_not_told_to_write_one(override: str, refused: str) -> None:
    with pytest.raises(RecipeError, match=f"{refused}$"):  # a misspelt key, or one taking a number or a list
        Recipe.load("hate_text_frozen", [override])


def test_an_override_indexing_a_list_is_refused_saying_how_to_change_the_list() -> None:
    with pytest.raises(RecipeError, match=r"data\.sources\[1\]\.task: cannot index a list; write a recipe with base:"):
        apply_overrides({"data": {"type": "concat", "sources": []}}, ["data.sources[1].task=hat"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train..lr=1", r"^--set: train\.\.lr: a key is empty \(two dots together, or one at an end\); name each key$"),
        ("train.=1", r"^--set: train\.: a key is empty "),
        ("train.max_epochs.x=1", r"^--set: train\.max_epochs: is an int, not a mapping$"),
    ],
)
def test_an_override_with_an_empty_key_or_setting_inside_a_number_is_refused_as_such(
    override: str, message: str
) -> None:
    with pytest.raises(RecipeError, match=message):
        apply_overrides({"train": {"max_epochs": 3}}, [override])


def test_one_override_given_as_a_string_is_refused_saying_to_pass_a_list(tmp_path: Path) -> None:
    recipe = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path)
    expected = (
        r"^overrides: expected a list of KEY\.PATH=VALUE strings, got one string: pass \['model\.fusion\.dim=8'\]$"
    )
    for call in (faim.build, Recipe.load, as_recipe):
        given = "hate_text_frozen" if call == Recipe.load else recipe
        with pytest.raises(TypeError, match=expected):
            call(given, "model.fusion.dim=8")


def test_a_key_given_twice_in_one_mapping_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "twice.yaml"
    path.write_text("base: hate_text_frozen\ntrain: {max_epochs: 3}\ntrain: {lr: 0.01}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"found key 'train' a second time \(first given on line 2\); give each key"):
        Recipe.load(path)
    path.write_text("base: hate_text_frozen\ntrain: {lr: 0.01, lr: 0.1}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"found key 'lr' a second time"):
        Recipe.load(path)


@pytest.mark.parametrize(("given", "named"), [(None, "NoneType"), (types.MappingProxyType({}), "mappingproxy")])
def test_what_is_no_recipe_is_refused_naming_its_type(given: object, named: str) -> None:
    with pytest.raises(
        TypeError, match=rf"^expected a recipe \(a Recipe, a dict, a file or a shipped recipe name\), got {named}$"
    ):
        as_recipe(given)


@pytest.mark.parametrize("value", ["", " ", '""'])
@pytest.mark.parametrize(
    "key", ["train.output_dir", "train.cache_dir", "data.image_root", "data.test", "data.source.train"]
)
def test_an_empty_override_of_a_key_naming_a_folder_or_file_is_refused_naming_the_key_and_null(
    key: str, value: str
) -> None:
    with pytest.raises(RecipeError, match=rf"^--set: {key}: an empty value .* or write null for none or the default"):
        Recipe.load("hate_text_frozen", [f"{key}={value}"])


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ('train={output_dir: ""}', "train.output_dir"),
        ("train={max_epochs: 2, cache_dir: ''}", "train.cache_dir"),
        ('data={type: tweeteval, root: "", task: hate}', "data.root"),
        ('data.source={type: jsonl, train: t.jsonl, validation: ""}', "data.source.validation"),
        ('data={type: concat, sources: [{type: jsonl, train: "", validation: v.jsonl}]}', "data.sources[0].train"),
    ],
)
def test_an_empty_value_at_a_key_naming_a_folder_or_file_in_a_mapping_given_is_refused_naming_that_key(
    override: str, named: str
) -> None:
    with pytest.raises(
        RecipeError, match=rf"^--set: {re.escape(named)}: an empty value .* or write null for none or the default"
    ):
        Recipe.load("hate_text_frozen", [override])
    columns = 'data.columns={path: "", text: ""}'  # the columns a field is read from are no folder or file
    assert parse_override(columns) == (["data", "columns"], {"path": "", "text": ""})


@pytest.mark.parametrize("kind", ["jsonl", "csv", "hf"])
@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_an_empty_split_written_in_a_recipe_file_or_its_base_is_refused_naming_the_file_and_the_key(
    tmp_path: Path, kind: str, split: str
) -> None:
    recipe = tiny_recipe({"train": "t", "validation": "v"}, Path("run"))
    recipe["data"] = {"type": kind, "train": "t", split: ""}
    written = tmp_path / "recipe.yaml"
    written.write_text(yaml.safe_dump(recipe))
    empty = rf"data\.{split}: an empty value .* or write null for none or the default$"
    with pytest.raises(RecipeError, match=rf"^{written}: {empty}"):  # not the working folder, read as Path("")
        Recipe.load(written)
    child = tmp_path / "child.yaml"
    child.write_text("base: recipe.yaml\ntrain: {max_epochs: 1}\n")
    with pytest.raises(RecipeError, match=rf"^{written} \(the base of {child}\): {empty}"):
        Recipe.load(child)
    assert Recipe.load(child, [f"data.{split}=s"]).data[split] == "s"  # an override naming one takes its place
    recipe["data"] = {"type": "concat", "sources": [recipe["data"], {"type": kind, "train": "u"}]}
    with pytest.raises(RecipeError, match=rf"^<dict>: data\.sources\[0\]\.{split}: an empty value "):
        as_recipe(recipe)
    with registry.rebuilding_saved("saved"), pytest.warns(registry.SavedModelWarning, match="saved: data.sources"):
        assert as_recipe(recipe).data["sources"][0][split] == ""  # a saved model keeps what it was trained with


def test_an_empty_image_root_in_a_recipe_file_is_refused_offering_the_working_folder_it_was_read_as(
    tmp_path: Path,
) -> None:
    recipe = tiny_recipe({"train": "t", "validation": "v"}, Path("run"))
    recipe["data"]["image_root"] = ""  # Path(""), the working folder; null reads images beside each data file
    written = tmp_path / "recipe.yaml"
    written.write_text(yaml.safe_dump(recipe))
    empty = r"data\.image_root: an empty value .*; name one \(\. for the working folder\)"
    with pytest.raises(RecipeError, match=empty):
        Recipe.load(written)
    assert Recipe.load(written, ["data.image_root=."]).data["image_root"] == "."


def test_a_saved_models_recipe_holding_several_empty_paths_is_warned_of_each() -> None:
    recipe = tiny_recipe({"train": "t", "validation": ""}, Path("run"))
    recipe["train"]["cache_dir"] = ""
    with pytest.raises(RecipeError, match=r"^<dict>: data\.validation: an empty value "):  # the first, as others are
        as_recipe(recipe)
    empty = r"^saved: data\.validation, train\.cache_dir: empty values, taken as the working folder"
    with registry.rebuilding_saved("saved"), pytest.warns(registry.SavedModelWarning, match=empty) as warned:
        assert as_recipe(recipe).train.cache_dir == ""
    assert len(warned) == 1


def test_a_null_or_a_folder_for_a_key_naming_one_and_an_empty_value_for_another_key_are_taken() -> None:
    recipe = Recipe.load("hate_text_frozen", ["train.output_dir=null", "train.cache_dir=runs/cache", "train.lr="])
    assert (recipe.train.output_dir, recipe.train.cache_dir) == ("runs/faim", "runs/cache")
    assert parse_override("data.columns.meta.path=") == (["data", "columns", "meta", "path"], None)  # a column


def test_a_key_refused_as_the_model_is_built_or_trained_names_the_file_or_override_that_set_it(
    tmp_path: Path, demo_data: dict[str, Path]
) -> None:
    base = tiny_recipe(demo_data, tmp_path / "run")
    base["model"]["fusion"]["num_heads"] = 3  # valid alone, refused by the fusion built with dim 32
    base["eval"]["split"] = "test"  # the demo data gives no test split, which training finds
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = tmp_path / "child.yaml"
    child.write_text("base: base.yaml\ntrain: {max_epochs: 1}\n")
    in_base = re.escape(f"{tmp_path / 'base.yaml'} (the base of {child}): ")
    with pytest.raises(RecipeError, match=rf"^{in_base}model.fusion: dim \(32\) must be a positive multiple"):
        faim.build(child)
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(child))}: --set model.fusion.dim=34: model.fusion: dim"):
        faim.build(child, overrides=["model.fusion.dim=34"])
    with pytest.raises(RecipeError, match=rf"^{in_base}eval.split: the data has no split 'test'"):
        faim.train(child, overrides=["model.fusion.num_heads=2"])
    child.write_text("base: base.yaml\nmodel:\n  fusion: {num_heads: 4}\neval: {split: test}\n")
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(child))}: eval.split: the data has no split 'test'"):
        faim.train(child)


def test_an_error_met_building_names_what_set_its_key_by_the_base_as_read_whatever_became_of_its_file(
    tmp_path: Path,
) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path / "run")
    child = tmp_path / "child.yaml"
    child.write_text("base: base.yaml\n")
    in_base = re.escape(f"{tmp_path / 'base.yaml'} (the base of {child}): ")
    in_child = re.escape(f"{child}: ")
    setting = base | {"eval": {"split": "test"}}
    unset = {section: value for section, value in base.items() if section != "eval"}
    for as_read, afterwards, named in (
        (setting, None, in_base),  # the base deleted
        (setting, "model: [\n", in_base),  # the base no longer YAML
        (unset, yaml.safe_dump(setting), in_child),  # the base setting the key only later
    ):
        (tmp_path / "base.yaml").write_text(yaml.safe_dump(as_read))
        recipe = Recipe.load(child)
        if afterwards is None:
            (tmp_path / "base.yaml").unlink()
        else:
            (tmp_path / "base.yaml").write_text(afterwards)
        with pytest.raises(RecipeError, match=rf"^{named}eval.split: the data has no split 'test'$"):
            with recipe.building():
                raise RecipeError(recipe.source, "eval.split", "the data has no split 'test'")


@pytest.mark.parametrize("written", ["", "# a comment\n", "---\n"])
def test_an_empty_recipe_or_base_is_refused_as_holding_nothing(tmp_path: Path, written: str) -> None:
    (tmp_path / "empty.yaml").write_text(written)
    nothing = "holds nothing (no key, or comments alone); a recipe must be a YAML mapping"
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(tmp_path / 'empty.yaml'))}: {re.escape(nothing)}"):
        Recipe.load(tmp_path / "empty.yaml")
    (tmp_path / "child.yaml").write_text("base: empty.yaml\n")
    base = re.escape(f"{tmp_path / 'empty.yaml'} (the base of {tmp_path / 'child.yaml'}): ")
    with pytest.raises(RecipeError, match=rf"^{base}{re.escape(nothing)}"):
        Recipe.load(tmp_path / "child.yaml")


@pytest.mark.parametrize(("written", "null"), [("null\n", "null"), ("~\n", "~"), ("--- Null\n", "Null")])
def test_a_recipe_holding_a_null_alone_is_refused_saying_so(tmp_path: Path, written: str, null: str) -> None:
    (tmp_path / "null.yaml").write_text(written)  # as yaml.safe_dump(None) writes, not a file of comments alone
    said = f"holds {null} alone (YAML's null), no key; a recipe must be a YAML mapping"
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(tmp_path / 'null.yaml'))}: {re.escape(said)}"):
        Recipe.load(tmp_path / "null.yaml")


def test_a_base_that_cannot_be_read_is_named_as_the_base_of_the_recipe_giving_it(tmp_path: Path) -> None:
    child, base = tmp_path / "child.yaml", tmp_path / "base.yaml"
    child.write_text("base: base.yaml\n")
    named = re.escape(f"{base} (the base of {child}): ")
    for written, problem in (("model: [\n", "invalid YAML at line 2"), ("- a\n", "a recipe must be a YAML mapping")):
        base.write_text(written)
        with pytest.raises(RecipeError, match=rf"^{named}{problem}"):
            Recipe.load(child)


def test_an_encoder_dropped_that_another_shares_is_named_where_it_was_dropped(tmp_path: Path) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, tmp_path / "run")  # comments share text's
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = tmp_path / "child.yaml"
    child.write_text("base: base.yaml\nmodel:\n  encoders:\n    text: null\n")
    shared = r"model.encoders.text: not given, and model.encoders.comments shares it \(comments: text\)"
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(child))}: {shared}"):
        Recipe.load(child)
    child.write_text("base: base.yaml\n")
    with pytest.raises(RecipeError, match=rf"^{re.escape(str(child))}: --set model.encoders.text=null: {shared}"):
        Recipe.load(child, ["model.encoders.text=null"])


def test_numbers_and_arrays_of_numpy_in_a_recipe_given_in_python_are_read_as_the_python_values_they_hold() -> None:
    # a pos_weight computed with numpy passed validation as a float, then failed to be written as YAML with
    # 'cannot represent an object'; a batch size of np.int64 was refused as no int
    np = pytest.importorskip("numpy")
    recipe = tiny_recipe({"train": Path("t.jsonl"), "validation": Path("v.jsonl")}, Path("run"))
    recipe["model"]["heads"]["harmful"]["pos_weight"] = np.float64(2.5) / np.float64(1.0)
    recipe["model"]["heads"]["topic"] = {"type": "multiclass", "labels": ["a", "b"], "class_weights": np.ones(2)}
    recipe["train"]["batch_size"] = np.int64(16)
    for read in (Recipe.from_dict(recipe), as_recipe(recipe)):
        written = yaml.safe_load(yaml.safe_dump(read.to_dict()))
        assert written["model"]["heads"]["harmful"]["pos_weight"] == 2.5
        assert written["model"]["heads"]["topic"]["class_weights"] == [1.0, 1.0]
        assert type(read.train.batch_size) is int and read.train.batch_size == 16
    labels = collections.namedtuple("Labels", "no yes")  # a named tuple, and numpy's class itself, are no numbers
    recipe["model"]["heads"]["harmful"]["labels"] = labels("benign", "harmful")
    with pytest.raises(RecipeError, match=r"labels: expected a list of at least two distinct label names$"):
        as_recipe(recipe)  # refused as a recipe, as a tuple of labels is
    assert python_values({"kind": np.float32}) == {"kind": np.float32}


def test_a_child_recipe_making_a_setting_disagree_with_its_bases_is_refused_on_reading_naming_its_own_key(
    tmp_path: Path,
) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, Path("run"), monitor="val/loss", mode="min")
    base["eval"] |= {"logit_shift": True, "pool_by_image": 0.9}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = tmp_path / "child.yaml"
    of_base = f"of its base {tmp_path / 'base.yaml'}: "
    for written, named in (
        ("train: {monitor: val/harmful/auroc}", f"train.monitor: with train.mode {of_base}'min' keeps the epoch"),
        (
            "model:\n  heads:\n    harmful: null\n    abuse: {type: binary, labels: [ok, abuse]}",
            f"model.heads: with data.columns.labels.harmful {of_base}the model has no task 'harmful'; its tasks: abuse",
        ),
        ("eval: {temperature: false}", f"eval.temperature: with eval.logit_shift {of_base}a logit shift is fitted"),
        ("model:\n  encoders:\n    image: null", f"model.encoders: with eval.pool_by_image {of_base}pooling by"),
    ):
        child.write_text(f"base: base.yaml\n{written}\n")
        with pytest.raises(RecipeError, match=f"^{re.escape(f'{child}: {named}')}"):
            Recipe.load(child)
    child.write_text("base: base.yaml\nmodel:\n  heads:\n    harmful: {hidden_dim: 8}\n")  # the same tasks
    assert Recipe.load(child).model["heads"]["harmful"]["hidden_dim"] == 8
    child.write_text("base: base.yaml\ntrain: {monitor: val/harmful/auroc}\n")
    with registry.rebuilding_saved("saved"):  # a model saved before this was checked on reading loads
        assert Recipe.load(child).train.mode == "min"


def test_a_child_recipe_changing_a_setting_its_bases_error_does_not_turn_on_leaves_the_error_to_its_base(
    tmp_path: Path,
) -> None:
    base = tiny_recipe({"train": "t.jsonl", "validation": "v.jsonl"}, Path("run"), monitor="val/loss", mode="min")
    base["data"]["columns"]["labels"] = {"harmfull": "label"}  # the base's own error, whatever heads the child gives
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(base))
    child = tmp_path / "child.yaml"
    in_base = re.escape(f"{tmp_path / 'base.yaml'} (the base of {child}): data.columns.labels.harmfull: ")
    for written in ("model:\n  heads:\n    harmful: {hidden_dim: 8}", "train: {max_epochs: 2}"):
        child.write_text(f"base: base.yaml\n{written}\n")
        with pytest.raises(RecipeError, match=rf"^{in_base}the model has no task 'harmfull' \(did you mean"):
            Recipe.load(child)


def test_an_override_making_a_setting_disagree_with_the_bases_is_named_with_the_childs_file(tmp_path: Path) -> None:
    child = tmp_path / "child.yaml"
    child.write_text("base: hate_text_frozen\ntrain: {max_epochs: 3}\n")
    of_base = f"train.monitor: with train.mode of its base {shipped_file('hate_text_frozen')}: 'max' keeps the epoch"
    with pytest.raises(RecipeError, match=f"^{re.escape(f'{child}: --set train.monitor=val/loss: {of_base}')}"):
        Recipe.load(child, ["train.monitor=val/loss"])


def test_an_override_keeping_the_tasks_leaves_the_disagreement_to_what_made_it(tmp_path: Path) -> None:
    child = tmp_path / "child.yaml"
    spam = "{type: binary, labels: [ham, spam]}"
    of_base = f"with data.task of its base {shipped_file('hate_text_frozen')}: the model has no task 'hate'"
    heads = f"model:\n  heads:\n    hate: null\n    spam: {spam}\n"
    child.write_text(f"base: hate_text_frozen\n{heads}train: {{monitor: val/spam/auroc}}\n")
    for overrides in (["model.heads.spam.hidden_dim=64"], ["model.heads.spam.dropout=0.1", "train.lr=0.001"]):
        with pytest.raises(RecipeError, match=f"^{re.escape(f'{child}: model.heads: {of_base}')}"):
            Recipe.load(child, overrides)
    child.write_text("base: hate_text_frozen\ntrain: {monitor: val/loss, mode: min}\n")
    overrides = ["model.heads.hate=null", f"model.heads.spam={spam}", "model.heads.spam.hidden_dim=64"]
    by_override = f"{child}: --set model.heads.hate=null: model.heads: {of_base}"
    with pytest.raises(RecipeError, match=f"^{re.escape(by_override)}"):
        Recipe.load(child, overrides)
    unlabelled = heads.replace(spam, "{type: binary}")  # its labels given by an override
    child.write_text(f"base: hate_text_frozen\n{unlabelled}train: {{monitor: val/spam/auroc}}\n")
    with pytest.raises(RecipeError, match=f"^{re.escape(f'{child}: model.heads: {of_base}')}"):
        Recipe.load(child, ["model.heads.spam.labels=[ham, spam]"])  # without it refused first at its labels


def test_a_base_with_a_base_of_its_own_is_told_to_be_shown_by_its_path_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("recipes/bases").mkdir(parents=True)
    Path("recipes/bases/chained.yaml").write_text("base: hate_text_frozen\n")
    Path("recipes/mine.yaml").write_text("base: bases/chained.yaml\n")
    with pytest.raises(RecipeError) as info:
        Recipe.load("recipes/mine.yaml")
    assert str(info.value).startswith("recipes/mine.yaml: base: bases/chained.yaml has a base: of its own")
    assert "(faim recipe show recipes/bases/chained.yaml > FILE)" in str(info.value)  # not bases/, from here
    Path("recipes").rename("my recipes")
    with pytest.raises(RecipeError) as info:
        Recipe.load("my recipes/mine.yaml")
    assert f"(faim recipe show {shell_path('my recipes/bases/chained.yaml')} > FILE)" in str(info.value)


@pytest.mark.parametrize("written", ['""', "' '"])
def test_an_empty_base_is_refused_as_naming_no_recipe_not_as_the_folder_it_was_read_as(
    tmp_path: Path, written: str
) -> None:
    (tmp_path / "mine.yaml").write_text(f"base: {written}\ntrain: {{max_epochs: 1}}\n")
    with pytest.raises(RecipeError) as info:
        Recipe.load(tmp_path / "mine.yaml")
    assert str(info.value) == (
        f"{tmp_path / 'mine.yaml'}: base: an empty value names no recipe; name one (a file, or a shipped recipe's"
        " name), or remove base:"
    )
    with pytest.raises(RecipeError, match=r"^<dict>: base: an empty value names no recipe"):
        as_recipe({"base": ""})

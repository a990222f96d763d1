"""Recipe errors name the file, the YAML path, the problem and the valid choices."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from conftest import tiny_recipe

import faim
from faim import registry
from faim.assembly import build_source
from faim.recipe import Recipe, RecipeError, as_recipe
from faim.recipe.validate import (
    PRECISIONS,
    annotation_text,
    check_monitor_mode,
    takes_mapping,
)
from faim.tasks import BinaryHead


@pytest.fixture
def recipe(tmp_path: Path) -> dict:
    data = {"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}
    return tiny_recipe(data, tmp_path / "run")


def error_for(recipe: dict, write_recipe) -> str:
    path = write_recipe(recipe)
    with pytest.raises(RecipeError) as info:
        Recipe.load(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


def test_valid_recipe_loads_with_defaults(recipe: dict, write_recipe) -> None:
    loaded = Recipe.load(write_recipe(recipe))
    assert loaded.train.max_epochs == 3
    assert loaded.train.seed == 0
    assert loaded.eval.split == "validation"


def test_unknown_fusion_key_suggests_close_match(recipe: dict, write_recipe) -> None:
    recipe["model"]["fusion"]["dimm"] = 8
    message = error_for(recipe, write_recipe)
    assert "model.fusion.dimm" in message
    assert "did you mean 'dim'" in message
    assert "num_heads" in message


def test_unknown_fusion_type_lists_valid_types(recipe: dict, write_recipe) -> None:
    recipe["model"]["fusion"]["type"] = "atention"
    message = error_for(recipe, write_recipe)
    assert "model.fusion.type" in message
    assert "did you mean 'attention'" in message
    assert "concat" in message and "gated" in message


def test_unknown_train_key(recipe: dict, write_recipe) -> None:
    recipe["train"]["max_epoch"] = 3
    message = error_for(recipe, write_recipe)
    assert "train.max_epoch" in message and "did you mean 'max_epochs'" in message


def test_unknown_top_level_section(recipe: dict, write_recipe) -> None:
    recipe["trian"] = {}
    assert "did you mean 'train'" in error_for(recipe, write_recipe)


@pytest.mark.parametrize(("key", "suggested"), [("extends", ""), ("bases", " (did you mean 'base'?)")])
def test_an_unknown_top_level_key_names_base_among_the_valid_ones(
    recipe: dict, write_recipe, key: str, suggested: str
) -> None:
    recipe[key] = "hate_text_frozen"
    assert f"{key}: unknown key{suggested}; valid: base, data, model, train, eval" in error_for(recipe, write_recipe)


def test_a_base_given_where_none_is_merged_is_refused_saying_where_one_is(recipe: dict) -> None:
    with pytest.raises(RecipeError, match=r"^<dict>: base: a base is merged where a recipe is read"):
        Recipe.from_dict(recipe | {"base": "hate_text_frozen"})
    with pytest.raises(RecipeError, match=r"--set base=hate_text_frozen: base: a base is merged where a recipe is"):
        as_recipe(recipe, ["base=hate_text_frozen"])


def test_derived_argument_is_rejected(recipe: dict, write_recipe) -> None:
    recipe["model"]["heads"]["harmful"]["input_dim"] = 8
    message = error_for(recipe, write_recipe)
    assert "model.heads.harmful.input_dim" in message and "derived" in message


def test_unknown_encoder_type(recipe: dict, write_recipe) -> None:
    recipe["model"]["encoders"]["text"]["type"] = "hf_txt"
    message = error_for(recipe, write_recipe)
    assert "model.encoders.text.type" in message and "did you mean 'hf_text'" in message


def test_binary_head_needs_two_labels(recipe: dict, write_recipe) -> None:
    recipe["model"]["heads"]["harmful"]["labels"] = ["a", "b", "c"]
    assert "model.heads.harmful.labels" in error_for(recipe, write_recipe)


def test_unknown_element_kind(recipe: dict, write_recipe) -> None:
    recipe["model"]["encoders"]["images"] = recipe["model"]["encoders"].pop("image")
    message = error_for(recipe, write_recipe)
    assert "model.encoders.images" in message and "did you mean 'image'" in message


def test_missing_recipe_file_names_shipped_recipes() -> None:
    with pytest.raises(RecipeError, match="no such file.*demo_multimodal"):
        Recipe.load("does/not/exist.yaml")


def test_invalid_yaml_names_file(write_recipe, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("data: [unclosed", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"bad.yaml: invalid YAML"):
        Recipe.load(path)


def test_wrong_value_type_in_section(recipe: dict, write_recipe) -> None:
    recipe["train"]["max_epochs"] = "three"
    message = error_for(recipe, write_recipe)
    assert "train.max_epochs" in message and "expected int" in message


SECTIONS = ["data", "model", "train", "eval", "model.encoders", "model.fusion", "model.heads", "model.heads.harmful"]


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (where, value)
        for where in SECTIONS
        for value in (None, 3, ["a", "b"], "word")
        if value is not None or "." in where
    ]
    + [("model.encoders.text", None), ("model.encoders.text", 3)],  # a list stacks encoders, a word shares one
)
def test_a_section_that_is_empty_or_not_a_mapping_is_refused_naming_its_path(
    recipe: dict, write_recipe, where: str, value: object
) -> None:
    *parents, last = where.split(".")
    section = recipe
    for part in parents:
        section = section[part]
    section[last] = value  # a whole section left null is its defaults (tests/recipe/test_loader.py)
    assert f": {where}: expected a mapping" in error_for(recipe, write_recipe)


@pytest.mark.parametrize(
    ("where", "key", "value", "expected"),
    [
        ("encoders.text", "dim", "big", "expected int, got 'big'"),
        ("fusion", "num_heads", "two", "expected int, got 'two'"),
        ("fusion", "dim", 32.5, "expected int, got 32.5"),
        ("heads.harmful", "pos_weight", "high", "expected float | None, got 'high'"),
        ("encoders.image", "freeze", "yes", "expected bool, got 'yes'"),
    ],
)
def test_a_component_argument_of_the_wrong_type_is_refused_naming_its_path(
    recipe: dict, write_recipe, where: str, key: str, value: object, expected: str
) -> None:
    section = recipe["model"]
    for part in where.split("."):
        section = section[part]
    section[key] = value
    message = error_for(recipe, write_recipe)
    assert f"model.{where}.{key}" in message and expected in message


def test_a_null_for_an_argument_that_takes_none_says_to_write_its_default(recipe: dict, write_recipe) -> None:
    recipe["model"]["fusion"]["num_heads"] = None  # the attention fusion's num_heads defaults to 4
    message = error_for(recipe, write_recipe)
    assert message.endswith(
        "model.fusion.num_heads: expected int, got None (null is no value here; for the default, write it: 4)"
    )
    recipe["model"]["fusion"]["num_heads"] = "two"  # any other value gets no remedy
    assert error_for(recipe, write_recipe).endswith("model.fusion.num_heads: expected int, got 'two'")


def test_component_arguments_of_the_kinds_yaml_writes_for_their_annotations_load(recipe: dict, write_recipe) -> None:
    recipe["model"]["heads"]["harmful"]["pos_weight"] = 2  # an int for a float
    recipe["model"]["encoders"]["text"] = {"type": "ngram_text", "dim": 8, "char_ngrams": [2, 4]}  # a list: a Sequence
    assert Recipe.load(write_recipe(recipe)).model["heads"]["harmful"]["pos_weight"] == 2


@pytest.fixture
def tuple_head() -> Iterator[str]:
    """The name of a head registered as plug-ins register theirs, taking tuples of one type per item and of any
    length; unregistered after the test."""

    @faim.register_head("test_tuple_head")
    class TupleHead(BinaryHead):
        def __init__(self, input_dim: int, size: tuple[int, int] = (1, 1), stems: tuple[Path, ...] = ()) -> None:
            super().__init__(input_dim)
            self.size, self.stems = size, stems

    yield "test_tuple_head"
    registry.HEADS.pop("test_tuple_head")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("size", "big", "expected tuple[int, int], got 'big'"),
        ("size", [1, "x"], "expected tuple[int, int], got [1, 'x']"),
        ("size", [1, 2, 3], "expected tuple[int, int], got [1, 2, 3]"),
        ("stems", [1], "expected tuple[Path, ...], got [1]"),
    ],
)
def test_a_tuple_argument_of_the_wrong_type_or_length_is_refused_naming_its_path(
    recipe: dict, write_recipe, tuple_head: str, key: str, value: object, expected: str
) -> None:
    recipe["model"]["heads"]["harmful"] = {"type": tuple_head, "labels": ["no", "yes"], key: value}
    assert f"model.heads.harmful.{key}: {expected}" in error_for(recipe, write_recipe)


@pytest.mark.parametrize(
    ("annotation", "written"),
    [
        (typing.Optional[Path], "Path | None"),  # noqa: UP045  (as plug-ins annotate)
        (tuple[Path, ...], "tuple[Path, ...]"),
        (tuple[()], "tuple[()]"),
        (typing.Tuple, "tuple"),  # noqa: UP006  (as plug-ins annotate)
        (tuple, "tuple"),
        (Sequence[int], "Sequence[int]"),
        (typing.Sequence[dict[str, Path]], "Sequence[dict[str, Path]]"),
        (typing.Union[int, str, None], "int | str | None"),  # noqa: UP007  (as plug-ins annotate)
        (typing.Literal["a", 1], "Literal['a', 1]"),
    ],
)
def test_an_annotation_is_named_as_a_signature_writes_it_without_its_modules(annotation: object, written: str) -> None:
    assert annotation_text(annotation) == written


def test_tuple_and_sequence_arguments_load_as_yaml_lists_and_as_the_tuples_a_recipe_in_code_gives(
    recipe: dict, write_recipe, tuple_head: str
) -> None:
    recipe["model"]["heads"]["harmful"] = {"type": tuple_head, "labels": ["no", "yes"], "size": [2, 3]}
    recipe["model"]["encoders"]["text"] = {"type": "ngram_text", "dim": 8, "char_ngrams": [2, 4]}
    assert Recipe.load(write_recipe(recipe)).model["heads"]["harmful"]["size"] == [2, 3]
    recipe["model"]["heads"]["harmful"] |= {"size": (2, 3), "stems": ("a", Path("b"))}
    recipe["model"]["encoders"]["text"]["char_ngrams"] = (2, 4)
    assert Recipe.from_dict(recipe).model["encoders"]["text"]["char_ngrams"] == (2, 4)


def test_a_list_argument_takes_the_tuple_a_recipe_in_code_gives_it_built_as_a_list(recipe: dict) -> None:
    @faim.register_head("test_list_head")
    class ListHead(BinaryHead):
        def __init__(self, input_dim: int, sizes: list[int] | None = None, names: list = ()) -> None:
            super().__init__(input_dim)
            self.sizes, self.names = sizes, names

    recipe["model"]["heads"]["harmful"] = {"type": "test_list_head", "labels": ["no", "yes"], "sizes": (1, 2)}
    recipe["model"]["heads"]["harmful"]["names"] = ("a", 3)
    try:
        head = faim.build(Recipe.from_dict(recipe)).model.heads["harmful"]
        assert (head.sizes, head.names) == ([1, 2], ["a", 3])
        recipe["model"]["heads"]["harmful"]["sizes"] = (1, "x")
        with pytest.raises(RecipeError, match=r"model.heads.harmful.sizes: expected .*, got \(1, 'x'\)"):
            Recipe.from_dict(recipe)
    finally:
        registry.HEADS.pop("test_list_head")


MAPPINGS = [dict[str, int], Mapping[str, int], typing.Mapping[str, int], typing.Dict[str, int]]  # noqa: UP006


@pytest.mark.parametrize("annotation", MAPPINGS)
def test_a_mapping_argument_is_refused_for_a_key_or_value_of_the_wrong_type_naming_its_path(
    recipe: dict, write_recipe, annotation: object
) -> None:
    class MappingHead(BinaryHead):
        def __init__(self, input_dim: int, given: object = None) -> None:
            super().__init__(input_dim)

    MappingHead.__init__.__annotations__["given"] = annotation  # as a plug-in's module annotates it, resolved
    faim.register_head("test_mapping_head")(MappingHead)
    head = recipe["model"]["heads"]["harmful"] = {"type": "test_mapping_head", "labels": ["no", "yes"]}
    try:
        head["given"] = {"a": 1}
        assert Recipe.load(write_recipe(recipe)).model["heads"]["harmful"]["given"] == {"a": 1}
        for value in ({"a": "x"}, {1: 2}):
            head["given"] = value
            expected = f"model.heads.harmful.given: expected {annotation_text(annotation)}, got {value!r}"
            assert expected in error_for(recipe, write_recipe)
    finally:
        registry.HEADS.pop("test_mapping_head")


BARE = [tuple, list, typing.Tuple, typing.List, typing.Sequence, typing.Dict]  # noqa: UP006  (as plug-ins annotate)


@pytest.mark.parametrize("annotation", BARE)
def test_an_argument_annotated_without_its_item_types_takes_items_of_any_type(
    recipe: dict, write_recipe, annotation: object
) -> None:
    class BareHead(BinaryHead):
        def __init__(self, input_dim: int, given: object = None) -> None:
            super().__init__(input_dim)

    BareHead.__init__.__annotations__["given"] = annotation  # as a plug-in's module annotates it, resolved
    faim.register_head("test_bare_head")(BareHead)
    value = {"a": 1, "b": "x"} if typing.get_origin(annotation) is dict else [2, "x", [3]]
    recipe["model"]["heads"]["harmful"] = {"type": "test_bare_head", "labels": ["no", "yes"], "given": value}
    try:
        assert Recipe.load(write_recipe(recipe)).model["heads"]["harmful"]["given"] == value
        recipe["model"]["heads"]["harmful"]["given"] = "x"
        assert "model.heads.harmful.given: expected" in error_for(recipe, write_recipe)
    finally:
        registry.HEADS.pop("test_bare_head")


def test_fused_kinds_must_be_encoder_kinds(recipe: dict, write_recipe) -> None:
    recipe["model"]["fusion"]["kinds"] = ["text", "video"]
    message = error_for(recipe, write_recipe)
    assert "model.fusion.kinds" in message and "['comments', 'image', 'text']" in message


def test_pooling_by_picture_needs_an_image_encoder(recipe: dict, write_recipe) -> None:
    recipe["eval"]["pool_by_image"] = 0.95
    recipe["model"]["encoders"].pop("image")
    message = error_for(recipe, write_recipe)
    assert "eval.pool_by_image" in message and "model.encoders.image" in message


def test_pooling_cosine_must_be_in_range(recipe: dict, write_recipe) -> None:
    recipe["eval"]["pool_by_image"] = 1.5
    assert "expected a cosine in (0, 1]" in error_for(recipe, write_recipe)


def test_logit_shift_level_must_be_a_significance_level(recipe: dict, write_recipe) -> None:
    recipe["eval"]["logit_shift_level"] = 5
    assert "eval.logit_shift_level: expected a significance level in (0, 1), got 5" in error_for(recipe, write_recipe)


def test_weighing_the_crowds_corrections_needs_pooling_by_picture(recipe: dict, write_recipe) -> None:
    recipe["eval"]["crowd_corrections"] = "event"
    message = error_for(recipe, write_recipe)
    assert "eval.crowd_corrections" in message and "set eval.pool_by_image too" in message


@pytest.mark.parametrize(
    ("section", "key", "value", "expected"),
    [
        ("train", "max_epochs", 0, "train.max_epochs: expected at least 1, got 0"),
        ("train", "lr", -1, "train.lr: expected above 0, got -1"),
        ("train", "mode", "maximum", "train.mode: expected min or max, got 'maximum'"),
        ("train", "devices", 0, "train.devices: expected at least 1, got 0"),
        ("train", "warmup_ratio", 1.0, "train.warmup_ratio: expected in [0, 1), got 1.0"),
        ("train", "seed", -1, "train.seed: expected from 0 to 4294967295 (a seed NumPy takes), got -1"),
        ("train", "seed", 2**32, "train.seed: expected from 0 to 4294967295 (a seed NumPy takes), got 4294967296"),
        (
            "train",
            "precision",
            "banana",
            "train.precision: expected 64, 32 or 16 (a number or a string) or one of transformer-engine, ",
        ),
        (
            "train",
            "precision",
            8,
            "train.precision: expected 64, 32 or 16 (a number or a string) or one of transformer-engine, ",
        ),
        (
            "train",
            "accelerator",
            "gpuu",
            "train.accelerator: expected one of auto, gpu, cpu, cuda, mps, tpu, got 'gpuu'",
        ),
        ("train", "strategy", "banana", "train.strategy: expected one of auto, ddp, ddp_spawn, ddp_fork, ddp_notebook"),
        ("eval", "threshold_objective", "f2", "eval.threshold_objective: expected one of f1, macro_f1, precision@"),
        ("eval", "threshold_target", 5, "eval.threshold_target: expected in (0, 1], got 5"),
        ("eval", "calibration_bins", 0, "eval.calibration_bins: expected at least 1, got 0"),
        ("eval", "fixed_recall", [0.9, 2], "eval.fixed_recall: expected shares in (0, 1], got [0.9, 2]"),
    ],
)
def test_a_value_out_of_its_range_or_choices_is_refused_before_anything_runs(
    section: str, key: str, value: object, expected: str, recipe: dict, write_recipe
) -> None:
    recipe.setdefault(section, {})[key] = value
    assert expected in error_for(recipe, write_recipe)


@pytest.mark.parametrize(
    ("precision", "dtype", "mixed"), [("bf16-true", "bf16", "bf16-mixed"), ("16-true", "float16", "16-mixed")]
)
def test_a_precision_putting_the_weights_in_half_precision_is_refused_with_the_recipe_naming_the_one_to_train_with(
    precision: str, dtype: str, mixed: str, recipe: dict, write_recipe
) -> None:
    """Lightning takes it, and the first validation step failed with ``mat1 and mat2 must have the same dtype``."""
    recipe["train"]["precision"] = precision
    said = (
        f"train.precision: {precision!r} puts the model's weights in {dtype}, where faim gives its encoders the posts"
    )
    message = error_for(recipe, write_recipe)
    assert said in message and message.endswith(f"train with {mixed!r} ({dtype} autocast, the weights kept in float32)")
    with pytest.raises(RecipeError, match=re.escape(f"--set train.precision={precision}: train.precision: ")):
        as_recipe(Recipe.load("hate_text_finetune").to_dict(), [f"train.precision={precision}"])


def test_a_precision_is_one_lightning_takes_set_or_written_its_short_forms_too(recipe: dict, write_recipe) -> None:
    connector = pytest.importorskip("lightning_fabric.connector")
    taken = [value for literal in typing.get_args(connector._PRECISION_INPUT) for value in typing.get_args(literal)]
    assert list(PRECISIONS) == taken
    for precision in ("bf16-mixed", 16, "64", "bf16"):
        recipe["train"]["precision"] = precision
        assert Recipe.load(write_recipe(recipe)).train.precision == precision
    said = "--set train.precision=banana: train.precision: expected 64, 32 or 16 (a number or a string) or one of "
    with pytest.raises(RecipeError, match=f"^<dict>: {re.escape(said)}.*bf16-mixed.*, got 'banana'$"):
        as_recipe(Recipe.load("hate_text_finetune").to_dict(), ["train.precision=banana"])


def test_an_accelerator_and_a_strategy_are_ones_lightning_names_set_or_written(recipe: dict, write_recipe) -> None:
    lightning = pytest.importorskip("pytorch_lightning")
    registries = lightning.accelerators.AcceleratorRegistry, lightning.strategies.StrategyRegistry
    registries[0].register("npu", lightning.accelerators.CPUAccelerator)  # as a plugin registers its own
    registries[1].register("npu_parallel", lightning.strategies.DDPStrategy)
    try:
        recipe["train"] |= {"accelerator": "npu", "strategy": "NPU_parallel"}
        assert Recipe.load(write_recipe(recipe)).train.strategy == "NPU_parallel"
    finally:
        registries[0].remove("npu")
        registries[1].remove("npu_parallel")
    for accelerator, strategy in (("gpu", "DDP"), ("auto", "fsdp"), ("cpu", "ddp_find_unused_parameters_false")):
        recipe["train"] |= {"accelerator": accelerator, "strategy": strategy}
        assert Recipe.load(write_recipe(recipe)).train.strategy == strategy  # Lightning reads it in any case
    said = "--set train.strategy=banana: train.strategy: expected one of auto, ddp, "
    with pytest.raises(RecipeError, match=f"^<dict>: {re.escape(said)}.*single_tpu, got 'banana'$"):
        as_recipe(Recipe.load("hate_text_finetune").to_dict(), ["train.strategy=banana"])


def test_the_monitored_figure_must_be_one_training_logs(recipe: dict, write_recipe) -> None:
    recipe["train"]["monitor"] = "val/harmfull/auroc"
    message = error_for(recipe, write_recipe)
    assert "train.monitor: 'val/harmfull/auroc' is not logged (did you mean 'val/harmful/auroc'?)" in message
    recipe["train"]["monitor"] = "val/harmful/macro_f1"
    Recipe.load(write_recipe(recipe))


def test_labels_are_words_yes_and_no_and_those_written_as_yaml_booleans_too(recipe: dict, write_recipe) -> None:
    path = write_recipe(recipe)
    text = path.read_text().replace("- benign\n", "- no\n").replace("- harmful\n", "- yes\n")
    path.write_text(text)
    assert Recipe.load(path).model["heads"]["harmful"]["labels"] == ["no", "yes"]
    path.write_text(text.replace("- no\n", "- false\n").replace("- yes\n", "- true\n"))
    assert Recipe.load(path).model["heads"]["harmful"]["labels"] == ["false", "true"]


def test_labels_the_same_once_composed_are_refused_naming_the_task_and_both(recipe: dict, write_recipe) -> None:
    recipe["model"]["heads"]["harmful"]["labels"] = ["caf\u00e9", "cafe\u0301"]
    message = error_for(recipe, write_recipe)
    assert "model.heads.harmful.labels" in message
    assert "'caf\\xe9' and 'cafe\\u0301' are the same label once composed (NFC)" in message


@pytest.mark.parametrize("labels", [[1, 0], [1.0, 0.0], ["1.0", "0"], ["yes", "no"], ["True", "False"]])
def test_binary_labels_written_positive_first_are_refused_saying_to_write_the_negative_first(
    labels: list, recipe: dict, write_recipe
) -> None:
    # [yes, no] read a label "yes" as the negative class and the boolean true as the positive class "no"
    recipe["model"]["heads"]["harmful"]["labels"] = labels
    message = error_for(recipe, write_recipe)
    first, second = map(str, labels)
    assert message.endswith(
        f"model.heads.harmful.labels: a binary task's labels are [negative, positive], and {first!r} comes first, "
        f"as the negative: a label {first!r} or true would be read as opposite classes; write [{second}, {first}]"
    )


def test_labels_giving_two_heads_or_a_decision_one_score_column_are_refused_naming_both(
    recipe: dict, write_recipe
) -> None:
    # faim score stopped part way with pyarrow's bare "Could not convert 'decision' with type str" where a multiclass
    # label named decision gave its probabilities the column severity.decision, where each post's decision goes
    recipe["model"]["heads"]["severity"] = {"type": "multiclass", "labels": ["low", "decision"]}
    message = error_for(recipe, write_recipe)
    assert message.endswith(
        "model.heads.severity.labels: 'decision' gives the score column 'severity.decision', where faim score writes "
        "each post's decision of task 'severity'; rename the label"
    )
    recipe["model"]["heads"]["severity"]["labels"] = ["low", "high"]
    recipe["model"]["heads"]["severity.low"] = {"type": "binary", "labels": ["no", "yes"]}
    assert "model.heads: task name 'severity.low' holds '.'" in error_for(recipe, write_recipe)  # no column shared


@pytest.mark.parametrize(
    ("head", "said"),
    [
        (
            "binary",
            "a task named 'id' would take the place of each post's id in the rows score gives, and share faim score's "
            "column 'id' with each row's id, so faim score cannot write its scores",
        ),
        (
            "multiclass",
            "a task named 'id' would take the place of each post's id in the rows score gives (faim score writes its "
            "scores as id.LABEL, beside the ids)",
        ),
    ],
)
def test_a_task_named_id_or_as_a_column_of_each_row_is_refused_naming_what_it_would_take_the_place_of(
    head: str, said: str, recipe: dict, write_recipe
) -> None:
    # built, score gave [{'id': 0.53}] for the post with the id 'post-1', and faim score could not write a binary
    # one's scores, as it could not a binary task's named error, beside the error of each row
    recipe["model"]["heads"]["id"] = {"type": head, "labels": ["no", "yes"]}
    assert error_for(recipe, write_recipe).endswith(f"model.heads.id: {said}; rename the task")
    del recipe["model"]["heads"]["id"]
    recipe["model"]["heads"]["error"] = {"type": "binary", "labels": ["no", "yes"]}
    assert error_for(recipe, write_recipe).endswith(
        "model.heads.error: its score column 'error' is also where faim score writes each row's error; rename the task"
    )
    recipe["model"]["heads"]["error"]["type"] = "multiclass"  # its columns error.no and error.yes
    Recipe.load(write_recipe(recipe))


@pytest.mark.parametrize(
    ("head", "pooled", "said"),
    [
        (
            ("embedding", "binary", ["no", "yes"]),
            False,
            "model.heads.embedding: its score column 'embedding' is also where faim score --with-embeddings writes "
            "each post's embedding; rename the task",
        ),
        (
            ("picture", "binary", ["no", "yes"]),
            True,
            "model.heads.picture: its score column 'picture' is also where faim score --pool-by-image writes each "
            "post's picture embedded; rename the task",
        ),
        (
            ("corrects", "binary", ["no", "yes"]),
            True,
            "model.heads.corrects: its score column 'corrects' is also where faim score --pool-by-image writes whether "
            "each post corrects its picture; rename the task",
        ),
        (
            ("picture_group", "binary", ["no", "yes"]),
            True,
            "model.heads.picture_group: its score column 'picture_group' is also where faim score --pool-by-image "
            "writes each post's picture group; rename the task",
        ),
        (
            ("severity", "multiclass", ["low", "logits"]),
            True,
            "model.heads.severity.labels: 'logits' gives the score column 'severity.logits', where faim score "
            "--pool-by-image writes the logits of task 'severity'; rename the label",
        ),
        (
            ("picture_group", "multiclass", ["low", "high"]),
            True,
            "model.heads.picture_group: a task named 'picture_group' would take the place of each post's picture group "
            "in the rows score(pool_by_image=True) gives; rename the task",
        ),
    ],
)
def test_a_task_or_label_named_as_a_column_faim_score_writes_with_embeddings_or_pooled_is_refused(
    head: tuple, pooled: bool, said: str, recipe: dict, write_recipe
) -> None:
    # built, faim score --with-embeddings or --pool-by-image was refused at start, and score(pool_by_image=True) gave
    # each post's picture group in the place of the scores of a task named picture_group
    name, kind, labels = head
    recipe["model"]["heads"][name] = {"type": kind, "labels": labels}
    recipe["eval"]["pool_by_image"] = 0.95 if pooled else None
    assert error_for(recipe, write_recipe).endswith(said)
    if pooled:  # a model that does not pool by picture writes none of these columns
        recipe["eval"]["pool_by_image"] = None
        Recipe.load(write_recipe(recipe))


def test_a_misspelt_column_role_is_refused_naming_its_path_and_the_roles_loaders_read(
    recipe: dict, write_recipe
) -> None:
    recipe["data"]["columns"]["txet"] = "tweet"
    message = error_for(recipe, write_recipe)
    assert "data.columns.txet: unknown key (did you mean 'text'?); valid: id, text, images, image, comments" in message
    member = dict(recipe["data"])
    concat = {"type": "concat", "sources": [member, member]}
    recipe["data"] = {"type": "without", "source": concat, "field": "topic", "values": ["a"]}
    assert "data.source.sources[0].columns.txet: unknown key" in error_for(recipe, write_recipe)


def test_columns_of_the_wrong_type_are_refused_before_anything_runs(recipe: dict, write_recipe) -> None:
    recipe["data"]["columns"]["text"] = 3
    assert "data.columns: text: expected a column name, got 3" in error_for(recipe, write_recipe)
    recipe["data"]["columns"] = {"labels": 3}
    assert "data.columns: labels: expected a dict of name to column or a list of columns" in error_for(
        recipe, write_recipe
    )
    recipe["data"]["columns"] = {"labels": {"harmful": 5}}
    assert "data.columns: labels: names and columns are text, got 5 in {'harmful': 5}" in error_for(
        recipe, write_recipe
    )


def training_error(recipe: dict, write_recipe) -> str:
    """What ``faim.train`` of ``recipe`` raises, its data files absent: an error of the recipe, before data is read."""
    with pytest.raises(RecipeError) as info:
        faim.train(write_recipe(recipe))
    return str(info.value)


def test_labels_read_for_a_task_the_model_lacks_are_refused_by_training_before_data_is_read(
    recipe: dict, write_recipe
) -> None:
    recipe["data"]["columns"]["labels"] = {"harmfull": "label"}
    message = training_error(recipe, write_recipe)
    assert "data.columns.labels.harmfull: the model has no task 'harmfull' (did you mean 'harmful'?)" in message
    assert error_for(recipe, write_recipe) == message  # refused on reading too
    with registry.rebuilding_saved("saved"):  # a model saved before this was checked on reading loads
        assert Recipe.load(write_recipe(recipe)).data["columns"]["labels"] == {"harmfull": "label"}
    member = dict(recipe["data"])
    recipe["data"] = {"type": "concat", "sources": [dict(member, columns={"labels": {"harmful": "label"}}), member]}
    assert "data.sources[1].columns.labels.harmfull: the model has no task" in training_error(recipe, write_recipe)


def test_a_source_reading_labels_for_another_task_is_refused_by_training_given_or_by_default(
    recipe: dict, write_recipe, tmp_path: Path
) -> None:
    recipe["data"] = {"type": "tweeteval", "root": str(tmp_path), "task": "hate"}
    assert "data.task: the model has no task 'hate'; its tasks: harmful" in training_error(recipe, write_recipe)
    del recipe["data"]["task"]
    assert "data.task: the model has no task 'hate'" in training_error(recipe, write_recipe)


def test_boolean_labels_of_a_mapping_are_refused_as_not_names(recipe: dict) -> None:
    recipe["model"]["heads"]["harmful"]["labels"] = [False, True]
    with pytest.raises(RecipeError, match="False is a boolean, not a label name .* write label names as text"):
        Recipe.from_dict(recipe)


def test_a_logit_shift_without_the_temperature_it_is_fitted_with_is_refused_by_training(
    recipe: dict, write_recipe
) -> None:
    recipe["eval"] |= {"temperature": False, "logit_shift": True}
    assert "eval.logit_shift: a logit shift is fitted with the temperature" in training_error(recipe, write_recipe)
    assert "eval.logit_shift: a logit shift is fitted with the temperature" in error_for(recipe, write_recipe)
    with registry.rebuilding_saved("saved"):  # as a saved model's recipe may hold it
        assert Recipe.load(write_recipe(recipe)).eval.logit_shift


def test_a_plugin_argument_annotated_as_a_path_takes_its_string_or_a_path_and_is_built_and_loaded_a_path(
    tmp_path: Path,
) -> None:
    @faim.register_head("test_path_head")
    class PathHead(BinaryHead):
        def __init__(self, input_dim: int, table: Path = Path("words.txt"), extra: Path | None = None) -> None:
            super().__init__(input_dim)
            self.table, self.extra = table, extra
            self.stem = table.stem  # as a plug-in reads its path

    head = {"type": "test_path_head", "table": "other.txt", "extra": Path("more.txt"), "labels": ["no", "yes"]}
    section = {
        "encoders": {"text": {"type": "tiny_text", "dim": 8}},
        "fusion": {"type": "concat"},
        "heads": {"harmful": head},
    }
    try:
        recipe = as_recipe({"model": section})
        assert {key: recipe.model["heads"]["harmful"][key] for key in ("table", "extra")} == {
            "table": "other.txt",
            "extra": "more.txt",  # as YAML holds it
        }
        assert "extra: more.txt" in recipe.to_yaml()
        built = faim.build(recipe).model.heads["harmful"]
        assert (built.table, built.extra, built.stem) == (Path("other.txt"), Path("more.txt"), "other")
        with pytest.raises(RecipeError, match=r"model.heads.harmful.table: expected Path, got 3"):
            as_recipe({"model": section | {"heads": {"harmful": head | {"table": 3}}}})
        detector = faim.build({"model": section | {"heads": {"harmful": head | {"table": Path("words.txt")}}}})
        detector.recipe = None  # its architecture written out, each path as its string
        detector.save(tmp_path / "model")
        loaded = faim.load(tmp_path / "model")
        assert loaded.recipe.model["heads"]["harmful"]["table"] == "words.txt"
        assert (loaded.model.heads["harmful"].table, loaded.model.heads["harmful"].extra) == (
            Path("words.txt"),
            Path("more.txt"),
        )
    finally:
        registry.HEADS.pop("test_path_head")


@pytest.mark.parametrize("wrapped", ["alone", "concat", "without"])
def test_a_plugin_sources_path_argument_is_built_a_path_alone_or_wrapped(wrapped: str) -> None:
    @faim.register_source("test_path_source")
    class PathSource:
        def __init__(self, root: Path, extra: Path | None = None, either: str | Path = "x") -> None:
            self.root, self.extra, self.either = root, extra, either
            self.name = root.name  # as a plug-in reads its path

        def splits(self) -> list[str]:
            return ["train"]

        def posts(self, split: str) -> list:
            return []

        def iter_posts(self, path: str) -> Iterator:
            return iter([])

        def describe(self, split: str) -> str:
            return self.name

        def fingerprint(self, split: str) -> str:
            return self.name

    source = {"type": "test_path_source", "root": "a/b", "either": "e"}
    data = {
        "alone": source,
        "concat": {"type": "concat", "sources": [source, source | {"root": "c/d"}]},
        "without": {"type": "without", "source": source, "field": "f", "values": [1]},
    }[wrapped]
    model = {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"},
             "heads": {"h": {"type": "binary", "labels": ["no", "yes"]}}}  # fmt: skip
    try:
        built = build_source(as_recipe({"data": data, "model": model}).data_section)
        read = {"alone": lambda: built, "concat": lambda: built.members[0], "without": lambda: built.member}[wrapped]()
        assert (read.root, read.extra, read.either, read.name) == (Path("a/b"), None, "e", "b")
    finally:
        registry.SOURCES.pop("test_path_source")


def test_a_saved_models_recipe_is_warned_of_an_argument_that_fits_not_its_annotation_but_refused_a_bad_setting(
    recipe: dict, write_recipe
) -> None:
    recipe["model"]["heads"]["harmful"]["hidden_dim"] = "big"
    with registry.rebuilding_saved("saved"), pytest.warns(registry.SavedModelWarning, match="hidden_dim: expected"):
        assert Recipe.load(write_recipe(recipe)).model["heads"]["harmful"]["hidden_dim"] == "big"
    recipe["model"]["heads"]["harmful"]["hidden_dim"] = 16
    recipe["eval"]["batch_size"] = "64"  # a setting, not what a model was built with
    with registry.rebuilding_saved("saved"), pytest.raises(RecipeError, match="eval.batch_size: expected int"):
        Recipe.load(write_recipe(recipe))


@pytest.mark.parametrize(
    ("monitor", "mode", "refusal"),
    [
        (
            "val/loss",
            "max",
            "'max' keeps the epoch of the highest val/loss (train.monitor), the worst; set train.mode to",
        ),
        ("train/loss", "max", "set train.mode to min"),
        ("val/harmful/auroc", "min", "'min' keeps the epoch of the lowest val/harmful/auroc"),
        ("val/harmful/macro_f1", "min", "set train.mode to max"),
        ("val/loss", "min", None),
        ("val/harmful/auroc", "max", None),
    ],
)
def test_a_mode_keeping_the_worst_epoch_is_refused_for_training_yet_read(
    tmp_path: Path, monitor: str, mode: str, refusal: str | None
) -> None:
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path, mode=mode)
    recipe["train"]["monitor"] = monitor
    with registry.rebuilding_saved("saved"):  # a saved model's recipe may hold it: read as written
        train = as_recipe(recipe).train
    if refusal is None:
        check_monitor_mode("r.yaml", train)
        return
    with pytest.raises(RecipeError, match=re.escape("r.yaml: train.mode: ") + ".*" + re.escape(refusal)):
        check_monitor_mode("r.yaml", train)
    with pytest.raises(RecipeError, match="and train anew: a run begun with it cannot be resumed$"):
        check_monitor_mode("r.yaml", train, resume=True)


def test_takes_mapping_reads_a_mapping_alone_or_in_a_union() -> None:
    assert takes_mapping(dict[str, float]) and takes_mapping(Mapping[str, int] | None) and takes_mapping(dict)
    assert not takes_mapping(int | None) and not takes_mapping(list[float]) and not takes_mapping(str)


def test_a_task_named_empty_is_refused_before_the_model_is_built(recipe: dict, write_recipe) -> None:
    # it was built as far as the model, where torch refused its head's name: module name can't be empty string ""
    recipe["model"]["heads"] = {"": recipe["model"]["heads"].pop("harmful")}
    recipe["data"]["columns"]["labels"] = {"": "label"}
    assert "model.heads: a task's name is empty; name each task" in error_for(recipe, write_recipe)


@pytest.mark.parametrize("name", ["a.b", 1, None, True])
def test_a_task_named_with_a_dot_or_not_as_text_is_refused_before_the_model_is_built(name: object) -> None:
    # torch refused it as the model was built, with its bare KeyError (module name can't contain ".") or TypeError
    # (module name should be a string) for a YAML key read as a number, null or a boolean
    heads = {"model": {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}}
    heads["model"]["heads"] = {name: {"type": "binary", "labels": ["no", "yes"]}}
    with pytest.raises(RecipeError) as info:
        faim.build(heads)
    if isinstance(name, str):
        said = "model.heads: task name 'a.b' holds '.', which faim score writes between a task and its label"
    else:
        said = f"model.heads: task name {name!r} is not text (YAML reads a name such as 1, null or yes unquoted"
    assert said in str(info.value)


@pytest.mark.parametrize("name", [1.5, float("inf")])
def test_a_task_named_by_a_yaml_float_is_told_to_write_its_name_without_the_dot(name: float) -> None:
    # a key such as 1.5: (or .inf:) was told to write the name quoted, and '1.5' was then refused for its dot
    heads = {"model": {"encoders": {"text": {"type": "tiny_text", "dim": 8}}, "fusion": {"type": "concat"}}}
    heads["model"]["heads"] = {name: {"type": "binary", "labels": ["no", "yes"]}}
    with pytest.raises(RecipeError) as info:
        faim.build(heads)
    assert str(info.value).endswith("write the name quoted and without its dot, which a task's name cannot hold")

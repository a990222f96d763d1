"""Check a recipe mapping against the registries and section dataclasses before anything runs.

Keys are exactly constructor argument names (checked with ``inspect.signature``), and their values must fit the
constructor's annotations where those are plain (numbers, text, booleans, lists and mappings of them); derived
arguments (sizes the builder computes from the encoders) may not be written. An unknown key or type fails with its
YAML path, the valid choices and a close-match suggestion.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import types
import typing
import unicodedata
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from faim.calibration.thresholds import OBJECTIVES
from faim.components import (
    DERIVED,
    RESERVED,
    component_args,
    failed_plugins_note,
    holding,
    registries,
    settable_arguments,
    takes_any_key,
)
from faim.data.columns import ColumnMap
from faim.data.post import FIELDS
from faim.data.targets import FALSE_WORDS, TRUE_WORDS
from faim.perturb import check_augmentation
from faim.recipe.errors import RecipeError
from faim.recipe.sections import MODEL_KEYS, SECTIONS, EvalConfig, TrainConfig, best_mode
from faim.registry import (
    ELEMENT_MODALITIES,
    REBUILDING_SAVED,
    entry_annotations,
    refuse_new,
    suggest,
    type_hints,
    type_matches,
)
from faim.scoring.output import (
    EMBEDDING_COLUMNS,
    ERROR_COLUMNS,
    PICTURE_GROUP,
    POOLING_COLUMNS,
    ROW_COLUMNS,
    logits_column,
    logits_held,
)


def check_keys(source: str, path: str, given: dict[str, Any], valid: list[str]) -> None:
    for key in given:
        if key not in valid:
            raise RecipeError(
                source, f"{path}.{key}" if path else key, f"unknown key{suggest(key, valid)}; valid: {', '.join(valid)}"
            )


def saved_plugin_note(kind: str) -> str:
    """What an unknown component type's error adds for a saved model being loaded (``rebuilding_saved``), where the
    type was registered when it was saved, so the plug-in registering it is what is missing (``""`` otherwise)."""
    if not REBUILDING_SAVED.get():
        return ""
    return (
        "; the model was saved with a component registered under that name: import the module registering it "
        f"(faim.register_{kind}) before loading the model, or install the package shipping it as a "
        "faim.plugins plug-in"
    )


def check_component(source: str, path: str, kind: str, spec: Any) -> None:
    """Validate one ``{type: NAME, ...args}`` mapping against the class registered as NAME: any key but the derived
    ones where its constructor takes any keyword (``takes_any_key``), else its named arguments alone."""
    if not isinstance(spec, dict) or "type" not in spec:
        choices = ", ".join(sorted(registries()[kind]))
        raise RecipeError(source, path, f"expected a mapping with 'type:' (one of {choices})")
    name = spec["type"]
    table = holding(kind, name)
    if name not in table:
        choices = sorted(table)
        valid = f"valid: {', '.join(choices)}{failed_plugins_note()}{saved_plugin_note(kind)}"
        raise RecipeError(source, f"{path}.type", f"unknown {kind} {name!r}{suggest(str(name), choices)}; {valid}")
    cls = table[name]
    reserved = RESERVED[kind]
    args = component_args(kind, spec)
    valid = settable_arguments(kind, cls)
    for key in args:
        if key in DERIVED[kind]:
            raise RecipeError(source, f"{path}.{key}", "is derived from the encoders; remove it")
    if not takes_any_key(cls):
        check_keys(source, path, args, valid + sorted(reserved))
    derived = {p: None for p in inspect.signature(cls).parameters if p in DERIVED[kind]}
    try:
        inspect.signature(cls).bind(**derived, **args)
    except TypeError as error:
        raise RecipeError(source, path, f"{name}: {error}; arguments: {', '.join(valid)}") from error
    for where, expected, mapping in type_mismatches(path, args, cls.__init__):  # a saved model was built with it
        key = where.rsplit(".", 1)[1]
        refusal = RecipeError(source, where, expected + null_remedy(cls, key, args[key]), mapping)
        refuse_new(refusal, f"{where}: {expected}; built with it as saved")


def check_section(source: str, name: str, given: Any, config: type) -> None:
    if not isinstance(given, dict):
        raise RecipeError(source, name, "expected a mapping")
    check_keys(source, name, given, [f.name for f in dataclasses.fields(config)])
    for where, expected, mapping in type_mismatches(name, given, config):
        raise RecipeError(source, where, expected, mapping)


def none_given(components: Any) -> str:
    """What an error about a model's heads or encoders adds when ``components`` (what the recipe holds there) gives
    none: a key missing, written null or an empty mapping."""
    return "; none given" if components in (None, {}) else ""


def check_heads(source: str, heads: Any) -> None:
    if not isinstance(heads, dict) or not heads:
        raise RecipeError(source, "model.heads", f"expected a mapping of task name to head{none_given(heads)}")
    for task, spec in heads.items():
        if not isinstance(task, str):
            raise RecipeError(
                source,
                "model.heads",
                f"task name {task!r} is not text (YAML reads a name such as 1, null or yes unquoted as a number, "
                "null or a boolean); write the name quoted"
                # YAML writes a number read as a float (1.5, .inf) with a dot
                + (" and without its dot, which a task's name cannot hold" if isinstance(task, float) else ""),
            )
        if task == "":
            raise RecipeError(
                source,
                "model.heads",
                "a task's name is empty; name each task (its head, score column and plots take its name)",
            )
        if "." in task:
            raise RecipeError(
                source,
                "model.heads",
                f"task name {task!r} holds '.', which faim score writes between a task and its label "
                "(TASK.LABEL) and torch refuses in a head's name; rename the task",
            )
        check_component(source, f"model.heads.{task}", "head", spec)
        labels = spec.get("labels")
        if not isinstance(labels, list) or len(labels) < 2 or len(set(map(str, labels))) != len(labels):
            raise RecipeError(
                source, f"model.heads.{task}.labels", "expected a list of at least two distinct label names"
            )
        if flags := [label for label in labels if isinstance(label, bool)]:
            raise RecipeError(
                source,
                f"model.heads.{task}.labels",
                f"{flags[0]!r} is a boolean, not a label name (yaml.safe_load reads no, yes, on and off as booleans);"
                " write label names as text, e.g. 'no'",
            )
        if spec["type"] == "binary" and len(labels) != 2:
            raise RecipeError(
                source, f"model.heads.{task}.labels", "a binary task has exactly two labels: [negative, positive]"
            )
        if spec["type"] == "binary" and (reversal := positive_first(labels)):
            refuse_new(
                RecipeError(source, f"model.heads.{task}.labels", reversal), f"model.heads.{task}.labels: {reversal}"
            )
        check_composed_labels(source, task, labels)


def positive_first(labels: list) -> str | None:
    """Why a binary head's ``labels`` written positive first (``[1, 0]``, ``[yes, no]``, ``[true, false]``, in any
    case) are refused: a value spelling a label is that label (``yes`` the negative class there), and a boolean or a
    true/false word spelling none is its truth (``true`` the positive class, ``faim.data.targets.TaskSpec.index``), so
    one file's ``yes`` and another's ``true`` would be read as opposite classes. ``None`` for any other labels."""
    first, second = map(truth_word, labels)
    if first not in TRUE_WORDS or second not in FALSE_WORDS:
        return None
    shown = list(map(str, labels))
    return (
        f"a binary task's labels are [negative, positive], and {shown[0]!r} comes first, as the negative: a label "
        f"{shown[0]!r} or true would be read as opposite classes; write [{shown[1]}, {shown[0]}]"
    )


def truth_word(label: Any) -> str:
    """``label`` as ``positive_first`` compares it with the words of truth: lower-cased, and a whole number however
    written (``1.0``, ``'1.0'``) as its integer, as ``faim.data.targets.TaskSpec.index`` reads a number."""
    word = str(label).strip().lower()
    try:
        number = float(word)
    except ValueError:
        return word
    return str(int(number)) if number.is_integer() else word


def check_score_columns(source: str, heads: dict[str, Any], pooled: bool = False) -> None:
    """Refuse heads two of whose columns in faim score's output would share a name (``faim.scoring.output``: a
    binary task's score ``TASK``, each label's ``TASK.LABEL`` of another task, each task's ``TASK.decision``): a
    label named ``decision`` (whose probabilities would go where the decisions go, stopping faim score part way),
    or a task named as another's label (``severity.low``, which ``check_heads`` refuses first, for its ``.``), or a
    binary one as a column of each row
    (``faim.scoring.output.ROW_COLUMNS`` and ``ERROR_COLUMNS``) or as the embedding ``--with-embeddings`` adds
    (``EMBEDDING_COLUMNS``), which any model's run may write; with ``pooled`` (the recipe's ``eval.pool_by_image``:
    only such a model's run pools), also one as a column pooling adds (``POOLING_COLUMNS``, and each task's logits,
    ``logits_column``: a label named ``logits``), and a task of any kind named ``picture_group``, the key
    ``Detector.score(posts, pool_by_image=True)`` gives each row's picture group by. And a task named ``id``, whose
    scores would take the place of each post's id in the rows ``score`` gives, and of a binary one in those faim score
    writes (which refuses to write its scores: ``faim.scoring.output.check_output_columns``). Names the label or task
    that comes later, and what the column is also; a saved model so built is warned of and loaded
    (``faim.registry.refuse_new``)."""

    def binary(task: str) -> bool:
        return registries()["head"][heads[task]["type"]].task_type == "binary"

    if "id" in heads:
        problem = "a task named 'id' would take the place of each post's id in the rows score gives" + (
            ", and share faim score's column 'id' with each row's id, so faim score cannot write its scores"
            if binary("id")
            else " (faim score writes its scores as id.LABEL, beside the ids)"
        )
        refuse_new(RecipeError(source, "model.heads.id", f"{problem}; rename the task"), f"model.heads.id: {problem}")
    if pooled and PICTURE_GROUP in heads and not binary(PICTURE_GROUP):  # a binary one's score column is refused below
        where = f"model.heads.{PICTURE_GROUP}"
        problem = (
            f"a task named {PICTURE_GROUP!r} would take the place of each post's picture group in the rows "
            "score(pool_by_image=True) gives"
        )
        refuse_new(RecipeError(source, where, f"{problem}; rename the task"), f"{where}: {problem}")
    written = {"faim score": ROW_COLUMNS | ERROR_COLUMNS, "faim score --with-embeddings": EMBEDDING_COLUMNS}
    if pooled:
        logits = {logits_column(task): logits_held(task) for task in heads}
        written["faim score --pool-by-image"] = POOLING_COLUMNS | logits
    owners = {
        name: ("", f"where {run} writes {what}")
        for run, columns in written.items()
        for name, what in columns.items()
        if name != "id"  # refused above, for a task of any kind
    }
    owners |= {
        f"{task}.decision": ("", f"where faim score writes each post's decision of task {task!r}") for task in heads
    }
    for task, spec in heads.items():
        for label in [None] if binary(task) else list(map(str, spec["labels"])):
            name = task if label is None else f"{task}.{label}"
            if name not in owners:
                owners[name] = (
                    "which is also ",
                    f"that of task {task!r}" if label is None else f"that of label {label!r} of task {task!r}",
                )
                continue
            joint, owner = owners[name]
            if label is None:
                where, problem = f"model.heads.{task}", f"its score column {name!r} is also {owner}; rename the task"
            else:
                where = f"model.heads.{task}.labels"
                problem = f"{label!r} gives the score column {name!r}, {joint}{owner}; rename the label"
            refuse_new(RecipeError(source, where, problem), f"{where}: {problem}; faim score cannot write its scores")


def check_composed_labels(source: str, task: str, labels: list) -> None:
    """Refuse two of a head's labels that differ only in how their accents are written (``'caf\\xe9'`` and
    ``'cafe\\u0301'``): a label value is read composed (NFC, ``faim.data.targets.TaskSpec.composed``), so both would
    be the first and the other class could never be labelled. Names the labels by ``ascii``, as they print alike."""
    first: dict[str, str] = {}
    for label in map(str, labels):
        composed = unicodedata.normalize("NFC", label)
        if composed in first:
            raise RecipeError(
                source,
                f"model.heads.{task}.labels",
                f"{ascii(first[composed])} and {ascii(label)} are the same label once composed (NFC), as a label"
                " value is read, so the second could never be labelled; give the task distinct label names",
            )
        first[composed] = label


ELEMENT_KINDS = tuple(ELEMENT_MODALITIES)


def check_encoders(source: str, encoders: Any) -> None:
    if not isinstance(encoders, dict) or not encoders:
        expected = f"expected a mapping of element kind ({', '.join(ELEMENT_KINDS)}) to encoder"
        raise RecipeError(source, "model.encoders", f"{expected}{none_given(encoders)}")
    for kind, spec in encoders.items():
        if kind not in ELEMENT_KINDS:
            raise RecipeError(
                source,
                f"model.encoders.{kind}",
                f"unknown element kind{suggest(kind, list(ELEMENT_KINDS))}; valid: {', '.join(ELEMENT_KINDS)}",
            )
        if isinstance(spec, str):
            if spec in ELEMENT_KINDS and spec not in encoders:  # named at its own key: a null dropping it is there
                raise RecipeError(
                    source, f"model.encoders.{spec}", f"not given, and model.encoders.{kind} shares it ({kind}: {spec})"
                )
            if spec not in encoders or isinstance(encoders[spec], str):
                raise RecipeError(
                    source, f"model.encoders.{kind}", f"shares encoder {spec!r}, which is not defined here"
                )
        elif isinstance(spec, list):
            if len(spec) < 2:
                raise RecipeError(
                    source, f"model.encoders.{kind}", "a list stacks two or more encoders; give one as a mapping"
                )
            for index, member in enumerate(spec):
                check_component(source, f"model.encoders.{kind}[{index}]", "encoder", member)
        else:
            check_component(source, f"model.encoders.{kind}", "encoder", spec)


def check_columns(source: str, path: str, data: dict[str, Any]) -> None:
    """Validate a source's ``columns:`` mapping as the data loaders read it (``ColumnMap.from_recipe``): its keys are
    post fields (``faim.data.post.FIELDS``; a misspelt one would be read by no loader) and its values columns."""
    if not isinstance(data.get("columns"), dict):
        return
    check_keys(source, f"{path}.columns", data["columns"], list(FIELDS))
    try:
        ColumnMap.from_recipe(data["columns"])
    except ValueError as error:
        raise RecipeError(source, f"{path}.columns", str(error).removeprefix("columns").lstrip(".:").strip()) from None


def check_source_tasks(source: str, data: dict[str, Any], heads: dict[str, Any], path: str = "data") -> None:
    """Each task a source reads labels for is a head of the model: the tasks its ``columns.labels`` names and its
    ``task`` argument (given or default) where its class takes one; in a ``concat`` or ``without`` source, each
    member's. Labels read for no head would be dropped unseen, so reading a new recipe (``check_trainable``) and
    training check this before any work; reading a saved model's does not, as one saved before this check may hold
    such a recipe."""
    members = {
        "without": [(f"{path}.source", data.get("source"))],
        "concat": [(f"{path}.sources[{index}]", member) for index, member in enumerate(data.get("sources") or [])],
    }
    for where, member in members.get(data["type"], []):
        check_source_tasks(source, member, heads, where)
    columns = data.get("columns")
    read = {f"columns.labels.{task}": task for task in ColumnMap.from_recipe(columns).labels} if columns else {}
    parameter = inspect.signature(registries()["source"][data["type"]]).parameters.get("task")
    if parameter is not None:
        read["task"] = data.get("task", parameter.default)
    for key, task in read.items():
        if task not in heads:
            raise RecipeError(
                source,
                f"{path}.{key}",
                f"the model has no task {task!r}{suggest(str(task), list(heads))}; its tasks: {', '.join(heads)}",
                agrees=("model.heads",),
            )


def check_members(source: str, data: dict[str, Any], path: str = "data") -> None:
    """Validate what a ``data:`` section (given valid by ``check_component``) holds: its column mapping
    (``check_columns``), each member of a ``concat`` source and the source a ``without`` source wraps, like a
    ``data:`` section of its own."""
    check_columns(source, path, data)
    if data["type"] == "without":
        check_component(source, f"{path}.source", "source", data.get("source"))
        check_members(source, data["source"], f"{path}.source")
        return
    if data["type"] != "concat":
        return
    members = data.get("sources")
    if not isinstance(members, list) or len(members) < 2:
        raise RecipeError(source, f"{path}.sources", "expected a list of at least two data: mappings")
    for index, member in enumerate(members):
        where = f"{path}.sources[{index}]"
        check_component(source, where, "source", member)
        if innermost(member).get("type") == "concat":
            raise RecipeError(source, where, "a concat member cannot be a concat itself")
        check_members(source, member, where)


def innermost(data: dict[str, Any]) -> dict[str, Any]:
    """The source a chain of ``without`` sections wraps (``data`` itself when it is not one)."""
    while data.get("type") == "without" and isinstance(data.get("source"), dict):
        data = data["source"]
    return data


def validate(recipe: dict[str, Any], source: str = "") -> None:
    """Raise ``RecipeError`` for the first problem found in a resolved recipe mapping."""
    check_keys(source, "", recipe, ["base", *SECTIONS])
    if "base" in recipe:
        raise RecipeError(
            source,
            "base",
            "a base is merged where a recipe is read (its file, or a mapping given to faim.build or as_recipe); write"
            " it there, not in a --set nor in a mapping given to Recipe.from_dict",
        )
    if "model" not in recipe:
        raise RecipeError(source, "model", "missing section")
    if "data" in recipe:  # a recipe without one describes a model alone (see Recipe.data)
        check_component(source, "data", "source", recipe["data"])
        check_members(source, recipe["data"])
    model = recipe["model"]
    if not isinstance(model, dict):
        raise RecipeError(source, "model", "expected a mapping with encoders, fusion and heads")
    check_keys(source, "model", model, list(MODEL_KEYS))
    check_encoders(source, model.get("encoders"))
    check_component(source, "model.fusion", "fusion", model.get("fusion"))
    check_fused_kinds(source, model)
    check_heads(source, model.get("heads"))
    train, eval_section = recipe.get("train", {}), recipe.get("eval", {})
    check_section(source, "train", train, TrainConfig)
    check_section(source, "eval", eval_section, EvalConfig)
    check_augment(source, train.get("augment", {}))
    check_balance(source, train.get("balance"), recipe.get("data"))
    check_balance(source, eval_section.get("threshold_balance"), None, "eval.threshold_balance")
    check_pooling(source, model, eval_section)
    check_score_columns(source, model["heads"], eval_section.get("pool_by_image") is not None)
    check_crowd_corrections(source, eval_section)
    check_shift_level(source, eval_section.get("logit_shift_level"))
    check_values(source, "train", train, TRAIN_VALUES)
    check_lightning_names(source, train)
    check_values(source, "eval", eval_section, EVAL_VALUES)
    check_monitor(source, train.get("monitor", TrainConfig.monitor), model.get("heads"))
    if not REBUILDING_SAVED.get():  # a model saved before these were checked here loads
        check_trainable(source, recipe)


RESUMING: ContextVar[bool] = ContextVar("resuming", default=False)
"""Whether the recipe being read is to resume a run (``resuming``), so that its ``train.mode`` refused says to train
anew (``check_monitor_mode``)."""


@contextlib.contextmanager
def resuming(resume: bool) -> Iterator[None]:
    """Read, within it, a recipe to resume a run with where ``resume`` (``faim train --resume``)."""
    token = RESUMING.set(resume)
    try:
        yield
    finally:
        RESUMING.reset(token)


def check_trainable(source: str, recipe: dict[str, Any]) -> None:
    """What training refuses before any work, refused as a new recipe is read (``faim recipe show``, ``faim.build``),
    so that a child recipe changing a setting its base's others must agree with is refused naming its own key
    (``faim.recipe.loader.in_base``), not once a run starts: labels read for a task the model has no head for
    (``check_source_tasks``), a logit shift without its temperature (``check_shift_with_temperature``), a
    ``train.mode`` keeping the worst epoch of ``train.monitor`` (``check_monitor_mode``; saying to train anew where
    the recipe is read to resume a run, ``resuming``), a ``train.precision`` putting the model's weights in half
    precision (``check_weights_precision``)."""
    if "data" in recipe:
        check_source_tasks(source, recipe["data"], recipe["model"]["heads"])
    check_shift_with_temperature(source, EvalConfig(**recipe.get("eval", {})))
    check_monitor_mode(source, TrainConfig(**recipe.get("train", {})), RESUMING.get())
    check_weights_precision(source, recipe.get("train", {}).get("precision"))


HALF_WEIGHTS = {"bf16-true": ("bf16", "bf16-mixed"), "16-true": ("float16", "16-mixed")}
"""The precisions Lightning trains with that put the model's weights in half precision, each with the dtype and the
precision that computes in it under autocast, the weights kept in float32."""


def check_weights_precision(source: str, precision: Any) -> None:
    """``train.precision`` keeps the model's weights in float32 (``HALF_WEIGHTS``): faim gives its encoders the posts,
    and its fusion their embeddings, in float32, which a layer of half weights refuses deep inside its first validation
    step (``mat1 and mat2 must have the same dtype``), and scores a saved model in float32
    (``faim.model.check_full_precision``).

    Raises:
        RecipeError: Naming ``train.precision``, the dtype and the precision to train with instead.
    """
    if precision in HALF_WEIGHTS:
        dtype, mixed = HALF_WEIGHTS[precision]
        raise RecipeError(
            source,
            "train.precision",
            f"{precision!r} puts the model's weights in {dtype}, where faim gives its encoders the posts, and its "
            f"fusion their embeddings, in float32 and scores a saved model in float32: train with {mixed!r} ({dtype} "
            "autocast, the weights kept in float32)",
        )


AT_LEAST_1 = (lambda value: value >= 1, "at least 1")
AT_LEAST_0 = (lambda value: value >= 0, "at least 0")
POSITIVE = (lambda value: value > 0, "above 0")
SHARE = (lambda value: 0 < value <= 1, "in (0, 1]")
PRECISIONS = (
    64,
    32,
    16,
    "transformer-engine",
    "transformer-engine-float16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
    "64",
    "32",
    "16",
    "bf16",
)
"""The precisions Lightning trains with (``train.precision``), its short forms (``16``, ``"bf16"``) too; any other
is refused with the recipe rather than as training starts, as a setting this machine cannot train with."""
TAKEN_UNREAD = {
    "accelerator": ("auto", "gpu", "cpu", "cuda", "mps"),
    "strategy": ("auto", "ddp", "ddp_spawn", "ddp_fork", "ddp_notebook"),
}
"""The accelerators and strategies (``train.accelerator``, ``train.strategy``) taken without Lightning's registries
being read: those it takes by name beyond them (``auto``, ``gpu``), and the ones of its own recipes name most
(``cpu``, the default, and the data-parallel ones), so that checking a recipe, as loading a saved model does,
imports no Lightning; a name one of them lacks is refused as training starts, as a setting this machine cannot
train with."""


def lightning_names(key: str) -> list[str]:
    """The names Lightning takes for ``train.KEY`` (``accelerator`` or ``strategy``) as it is asked: those of
    ``TAKEN_UNREAD`` and of its registry, where Lightning's plugins (lightning-habana's ``hpu``) and its users
    register theirs."""
    if key == "accelerator":
        from pytorch_lightning.accelerators import AcceleratorRegistry  # heavy: only for a name beyond the common ones

        registered = sorted(AcceleratorRegistry.available_accelerators())
    else:
        from pytorch_lightning.strategies import StrategyRegistry  # heavy: only for a name beyond the common ones

        registered = StrategyRegistry.available_strategies()
    return list(dict.fromkeys([*TAKEN_UNREAD[key], *registered]))


def check_lightning_names(source: str, train: dict[str, Any]) -> None:
    """``train.accelerator`` and ``train.strategy`` (in any case, as Lightning reads it) are names Lightning takes
    (``lightning_names``, read as the recipe is checked; Lightning is imported only for a name beyond
    ``TAKEN_UNREAD``'s). One that needs what this machine lacks (a package, devices) is refused as training starts,
    any other here."""
    for key, value in (("accelerator", train.get("accelerator")), ("strategy", train.get("strategy"))):
        read = value.lower() if key == "strategy" and isinstance(value, str) else value
        if value is not None and read not in TAKEN_UNREAD[key] and read not in (names := lightning_names(key)):
            raise RecipeError(source, f"train.{key}", f"expected one of {', '.join(names)}, got {value!r}")


TRAIN_VALUES = {
    "max_epochs": AT_LEAST_1,
    "batch_size": AT_LEAST_1,
    "lr": POSITIVE,
    "encoder_lr": POSITIVE,
    "weight_decay": AT_LEAST_0,
    "warmup_ratio": (lambda value: 0 <= value < 1, "in [0, 1)"),
    "seed": (lambda value: 0 <= value < 2**32, f"from 0 to {2**32 - 1} (a seed NumPy takes)"),
    "devices": AT_LEAST_1,
    "num_workers": AT_LEAST_0,
    "mode": (lambda value: value in ("min", "max"), "min or max"),
    "patience": AT_LEAST_0,
    "max_elements": AT_LEAST_1,
    "log_every_n_steps": AT_LEAST_1,
    "precision": (
        lambda value: value in PRECISIONS,
        "64, 32 or 16 (a number or a string) or one of "
        + ", ".join(value for value in PRECISIONS if isinstance(value, str) and not value.isdigit()),
    ),
}
EVAL_VALUES = {
    "threshold_objective": (lambda value: value in OBJECTIVES, f"one of {', '.join(OBJECTIVES)}"),
    "threshold_target": SHARE,
    "fixed_recall": (lambda values: all(0 < value <= 1 for value in values), "shares in (0, 1]"),
    "fixed_precision": (lambda values: all(0 < value <= 1 for value in values), "shares in (0, 1]"),
    "calibration_bins": AT_LEAST_1,
    "batch_size": AT_LEAST_1,
}
"""Each section's values that have a range or a set of choices, with the test a value must pass (``None`` is not
tested: a key that may be null) and how the message says it; their types are checked before."""


def check_values(source: str, name: str, given: dict[str, Any], valid: dict[str, tuple[Any, str]]) -> None:
    """Each value of section ``name`` with a range or choices (``valid``) is in it, before anything runs."""
    for key, (test, expected) in valid.items():
        value = given.get(key)
        if value is not None and not test(value):
            raise RecipeError(source, f"{name}.{key}", f"expected {expected}, got {value!r}")


def check_monitor(source: str, monitor: Any, heads: dict[str, Any]) -> None:
    """``train.monitor`` names a figure training logs: ``val/loss``, ``train/loss`` or ``val/TASK/auroc`` or
    ``val/TASK/macro_f1`` of a head of the model."""
    logged = ["val/loss", "train/loss"] + [f"val/{task}/{figure}" for task in heads for figure in ("auroc", "macro_f1")]
    if monitor not in logged:
        raise RecipeError(
            source,
            "train.monitor",
            f"{monitor!r} is not logged{suggest(str(monitor), logged)}; logged: {', '.join(logged)}",
            agrees=("model.heads",),
        )


def check_augment(source: str, augment: dict[str, float]) -> None:
    """``train.augment`` names known perturbations, each with a probability in [0, 1]."""
    try:
        check_augmentation(augment)
    except ValueError as error:
        raise RecipeError(source, "train.augment", str(error)) from None


BALANCE = ("sources",)
"""What ``train.balance`` may name (``None``: no balancing)."""


def check_balance(source: str, balance: Any, data: dict[str, Any] | None, path: str = "train.balance") -> None:
    """``train.balance`` (or ``eval.threshold_balance``, ``path``) is ``None`` or one of ``BALANCE``; balancing over
    sources needs a ``concat`` ``data`` section (or a ``without`` one wrapping it), where ``data`` is given."""
    if balance is None:
        return
    if balance not in BALANCE:
        valid = f"{', '.join(BALANCE)} (or null)"
        raise RecipeError(
            source, path, f"unknown balance {balance!r}{suggest(str(balance), list(BALANCE))}; valid: {valid}"
        )
    if data is not None and innermost(data).get("type") != "concat":
        raise RecipeError(
            source,
            path,
            "sources balances the members of a concat data: section; this data is one source",
            agrees=("data",),
        )


def check_fused_kinds(source: str, model: dict[str, Any]) -> None:
    """``model.fusion.kinds``, when given, is a non-empty list of the element kinds the encoders define."""
    kinds = model["fusion"].get("kinds")
    if kinds is None:
        return
    defined = sorted(model["encoders"])
    if not isinstance(kinds, list) or not kinds or not set(kinds) <= set(defined):
        raise RecipeError(
            source,
            "model.fusion.kinds",
            f"expected a non-empty list of element kinds from {defined}, got {kinds!r}",
            agrees=("model.encoders",),
        )


def check_pooling(source: str, model: dict[str, Any], eval_section: dict[str, Any]) -> None:
    """``eval.pool_by_image`` is a cosine in (0, 1] and needs an image encoder to compare pictures with."""
    min_cosine = eval_section.get("pool_by_image")
    if min_cosine is None:
        return
    if not 0 < min_cosine <= 1:
        raise RecipeError(source, "eval.pool_by_image", f"expected a cosine in (0, 1], got {min_cosine!r}")
    if "image" not in model["encoders"]:
        raise RecipeError(
            source,
            "eval.pool_by_image",
            "pooling by shared picture needs model.encoders.image; without one, set eval.pool_by_image to null",
            agrees=("model.encoders",),
        )


def check_crowd_corrections(source: str, eval_section: dict[str, Any]) -> None:
    """``eval.crowd_corrections`` weighs what is pooled by picture, so it needs ``eval.pool_by_image``."""
    if eval_section.get("crowd_corrections") is not None and eval_section.get("pool_by_image") is None:
        raise RecipeError(
            source,
            "eval.crowd_corrections",
            "the crowd's corrections are read across the posts that share a picture: set eval.pool_by_image too",
            agrees=("eval.pool_by_image",),
        )


def check_shift_with_temperature(source: str, eval_section: EvalConfig) -> None:
    """``eval.logit_shift`` is fitted with the temperature (Platt scaling), so it needs ``eval.temperature``; reading a
    new recipe (``check_trainable``) and training check this before any work, and reading a saved model's does not,
    as one saved before this check may hold such a recipe."""
    if eval_section.logit_shift and not eval_section.temperature:
        raise RecipeError(
            source,
            "eval.logit_shift",
            "a logit shift is fitted with the temperature: set eval.temperature to true too, or logit_shift to false",
            agrees=("eval.temperature",),
        )


def check_monitor_mode(source: str, train: TrainConfig, resume: bool = False) -> None:
    """``train.mode`` keeps the epoch where ``train.monitor`` is best, the lowest loss or the highest score, not the
    worst (as a recipe monitoring AUROC with ``mode: max`` would, set to monitor ``val/loss``); reading a new recipe
    (``check_trainable``) and training check this before any work, and reading a saved model's does not, as one
    saved before this check may hold such a recipe.
    Resuming (``resume``), the refusal says to train anew: a run begun with such a mode cannot be resumed with
    another (``train.mode`` is not a setting a resumed run may change)."""
    best = best_mode(train.monitor)
    if train.mode != best:
        kept = "highest" if best == "min" else "lowest"
        raise RecipeError(
            source,
            "train.mode",
            f"{train.mode!r} keeps the epoch of the {kept} {train.monitor} (train.monitor), the worst; set "
            f"train.mode to {best}" + (" and train anew: a run begun with it cannot be resumed" if resume else ""),
            agrees=("train.monitor",),
        )


def check_shift_level(source: str, level: Any) -> None:
    """``eval.logit_shift_level`` is ``None`` or a significance level in (0, 1)."""
    if level is not None and not 0 < level < 1:
        raise RecipeError(source, "eval.logit_shift_level", f"expected a significance level in (0, 1), got {level!r}")


def type_mismatches(name: str, given: dict[str, Any], annotated: Any) -> list[tuple[str, str, bool]]:
    """Each value in ``given`` that does not fit the annotation of its name in ``annotated`` (a section's dataclass,
    a component's constructor; names without an annotation, or annotations that name what cannot be imported here,
    are not checked), as its recipe path, what was expected instead, the annotation as written
    (``annotation_text``), and whether the annotation takes a mapping (``RecipeError.takes_mapping``). A section's
    is refused; a component's argument is refused for a new model and warned of for a saved one being loaded
    (``faim.registry.refuse_new``): the model was built with it, and a check added since must not refuse it."""
    hints = type_hints(annotated)
    return [
        (f"{name}.{key}", f"expected {annotation_text(hints[key])}, got {value!r}", takes_mapping(hints[key]))
        for key, value in given.items()
        if key in hints and not type_matches(value, hints[key])
    ]


def takes_mapping(annotation: Any) -> bool:
    """Whether ``annotation`` takes a mapping (``dict[str, float]``, ``Mapping[str, int] | None``)."""
    members = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    return any(entry_annotations(member) is not None for member in members or (annotation,))


def null_remedy(component: type, key: str, value: Any) -> str:
    """What to write instead of a null for argument ``key`` of ``component``, which takes none: its default, where it
    has one a recipe can write (a recipe with a base cannot leave out a key its base writes, and a null there is kept
    as a null, as it means no value for arguments that take one); ``""`` for any other value, or an argument without
    such a default."""
    if value is not None:
        return ""
    try:
        parameter = inspect.signature(component).parameters.get(key)
    except (TypeError, ValueError):  # a class whose signature cannot be read
        return ""
    if parameter is None or parameter.default is inspect.Parameter.empty:
        return ""
    try:  # as YAML reads it (JSON is YAML): a tuple as a list; a Path or an object has no such form
        written = json.dumps(list(parameter.default) if isinstance(parameter.default, tuple) else parameter.default)
    except TypeError:
        return ""
    return f" (null is no value here; for the default, write it: {written})"


def annotation_text(annotation: Any) -> str:
    """An annotation as a constructor's signature writes it, each name without its module: ``int``, ``Path | None``
    (``typing.Optional[pathlib.Path]`` too), ``tuple[Path, ...]``, ``Sequence[int]``, ``tuple`` (``typing.Tuple``
    alone), ``tuple[()]`` (the empty tuple), ``Literal['a']``."""
    if annotation is type(None):
        return "None"
    if annotation is Ellipsis:
        return "..."
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(annotation_text(arg) for arg in args)
    name = getattr(origin or annotation, "__name__", None)
    if name is None:  # a value, not a type: one of a Literal's
        return repr(annotation)
    if args:
        return f"{name}[{', '.join(annotation_text(arg) for arg in args)}]"
    return f"{name}[()]" if origin is tuple and hasattr(annotation, "__args__") else name  # the empty tuple's

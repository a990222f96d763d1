"""Recipe sections to modules and back: assemble a ``WholePostModel`` from a validated ``model:`` section, and
write the ``model:`` section that assembles a given model again.

An element kind's encoder is a mapping (``{type: hf_text, ...}``), a list of mappings (encoders stacked on the kind,
their embeddings side by side: ``faim.encoders.stack``), or the name of another kind whose encoder it shares.

Sizes flow forward (``faim.components``): each fused kind's encoder ``output_dim`` gives the fusion its
``input_dims`` (the fusion's ``kinds:`` picks the fused kinds, default all); the fusion's ``output_dim`` gives
each head its ``input_dim``; a head's label list gives ``num_classes`` / ``num_labels``. Nothing is written back
into the recipe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from faim.components import component_args, component_spec, head_sizes, lookup
from faim.data.targets import TaskSpec
from faim.encoder import Encoder
from faim.encoders.stack import StackedEncoder
from faim.model import WholePostModel, check_modality
from faim.registry import annotated_arguments, build_source_spec, built


def task_specs(model_section: dict[str, Any]) -> list[TaskSpec]:
    """The tasks a recipe's heads define, in recipe order."""
    return [
        TaskSpec(name, lookup("head", spec["type"]).task_type, tuple(str(label) for label in spec["labels"]))
        for name, spec in model_section["heads"].items()
    ]


def recipe_fused_kinds(model_section: dict[str, Any]) -> list[str]:
    """The element kinds the fusion (hence the heads) of a recipe's model reads: those its ``model.fusion.kinds``
    names, else every kind it embeds, as ``build_model`` builds it."""
    return list(model_section["fusion"].get("kinds") or sorted(model_section["encoders"]))


def build_model(
    model_section: dict[str, Any],
    encoder_overrides: dict[str, dict[str, Any]] | None = None,
    make: Callable[..., Any] = built,
) -> WholePostModel:
    """Build the model a ``model:`` section describes.

    Args:
        model_section: ``{"encoders": ..., "fusion": ..., "heads": ...}`` from a validated recipe.
        encoder_overrides: Per-encoder constructor arguments replacing the recipe's (used when loading
            an artifact: build from its saved configs instead of fetching pretrained weights).
        make: What builds each component (an encoder, a stack of them, the fusion, a head), called as
            ``faim.registry.built`` is, the default: ``make(where, cls, *args, **kwargs)``, ``where`` its recipe
            path; another builds it elsewhere (``faim.artifact.built_on_meta``: on the meta device).
    """
    overrides = encoder_overrides or {}
    encoders, routes = {}, {}
    for kind, spec in model_section["encoders"].items():
        if isinstance(spec, str):
            routes[kind] = spec
        elif isinstance(spec, list):
            members = overrides.get(kind, {}).get("members") or [{}] * len(spec)
            stacked = [
                build_encoder(member, f"model.encoders.{kind}[{i}]", members[i], make) for i, member in enumerate(spec)
            ]
            encoders[kind] = make(f"model.encoders.{kind}", StackedEncoder, stacked)
        else:
            encoders[kind] = build_encoder(spec, f"model.encoders.{kind}", overrides.get(kind, {}), make)
    all_routes = {name: name for name in encoders} | routes
    for kind, name in all_routes.items():
        built(f"model.encoders.{kind}", check_modality, kind, encoders[name])
    fusion_spec = model_section["fusion"]
    fused = recipe_fused_kinds(model_section)
    input_dims = {kind: encoders[all_routes[kind]].output_dim for kind in fused}
    fusion = build_component("fusion", fusion_spec, "model.fusion", make, input_dims)
    heads = {}
    for task in task_specs(model_section):
        where = f"model.heads.{task.name}"
        sizes = head_sizes(task.type, task.labels)
        head = model_section["heads"][task.name]
        heads[task.name] = build_component("head", head, where, make, fusion.output_dim, **sizes)
    return WholePostModel(encoders, fusion, heads, routes, fused)


def build_encoder(spec: dict[str, Any], where: str, overrides: dict[str, Any], make: Callable[..., Any]) -> Encoder:
    """The encoder a ``{type: NAME, ...}`` mapping describes, ``overrides`` replacing its arguments, built by ``make``
    (``build_component``)."""
    return build_component("encoder", spec, where, make, **overrides)


def build_component(
    kind: str, spec: dict[str, Any], where: str, make: Callable[..., Any], *sizes: Any, **given: Any
) -> Any:
    """The ``kind`` of component a recipe's ``{type: NAME, ...}`` mapping at ``where`` describes, built by ``make``
    (``built``, or what ``build_model`` is given) with ``sizes`` (derived) and its arguments, those in ``given``
    (derived sizes, or arguments replacing the recipe's) added, each as its annotation asks for it
    (``annotated_arguments``: a path given as its string made a path, a tuple given as a list a tuple)."""
    cls = lookup(kind, spec["type"], where)
    return make(where, cls, *sizes, **annotated_arguments(cls, component_args(kind, spec) | given))


def encoder_spec(encoder: Encoder) -> dict[str, Any] | list[dict[str, Any]]:
    """The recipe entry that builds ``encoder`` again: a mapping, or a list of them for a stack."""
    if isinstance(encoder, StackedEncoder):
        return [component_spec("encoder", member) for member in encoder.members]
    return component_spec("encoder", encoder)


def model_section(model: WholePostModel, tasks: list[TaskSpec]) -> dict[str, Any]:
    """The ``model:`` section ``build_model`` builds ``model`` from again: each component's type and the arguments
    it was built with (sizes left out: they are derived), kinds embedded by another kind's encoder as routes, the
    fused kinds when not every kind is fused, and the heads in the order of ``tasks`` (one per head), which loading
    gives the tasks in.

    Raises:
        ValueError: When a component's class is not registered or an argument is not plain data.
    """
    encoders: dict[str, Any] = {name: encoder_spec(encoder) for name, encoder in model.encoders.items()}
    encoders |= {kind: name for kind, name in model.routes.items() if kind != name}
    fusion = component_spec("fusion", model.fusion)
    if model.fused_kinds != model.kinds:
        fusion["kinds"] = list(model.fused_kinds)
    heads = {
        task.name: component_spec("head", model.heads[task.name]) | {"labels": list(task.labels)} for task in tasks
    }
    return {"encoders": encoders, "fusion": fusion, "heads": heads}


def build_source(data_section: dict[str, Any]) -> Any:
    """Instantiate the data source a ``data:`` section given alone names (a benchmark's dataset); a recipe's is built
    by ``Recipe.data_source``, which names the recipe's file in an error."""
    return build_source_spec(data_section, "data")

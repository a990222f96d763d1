"""Assemble a ``WholePostModel`` from a validated recipe's ``model:`` section.

Sizes flow forward: each fused kind's encoder ``output_dim`` gives the fusion its ``input_dims`` (the fusion's
``kinds:`` picks the fused kinds, default all); the fusion's
``output_dim`` gives each head its ``input_dim``; a head's label list gives ``num_classes`` /
``num_labels``. Nothing is written back into the recipe.
"""

from __future__ import annotations

from typing import Any

from faim.data.targets import TaskSpec
from faim.model import WholePostModel
from faim.registry import lookup


def component_args(spec: dict[str, Any], reserved: tuple[str, ...] = ("type",)) -> dict[str, Any]:
    return {key: value for key, value in spec.items() if key not in reserved}


def task_specs(model_section: dict[str, Any]) -> list[TaskSpec]:
    """The tasks a recipe's heads define, in recipe order."""
    return [
        TaskSpec(name, lookup("head", spec["type"]).task_type, tuple(str(label) for label in spec["labels"]))
        for name, spec in model_section["heads"].items()
    ]


def build_model(
    model_section: dict[str, Any], encoder_overrides: dict[str, dict[str, Any]] | None = None
) -> WholePostModel:
    """Build the model a ``model:`` section describes.

    Args:
        model_section: ``{"encoders": ..., "fusion": ..., "heads": ...}`` from a validated recipe.
        encoder_overrides: Per-encoder constructor arguments replacing the recipe's (used when loading
            an artifact: build from its saved configs instead of fetching pretrained weights).
    """
    overrides = encoder_overrides or {}
    encoders, routes = {}, {}
    for kind, spec in model_section["encoders"].items():
        if isinstance(spec, str):
            routes[kind] = spec
            continue
        cls = lookup("encoder", spec["type"], f"model.encoders.{kind}")
        encoders[kind] = cls(**(component_args(spec) | overrides.get(kind, {})))
    all_routes = {name: name for name in encoders} | routes
    fusion_spec = model_section["fusion"]
    fused = fusion_spec.get("kinds") or sorted(all_routes)
    input_dims = {kind: encoders[all_routes[kind]].output_dim for kind in fused}
    fusion_cls = lookup("fusion", fusion_spec["type"], "model.fusion")
    fusion = fusion_cls(input_dims, **component_args(fusion_spec, ("type", "kinds")))
    heads = {}
    for task in task_specs(model_section):
        spec = model_section["heads"][task.name]
        cls = lookup("head", spec["type"], f"model.heads.{task.name}")
        sizes = {"multiclass": {"num_classes": len(task.labels)}, "multilabel": {"num_labels": len(task.labels)}}
        heads[task.name] = cls(
            fusion.output_dim, **sizes.get(task.type, {}), **component_args(spec, ("type", "labels"))
        )
    return WholePostModel(encoders, fusion, heads, routes, fused)


def build_source(data_section: dict[str, Any]) -> Any:
    """Instantiate the data source a recipe's ``data:`` section names."""
    return lookup("source", data_section["type"], "data")(**component_args(data_section))

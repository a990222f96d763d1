"""``Recipe``: one validated YAML file = one trainable, evaluable model."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from faim.recipe.loader import apply_overrides, load_recipe_dict
from faim.recipe.sections import EvalConfig, TrainConfig
from faim.recipe.validate import validate


@dataclass
class Recipe:
    """A resolved, validated recipe.

    Attributes:
        data: The ``data:`` section (a source ``type:`` and its arguments).
        model: The ``model:`` section (``encoders``, ``fusion``, ``heads``).
        train: The ``train:`` section.
        eval: The ``eval:`` section.
        source: The file it came from (or ``"<dict>"``), for messages.
    """

    data: dict[str, Any]
    model: dict[str, Any]
    train: TrainConfig
    eval: EvalConfig
    source: str = "<dict>"

    @classmethod
    def from_dict(cls, mapping: dict[str, Any], source: str = "<dict>") -> Recipe:
        """Validate a recipe mapping (base and overrides already applied)."""
        validate(mapping, source)
        return cls(
            data=copy.deepcopy(mapping["data"]),
            model=copy.deepcopy(mapping["model"]),
            train=TrainConfig(**mapping.get("train", {})),
            eval=EvalConfig(**mapping.get("eval", {})),
            source=source,
        )

    @classmethod
    def load(cls, name_or_path: str | Path, overrides: list[str] | None = None) -> Recipe:
        """Read a recipe file (or a shipped recipe by name), apply ``base:`` and ``--set`` overrides, validate."""
        mapping, path = load_recipe_dict(name_or_path, overrides)
        return cls.from_dict(mapping, str(path))

    def to_dict(self) -> dict[str, Any]:
        """The resolved recipe as plain data, every default written out."""
        return {
            "data": copy.deepcopy(self.data),
            "model": copy.deepcopy(self.model),
            "train": vars(self.train).copy(),
            "eval": vars(self.eval).copy(),
        }

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def override(self, overrides: list[str]) -> Recipe:
        """A copy with ``a.b=c`` overrides applied and validated again."""
        return Recipe.from_dict(apply_overrides(self.to_dict(), overrides), self.source)


def as_recipe(recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None) -> Recipe:
    """Accept a ``Recipe``, a mapping, a file path or a shipped recipe name."""
    if isinstance(recipe, Recipe):
        return recipe.override(overrides) if overrides else recipe
    if isinstance(recipe, dict):
        return Recipe.from_dict(apply_overrides(recipe, overrides or []))
    return Recipe.load(recipe, overrides)

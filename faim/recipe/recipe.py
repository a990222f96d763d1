"""``Recipe``: one validated YAML file = one trainable, evaluable model."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from faim.recipe.errors import RecipeError
from faim.recipe.loader import (
    dotted_key_remedy,
    in_base,
    load_recipe_dict,
    override_at,
    read_yaml,
    resolve,
    taking_defaults,
)
from faim.recipe.sections import EvalConfig, TrainConfig
from faim.recipe.validate import validate
from faim.registry import BuildError, as_written, build_source_spec


@dataclass
class Recipe:
    """A resolved, validated recipe.

    Attributes:
        data: The ``data:`` section (a source ``type:`` and its arguments); ``None`` in the recipe a model
            composed in code is saved with, which describes its architecture alone.
        model: The ``model:`` section (``encoders``, ``fusion``, ``heads``).
        train: The ``train:`` section.
        eval: The ``eval:`` section.
        source: The file it came from (or ``"<dict>"``), for messages.
    """

    data: dict[str, Any] | None
    model: dict[str, Any]
    train: TrainConfig
    eval: EvalConfig
    source: str = "<dict>"

    @classmethod
    def from_dict(cls, mapping: dict[str, Any], source: str = "<dict>") -> Recipe:
        """Validate a recipe mapping (base and overrides already applied), a null ``train:`` or ``eval:`` section, or
        a null at one of their keys (``train: {seed: null}``), taking its default as in a recipe file
        (``faim.recipe.loader.taking_defaults``)."""
        mapping = taking_defaults(mapping)
        validate(mapping, source)
        return cls(
            data=as_written(mapping.get("data"), keep_tuples=True),
            model=as_written(mapping["model"], keep_tuples=True),
            train=TrainConfig(**mapping.get("train", {})),
            eval=EvalConfig(**mapping.get("eval", {})),
            source=source,
        )

    @classmethod
    def load(cls, name_or_path: str | Path, overrides: list[str] | None = None) -> Recipe:
        """Read a recipe file (or a shipped recipe by name), apply ``base:`` and ``--set`` overrides, validate."""
        mapping, path = load_recipe_dict(name_or_path, overrides)
        return cls.overridden(mapping, str(path), overrides or [], read_yaml(path), path.parent)

    @classmethod
    def overridden(
        cls,
        mapping: dict[str, Any],
        source: str,
        overrides: list[str],
        written: dict[str, Any] | None = None,
        folder: Path = Path(),
    ) -> Recipe:
        """``from_dict`` of a mapping ``overrides`` were applied to, ``written`` (in ``folder``) merged onto its base
        where given; an error at a YAML path one of them set names that override after ``source`` (``FILE: --set
        KEY.PATH=VALUE: key.path: ...``), saying how to write a key holding a dot where the override split one
        (``dotted_key_remedy``), and one at a path the base writes, the base's file (``in_base``)."""
        try:
            return cls.from_dict(mapping, source)
        except RecipeError as error:
            text = override_at(error.path, overrides)
            if text is None:
                raise error if written is None else in_base(error, written, folder, mapping) from None
            problem = error.problem + dotted_key_remedy(error, text)
            raise RecipeError(f"{source}: --set {text}", error.path, problem) from None

    def to_dict(self) -> dict[str, Any]:
        """The resolved recipe as plain data: ``data`` and ``model`` as written, every default of ``train`` and
        ``eval`` written out."""
        sections = {"data": copy.deepcopy(self.data)} if self.data is not None else {}
        return sections | {
            "model": copy.deepcopy(self.model),
            "train": vars(self.train).copy(),
            "eval": vars(self.eval).copy(),
        }

    @property
    def data_section(self) -> dict[str, Any]:
        """The ``data:`` section, which training and evaluating on the recipe's splits need.

        Raises:
            RecipeError: When the recipe has none (it describes an architecture alone).
        """
        if self.data is None:
            raise RecipeError(self.source, "data", "missing section: this recipe describes a model alone; give data")
        return self.data

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        """Build, within it, what the recipe describes (its model, its data source): a component its constructor
        refuses, which ``faim.registry.built`` names by its recipe path alone, is refused naming the recipe's file
        too (``FILE: model.heads.hate: ...``), as a recipe's every other error is.

        Raises:
            RecipeError: For a ``faim.registry.BuildError`` raised within; its cause is the error the constructor
                raised, as the ``BuildError``'s is (the ``BuildError`` itself where it raised one).
        """
        try:
            yield
        except BuildError as error:
            raise RecipeError(self.source, "", str(error)) from error.__cause__ or error

    def data_source(self) -> Any:
        """The data source the recipe's ``data:`` section names, built, which training and evaluating on the
        recipe's splits read.

        Raises:
            RecipeError: When the recipe has no ``data:`` section (``data_section``), or naming the recipe's file and
                the source's recipe path for an argument its constructor refuses (``building``: ``FILE: data:
                concat: evaluate_on must be one of ...``).
        """
        with self.building():
            return build_source_spec(self.data_section, "data")

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    def override(self, overrides: list[str]) -> Recipe:
        """A copy with ``a.b=c`` overrides applied and validated again."""
        return Recipe.overridden(resolve(self.to_dict(), self.source, Path(), overrides), self.source, overrides)


def as_recipe(recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None) -> Recipe:
    """Accept a ``Recipe``, a ``dict``, a file path or a shipped recipe name. A dict's ``base:`` names a shipped
    recipe or a file relative to the working directory, as a file's does (see ``base_of``).

    Raises:
        TypeError: Given anything else (``None``, a mapping that is not a ``dict``), naming its type.
    """
    if isinstance(recipe, Recipe):
        return recipe.override(overrides) if overrides else recipe
    if isinstance(recipe, dict):
        resolved = resolve(recipe, "<dict>", Path(), overrides or [])
        return Recipe.overridden(resolved, "<dict>", overrides or [], recipe)
    if not isinstance(recipe, (str, os.PathLike)):
        raise TypeError(
            f"expected a recipe (a Recipe, a dict, a file or a shipped recipe name), got {type(recipe).__name__}"
        )
    return Recipe.load(recipe, overrides)

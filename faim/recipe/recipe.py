"""``Recipe``: one validated YAML file = one trainable, evaluable model."""

from __future__ import annotations

import contextlib
import copy
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from faim.recipe.errors import RecipeError
from faim.recipe.loader import (
    Written,
    attributed,
    base_of,
    labels_as_words,
    load_recipe_dict,
    python_values,
    resolve,
    taking_defaults,
)
from faim.recipe.sections import EvalConfig, TrainConfig
from faim.recipe.validate import validate
from faim.registry import BuildError, SavedModelWarning, as_written, build_source_spec, rebuilding_saved


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
        overrides: The ``--set`` overrides applied to it, in order, which an error names where one set its key
            (``refusal``).
        written: The recipe as its file (or mapping) writes it, with its base as read with it, by which an error
            names where the base set its key (``refusal``); ``None`` where it is not known.
    """

    data: dict[str, Any] | None
    model: dict[str, Any]
    train: TrainConfig
    eval: EvalConfig
    source: str = "<dict>"
    overrides: tuple[str, ...] = field(default=(), compare=False, repr=False)
    written: Written | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_dict(cls, mapping: dict[str, Any], source: str = "<dict>") -> Recipe:
        """Validate a recipe mapping (base and overrides already applied), a null ``train:`` or ``eval:`` section, or
        a null at one of their keys (``train: {seed: null}``), taking its default as in a recipe file
        (``faim.recipe.loader.taking_defaults``); a numpy number or array in it read as the Python number or list it
        holds (``python_values``)."""
        mapping = taking_defaults(python_values(mapping))
        validate(mapping, source)
        return cls(
            data=as_written(mapping.get("data"), keep_tuples=True),
            model=as_written(mapping["model"], keep_tuples=True),
            train=TrainConfig(**mapping.get("train", {})),
            eval=EvalConfig(**mapping.get("eval", {})),
            source=source,
        )

    @classmethod
    def recorded(cls, mapping: dict[str, Any], source: str = "<dict>") -> Recipe:
        """``from_dict`` of the recipe mapping a model was saved or a run recorded with, read as loading the model
        reads its recipe (``faim.artifact.read_recipe``): a head label written ``true`` or ``false`` as that word
        (``labels_as_words``), and, unsaid, an argument faim came to refuse since, or a setting a new run is refused
        for as training starts, taken as it was (``faim.registry.rebuilding_saved``)."""
        with rebuilding_saved(source), warnings.catch_warnings():
            warnings.simplefilter("ignore", SavedModelWarning)
            return cls.from_dict(labels_as_words(copy.deepcopy(mapping)), source)

    @classmethod
    def load(cls, name_or_path: str | Path, overrides: list[str] | None = None) -> Recipe:
        """Read a recipe file (or a shipped recipe by name), apply ``base:`` and ``--set`` overrides, validate."""
        mapping, path, written = load_recipe_dict(name_or_path, overrides)
        return cls.overridden(mapping, str(path), overrides or [], written)

    @classmethod
    def overridden(
        cls,
        mapping: dict[str, Any],
        source: str,
        overrides: list[str],
        written: Written | None = None,
    ) -> Recipe:
        """``from_dict`` of a mapping ``overrides`` were applied to, ``written`` (with its base as read) merged onto its
        base where given, which it keeps to name where a key was set (``refusal``); an error at a YAML path one of them
        set names that override after ``source`` (``FILE: --set KEY.PATH=VALUE: key.path: ...``), and one at a path
        the base writes, the base's file (``faim.recipe.loader.attributed``)."""
        try:
            recipe = cls.from_dict(mapping, source)
        except RecipeError as error:
            raise attributed(error, overrides, written, mapping) from None
        return replace(recipe, overrides=tuple(overrides), written=written)

    def refusal(self, error: RecipeError) -> RecipeError:
        """``error``, raised using this recipe (``error.source`` its ``source``), naming the override or the base's
        file that set the YAML path ``error.path`` where one did (``faim.recipe.loader.attributed``), as an error
        reading it does; any other error as it is."""
        if error.source != self.source:
            return error
        return attributed(error, self.overrides, self.written, self.to_dict())

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
        """Build or train, within it, what the recipe describes (its model, its data source): a component its
        constructor refuses, which ``faim.registry.built`` names by its recipe path alone, is refused naming the
        recipe's file too (``FILE: model.heads.hate: ...``), as a recipe's every other error is, and that error, or
        one of the recipe's raised within, names the override or the base's file that set its key (``refusal``).

        Raises:
            RecipeError: For a ``faim.registry.BuildError`` raised within (whose message starts with the recipe path);
                its cause is the error the constructor raised, as the ``BuildError``'s is (the ``BuildError`` itself
                where it raised one). One raised within, naming what set its key.
        """
        try:
            yield
        except BuildError as error:
            path, _, problem = str(error).partition(": ")
            raise self.refusal(RecipeError(self.source, path, problem)) from error.__cause__ or error
        except RecipeError as error:
            refused = self.refusal(error)
            if refused is error:
                raise
            raise refused from None

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
        resolved = resolve(Written(self.to_dict()), self.source, overrides)
        return Recipe.overridden(resolved, self.source, [*self.overrides, *overrides], self.written)


def as_recipe(recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None) -> Recipe:
    """Accept a ``Recipe``, a ``dict``, a file path or a shipped recipe name. A dict's ``base:`` names a shipped
    recipe or a file relative to the working directory, as a file's does (see ``base_of``).

    Raises:
        TypeError: Given anything else (``None``, a mapping that is not a ``dict``), naming its type.
    """
    if isinstance(recipe, Recipe):
        return recipe.override(overrides) if overrides else recipe
    if isinstance(recipe, dict):
        written = Written(python_values(copy.deepcopy(recipe)), base_of(recipe, "<dict>", Path()))
        resolved = resolve(written, "<dict>", overrides or [])
        return Recipe.overridden(resolved, "<dict>", overrides or [], written)
    if not isinstance(recipe, (str, os.PathLike)):
        raise TypeError(
            f"expected a recipe (a Recipe, a dict, a file or a shipped recipe name), got {type(recipe).__name__}"
        )
    return Recipe.load(recipe, overrides)

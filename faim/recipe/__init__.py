"""Recipes: YAML → validated ``Recipe``."""

from faim.recipe.errors import RecipeError
from faim.recipe.recipe import Recipe, as_recipe

__all__ = ["Recipe", "RecipeError", "as_recipe"]

"""faim: whole-post integrity embeddings from pluggable encoders, fusion and task heads.

Python API::

    import faim
    detector = faim.train("hate_text_frozen")            # a recipe file or a shipped recipe name
    detector = faim.load("runs/hate/model")               # a saved artifact (hash-checked, no pickle)
    detector.score([{"id": "1", "text": "..."}])          # per-task probabilities
    detector.embed(posts)                                 # whole-post embeddings [N, D]
    faim.score_dump("runs/hate/model", "dump.jsonl", "scores/")   # batch scoring, resumable
"""

from __future__ import annotations

__version__ = "0.1.0"

from pathlib import Path
from typing import Any

from faim.artifact import load_artifact
from faim.build import build_model, task_specs
from faim.data.post import Post
from faim.detector import Detector
from faim.model import WholePostModel
from faim.recipe import Recipe, RecipeError, as_recipe
from faim.registry import register_encoder, register_fusion, register_head, register_source
from faim.scoring import ScoreSummary, ScoringOptions, score_dump


def build(recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None) -> Detector:
    """An untrained ``Detector`` from a recipe (file, shipped name, mapping or ``Recipe``)."""
    resolved = as_recipe(recipe, overrides)
    return Detector(build_model(resolved.model), task_specs(resolved.model), resolved)


def train(
    recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None, resume: bool = False
) -> Detector | None:
    """Train, calibrate, save (to ``<train.output_dir>/model``) and evaluate; returns the trained detector.

    Returns ``None`` in the non-zero ranks of a multi-process run.
    """
    from faim.training.run import train as run_training  # Lightning loads only when training

    result = run_training(recipe, overrides, resume)
    return result.detector if result else None


def load(path: str | Path) -> Detector:
    """Load a saved model directory; every file's sha256 is checked and nothing is unpickled."""
    return load_artifact(path)


__all__ = [
    "Detector",
    "Post",
    "Recipe",
    "RecipeError",
    "ScoreSummary",
    "ScoringOptions",
    "WholePostModel",
    "build",
    "load",
    "register_encoder",
    "register_fusion",
    "register_head",
    "register_source",
    "score_dump",
    "train",
]

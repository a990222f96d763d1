"""faim: whole-post integrity embeddings from pluggable encoders, fusion and task heads.

Python API::

    import faim
    detector = faim.train("hate_text_frozen")            # a recipe file or a shipped recipe name
    detector = faim.load("runs/hate/model")               # a saved artifact (hash-checked, no pickle)
    detector.score([{"id": "1", "text": "..."}])          # per-task probabilities
    detector.embed(posts)                                 # whole-post embeddings [N, D]
    faim.score_dump("runs/hate/model", "dump.jsonl", "scores/")   # batch scoring, resumable

Every module of faim lives inside this package, from the ground floor (``faim.registry``, ``faim.data.post``)
up, and Python runs this file before any of them. So the names above are looked up when first used (PEP 562):
importing one component, ``faim.fusion.concat`` say, loads that component and the ground floor, not the
training stack, the scoring engines and the evaluation package these names come from.
"""

from __future__ import annotations

import importlib
from typing import Any

from faim.version import __version__

EXPORTS = {
    "Detector": "faim.detector",
    "FaimWarning": "faim.notices",
    "Post": "faim.data.post",
    "Recipe": "faim.recipe",
    "RecipeError": "faim.recipe",
    "ScoreSummary": "faim.scoring.runner",
    "ScoringOptions": "faim.scoring.options",
    "WholePostModel": "faim.model",
    "build": "faim.api",
    "load": "faim.api",
    "register_encoder": "faim.components",
    "register_fusion": "faim.components",
    "register_head": "faim.components",
    "register_source": "faim.components",
    "score_dump": "faim.scoring.engine",
    "train": "faim.api",
}
"""Each name of the Python API and the module that defines it."""

__all__ = [*EXPORTS, "__version__"]


def __getattr__(name: str) -> Any:
    if name not in EXPORTS:
        raise AttributeError(f"module 'faim' has no attribute {name!r}")
    value = getattr(importlib.import_module(EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(EXPORTS))

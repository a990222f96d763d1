"""Scoring exported models (``faim export``) with onnxruntime, ``tokenizers``, Pillow and numpy: no torch,
transformers or timm is imported, so it starts fast and runs where torch is not installed
(``pip install 'faim-sdk[runtime]'``)::

    import faim.runtime
    model = faim.runtime.load("exports/hate")
    model.score([{"id": "1", "text": "..."}])   # as Detector.score
    model.embed(posts)                          # as Detector.embed

``load`` and ``ExportedModel`` are imported from ``faim.runtime.model``, which imports onnxruntime, when first asked
for: reading an export's manifest (``faim.runtime.bundle``) needs no onnxruntime, so scoring a saved model with torch,
which refuses an export by its manifest, runs where onnxruntime is not installed.
"""

from __future__ import annotations

import importlib
from typing import Any

from faim.data.elements import PostError
from faim.runtime.bundle import ExportError

ONNX_RUNTIME = ("ExportedModel", "load")
"""The names ``faim.runtime.model`` gives, imported with onnxruntime when first asked for."""

__all__ = ["ExportError", "PostError", *ONNX_RUNTIME]


SUBMODULES = ("bundle", "model", "pieces", "preprocess")
"""The modules of the package, each imported when first asked for as an attribute (``faim.runtime.model``), as an
import of the package that imported them all made them attributes of it."""


def __getattr__(name: str) -> Any:
    if name in SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name not in ONNX_RUNTIME:
        raise AttributeError(f"module 'faim.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module("faim.runtime.model"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(ONNX_RUNTIME) | set(SUBMODULES))

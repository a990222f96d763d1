"""Scoring exported models (``faim export``) with onnxruntime, ``tokenizers``, Pillow and numpy: no torch,
transformers or timm is imported, so it starts fast and runs where torch is not installed
(``pip install 'faim-sdk[runtime]'``)::

    import faim.runtime
    model = faim.runtime.load("exports/hate")
    model.score([{"id": "1", "text": "..."}])   # as Detector.score
    model.embed(posts)                          # as Detector.embed

``load`` and ``ExportedModel`` are imported from ``faim.runtime.model``, which imports onnxruntime, when first asked
for: reading an export's manifest (``faim.runtime.bundle``) needs no onnxruntime, so scoring a saved model with torch,
which refuses an export by its manifest, runs where onnxruntime is not installed. There ``faim.runtime.load`` raises
``RuntimeNotInstalled``, an ``AttributeError`` naming onnxruntime and its install (``hasattr`` answers False), and
``from faim.runtime import load`` Python's ``ImportError``; ``from faim.runtime.model import load`` raises the
``ModuleNotFoundError`` of onnxruntime.
"""

from __future__ import annotations

import importlib
from typing import Any

from faim.data.elements import PostError
from faim.runtime.bundle import ExportError

ONNX_RUNTIME = ("ExportedModel", "load")
"""The names ``faim.runtime.model`` gives, imported with onnxruntime when first asked for."""

__all__ = ["ExportError", "PostError", "RuntimeNotInstalled", *ONNX_RUNTIME]


SUBMODULES = ("bundle", "model", "pieces", "preprocess")
"""The modules of the package, each imported when first asked for as an attribute (``faim.runtime.model``), as an
import of the package that imported them all made them attributes of it."""


INSTALL = "pip install 'faim-sdk[runtime]'"
"""What installs the packages the runtime needs beyond faim's own (onnxruntime, tokenizers)."""


class RuntimeNotInstalled(AttributeError):
    """An attribute of the package asked for (``load``, ``ExportedModel``, a module) whose import needs a package
    that is not installed: an ``AttributeError``, so that ``hasattr``, ``getattr`` with a default and ``inspect`` find
    no such attribute, whose message names the package and its install; the import's ``ModuleNotFoundError`` is its
    cause. Importing the module itself (``import faim.runtime.model``) raises that ``ModuleNotFoundError``."""


def lazy_import(module: str, name: str) -> Any:
    """``module`` imported, for the package's attribute ``name``.

    Raises:
        RuntimeNotInstalled: Naming ``name``, the package missing and its install, when a package the import needs is
            not installed (a module of faim itself missing, a broken install, raises its ``ModuleNotFoundError``).
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        package = (error.name or "").split(".")[0]
        if package in ("", "faim"):
            raise
        raise RuntimeNotInstalled(
            f"faim.runtime.{name} needs the Python package {package!r}, not installed: {INSTALL}", name=name
        ) from error


def __getattr__(name: str) -> Any:
    if name in SUBMODULES:
        return lazy_import(f"{__name__}.{name}", name)
    if name not in ONNX_RUNTIME:
        raise AttributeError(f"module 'faim.runtime' has no attribute {name!r}")
    value = getattr(lazy_import("faim.runtime.model", name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(ONNX_RUNTIME) | set(SUBMODULES))

"""Scoring exported models (``faim export``) with onnxruntime, ``tokenizers``, Pillow and numpy: no torch,
transformers or timm is imported, so it starts fast and runs where torch is not installed
(``pip install 'faim-sdk[runtime]'``)::

    import faim.runtime
    model = faim.runtime.load("exports/hate")
    model.score([{"id": "1", "text": "..."}])   # as Detector.score
    model.embed(posts)                          # as Detector.embed
"""

from __future__ import annotations

from pathlib import Path

from faim.runtime.bundle import ExportError
from faim.runtime.model import ExportedModel, PostError


def load(directory: str | Path) -> ExportedModel:
    """Load an exported model; every file's sha256 is checked and nothing is unpickled.

    Raises:
        ExportError: When ``directory`` is not an export of this format, or a file is missing or modified.
    """
    return ExportedModel(directory)


__all__ = ["ExportError", "ExportedModel", "PostError", "load"]

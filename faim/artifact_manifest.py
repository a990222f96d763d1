"""A saved model's manifest, ``faim.json`` (see ``faim.artifact``), read and checked without torch: scoring reads it
to know what a run is before any worker, or the torch-free runtime, loads the model."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

from faim.file_digests import check_digests, listed_file
from faim.registry import a_type

MANIFEST = "faim.json"
RECIPE = "recipe.yaml"
"""The recipe a saved model holds beside its manifest (``faim.artifact``)."""
WEIGHTS = "model.safetensors"
"""The weights a saved model holds beside its manifest."""
EXPORT_MANIFEST = "faim-export.json"
"""The manifest an export (``faim export``, ``faim.runtime.bundle``) has instead; each of the two is named where the
other is given."""
GRAPH_FORMATS = ("onnx", "pt2")
"""The formats of an export's graphs (its manifest's ``graph_format``): ONNX graphs (torch.onnx's dynamo exporter) for
onnxruntime, or torch.export's ExportedPrograms for torch."""
RUN_MODEL = "model"
"""The folder of a training run's output folder (``train.output_dir``) its model is saved in."""
FORMAT_VERSION = 1


class ArtifactError(ValueError):
    """An artifact directory that is incomplete, modified, or from an incompatible version."""


REQUIRED = {"format", "files", "encoders", "tasks", "preprocessing"}
"""The keys every saved model's manifest holds."""


def folder_given(directory: Any, holding: str) -> Path:
    """``directory``, the folder of ``holding`` (``"a saved model's"``, ``"an export's"``) given to load it, as a path.

    Raises:
        TypeError: Saying that such a folder is expected and naming the type of a ``directory`` that is no path
            (``None``, a number, bytes), which pathlib would refuse naming neither.
        ValueError: For an empty ``directory`` (a variable not set), which pathlib reads as the working directory.
    """
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"expected {holding} folder (a str or a Path), got {a_type(directory)}")
    if not os.fspath(directory):
        raise ValueError(f"expected {holding} folder, got an empty path (a variable not set?); name a folder, . for "
                         "this one")  # fmt: skip
    return Path(directory)


def file_not_folder(path: Path) -> str:
    """What to say of ``path``, a file given where the folder of a saved model or an export is read: that it is a
    file, and, for either's manifest, the folder holding it to name instead."""
    hint = f"; name the folder holding it: {path.parent}" if path.name in (MANIFEST, EXPORT_MANIFEST) else ""
    return f"{path}: a file, not a folder{hint}"


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of the saved model in ``directory``.

    Raises:
        ArtifactError: Naming ``directory`` when it does not exist or is a file, or the file, when there is none
            (saying so of an export, and naming the model of a training run's folder), it is not a manifest, or of
            another format.
    """
    path = directory / MANIFEST
    if not directory.exists():
        raise ArtifactError(f"{directory}: does not exist")
    if not directory.is_dir():
        raise ArtifactError(file_not_folder(directory))
    if not path.is_file() and is_export(directory):
        raise ArtifactError(
            f"{directory}: an export written by faim export, not a saved model; this needs the saved model faim train "
            f"wrote (with {MANIFEST})"
        )
    if not path.is_file() and (directory / RUN_MODEL / MANIFEST).is_file():
        raise ArtifactError(
            f"{directory}: a training run's folder, not a saved model; its model is {directory / RUN_MODEL}"
        )
    if not path.is_file():
        raise ArtifactError(f"{directory}: not a faim model (no {MANIFEST})")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArtifactError(f"{path}: not a faim model's manifest ({error})") from None
    if not isinstance(manifest, dict) or not REQUIRED <= manifest.keys():
        missing = sorted(REQUIRED - manifest.keys()) if isinstance(manifest, dict) else sorted(REQUIRED)
        raise ArtifactError(f"{path}: not a faim model's manifest (no {', '.join(missing)})")
    if manifest.get("format") != FORMAT_VERSION:
        raise ArtifactError(
            f"{path}: artifact format {manifest.get('format')} is not supported (expected {FORMAT_VERSION})"
        )
    return manifest


def fused_kinds(directory: Path, manifest: dict[str, Any]) -> list[str]:
    """The element kinds the fusion, hence the heads, of the saved model in ``directory`` reads, sorted: those its
    ``manifest`` (its ``faim.json``, as read) names, or, in a model saved before manifests named them, those its
    recipe's ``model.fusion.kinds`` names, else every kind it embeds, as loading it builds its fusion
    (``faim.assembly.build_model``). A kind it embeds but does not fuse (a picture that only links posts for pooling)
    is read by no scoring run that does not pool.

    Raises:
        OSError: When an older model's ``recipe.yaml`` cannot be read.
        ArtifactError: When its ``manifest`` does not list it (``own_file``).
    """
    if "fused_kinds" in manifest:
        return sorted(manifest["fused_kinds"])
    recipe = yaml.safe_load(own_file(directory, manifest, RECIPE).read_text(encoding="utf-8"))
    return sorted(set(recipe["model"]["fusion"].get("kinds") or manifest["element_kinds"]))


def read_meta_fields(directory: Path, manifest: dict[str, Any]) -> list[str]:
    """The ``Post.meta`` fields the fusion of the saved model or export in ``directory`` reads (through its metadata
    encoder's ``faim.preprocess.meta.MetaRows``, each of a stack's), as its ``manifest`` (as read) says: an export's,
    in its metadata encoder's parts' preprocessing (``type: meta``); a saved model's, in its recipe's
    ``meta_numeric`` entries of ``model.encoders.meta``. None where the fusion reads no metadata.

    Raises:
        OSError: When a saved model's ``recipe.yaml`` cannot be read.
        ArtifactError: When its ``manifest`` does not list it (``own_file``).
    """
    if is_export(directory):
        name = manifest["kinds"].get("meta")
        specs = [part["preprocess"] for part in manifest["encoders"][name]["parts"]] if name else []
        return [field for spec in specs if spec["type"] == "meta" for field in spec["fields"]]
    if "meta" not in fused_kinds(directory, manifest):
        return []
    recipe = yaml.safe_load(own_file(directory, manifest, RECIPE).read_text(encoding="utf-8"))
    entry = recipe["model"]["encoders"]["meta"]
    specs = entry if isinstance(entry, list) else [entry]  # a stack's members, or the one encoder
    return [field for spec in specs if spec.get("type") == "meta_numeric" for field in spec["fields"]]


def is_export(directory: Path) -> bool:
    """Whether ``directory`` holds an export (``faim export``'s) rather than a saved model."""
    return (directory / EXPORT_MANIFEST).is_file()


def verify_files(directory: Path, manifest: dict[str, Any], only: Path | None = None) -> None:
    """Check the manifest's seal and the sha256 of every file it lists, or of ``only`` (``own_file``'s) alone."""
    check_digests(directory, manifest, MANIFEST, ArtifactError, only)


def own_file(directory: Path, manifest: dict[str, Any], name: str) -> Path:
    """The file ``name`` (``RECIPE``, ``WEIGHTS``) of the saved model in ``directory``, which its ``manifest`` must
    list, so that ``verify_files`` checks its sha256 before it is read.

    Raises:
        ArtifactError: Naming the manifest and ``name`` when the manifest does not list it.
    """
    try:
        return listed_file(directory, manifest["files"], None, name)
    except ValueError as error:
        raise ArtifactError(f"{directory / MANIFEST}: {error}") from None

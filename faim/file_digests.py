"""The sha256 listing of a directory's files that saved models and exported models carry, and its check on load:
a modified or missing file fails with a message naming it. The manifest holding the listing is sealed with the sha256
of its own content, so an edited threshold or calibration fails too. Needs nothing beyond the standard library."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from faim.weights import sha256_file


def file_digests(root: Path) -> dict[str, str]:
    """Relative path (parts joined by ``/`` on every system) → sha256 of every file under ``root``, sorted by path."""
    return {path.relative_to(root).as_posix(): sha256_file(path) for path in sorted(root.rglob("*")) if path.is_file()}


SEAL = "manifest_sha256"
"""The key under which a manifest holds the sha256 of the rest of its content."""


def content_digest(manifest: dict[str, Any]) -> str:
    """The sha256 of ``manifest``'s content but its seal, written as canonical JSON (keys sorted, no spaces)."""
    content = {key: value for key, value in manifest.items() if key != SEAL}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def sealed(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` with the sha256 of its content under ``SEAL``: what a saved or exported model writes."""
    return manifest | {SEAL: content_digest(manifest)}


def check_digests(
    root: Path, manifest: dict[str, Any], listing: str, error: type[Exception], only: Path | None = None
) -> None:
    """Raise ``error`` naming ``listing`` (the manifest's file under ``root``) when its content differs from its seal
    (thresholds, calibration or settings edited after it was written; a manifest written before manifests were sealed
    has none and is read as it is), naming the first name it lists (relative path → sha256 under ``"files"``) that is
    not a relative path inside ``root`` (``portable``; before any file is read), or naming the first file it lists
    that is missing or whose sha256 differs. With ``only`` (a listed file, as ``listed_file`` gives it), that file's
    sha256 alone is checked, not every file's: what reading that one file needs."""
    if SEAL in manifest and manifest[SEAL] != content_digest(manifest):
        raise error(
            f"{root / listing}: modified after it was written (its tasks, thresholds, calibration or settings); "
            "faim calibrate writes a copy of a saved model with other thresholds and calibration (export that copy "
            "for an export)"
        )
    for relative in manifest["files"]:
        if portable(relative) is None:
            raise error(f"{root / listing}: files: {relative!r} is not a path inside {root}")
    for relative, expected in manifest["files"].items():
        path = root / portable(relative)
        if only is not None and path != only:
            continue
        if not path.is_file():
            raise error(f"{path}: listed in {listing} but missing")
        if sha256_file(path) != expected:
            raise error(f"{path}: sha256 does not match {listing}; the file was modified or corrupted")


def portable(name: Any) -> str | None:
    """``name``, a path a manifest holds relative to its directory, with ``/`` between its parts and a backslash read
    as one, as Windows reads it (a model an older faim saved there lists ``encoders\\text\\vocab.json``); ``None``
    where it is no string or leads outside the directory on some system: absolute, with a drive (``C:x.onnx``) or a
    ``..`` part (``..\\x.onnx``)."""
    if not isinstance(name, str) or PureWindowsPath(name).drive:
        return None
    path = PurePosixPath(name.replace("\\", "/"))
    return None if path.is_absolute() or ".." in path.parts else path.as_posix()


def listed_file(directory: Path, listing: Mapping[str, str], setting: str | None, name: Any) -> Path:
    """The file of the model in ``directory`` (saved or exported) that its manifest's ``setting`` names ``name``,
    which must be one its ``files`` ``listing`` holds (the files whose sha256 ``check_digests`` checks), the two
    compared as ``portable`` writes them, and inside ``directory``, so that no file is read unchecked or from
    elsewhere. ``setting`` is ``None`` for a file no entry names, whose name the model's layout fixes (a saved
    model's ``model.safetensors``). To find many, ``file_finder`` writes the listing's names once.

    Raises:
        ValueError: Naming ``setting``, where there is one, and ``name`` (the caller names the manifest and its
            entry) when ``name`` is not a relative path inside ``directory`` that the listing holds:
            ``graph 'x.onnx' is not a file listed under files``, ``'recipe.yaml' is not a file listed under files``.
    """
    return file_finder(directory, listing)(setting, name)


def file_finder(directory: Path, listing: Mapping[str, str]) -> Callable[[str | None, Any], Path]:
    """``listed_file`` of ``directory`` and ``listing`` as a function of ``setting`` and ``name``, the listing's names
    written as ``portable`` writes them once for every file it finds, not once per file (a folder of hundreds of
    files a model lists would take their square)."""
    listed = {portable(entry) for entry in listing} - {None}

    def find(setting: str | None, name: Any) -> Path:
        inside = portable(name)
        if inside is None or inside not in listed:
            named = f"{setting} {name!r}" if setting is not None else repr(name)
            raise ValueError(f"{named} is not a file listed under files")
        return directory / inside

    return find

"""Writing an export all or nothing: into a fresh folder beside the target, which replaces the target only once
everything is written, and is removed when anything fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from faim.artifact_manifest import EXPORT_MANIFEST
from faim.file_digests import file_digests, sealed
from faim.folders import check_replaceable, replacing

EXPORT_STAGING = ".faim-export-"
"""How the names of the folders an export is written in beside its place, and of those its place is moved aside
into as it is replaced, begin (``faim.folders.staging_folder``): one prefix, so what a stopped export left is found."""


@contextmanager
def staged(target: Path) -> Iterator[Path]:
    """Yield a fresh folder beside ``target`` to write into; on success it replaces ``target`` (an export, if
    anything), on an error it is removed and ``target`` is left as it was.

    Raises:
        FileExistsError: If ``target`` holds anything but an export, or files besides those an export there lists
            (``faim.folders.check_replaceable``).
    """
    check_replaceable(target, EXPORT_MANIFEST)
    with replacing(target, EXPORT_STAGING) as staging:
        yield staging


def write_manifest(staging: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest`` with the sha256 of every other file in ``staging`` under ``"files"``, sealed
    (``faim.file_digests.sealed``)."""
    (staging / EXPORT_MANIFEST).unlink(missing_ok=True)
    manifest = sealed(manifest | {"files": file_digests(staging)})
    (staging / EXPORT_MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")

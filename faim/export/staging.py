"""Writing an export all or nothing: into a fresh folder beside the target, which replaces the target only once
everything is written, and is removed when anything fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from faim.artifact_manifest import EXPORT_MANIFEST
from faim.file_digests import file_digests, portable, sealed
from faim.folders import check_replaceable, named_folder, replacing

EXPORT_STAGING = ".faim-export-"
"""How the names of the folders an export is written in beside its place, and of those its place is moved aside
into as it is replaced, begin (``faim.folders.staging_folder``): one prefix, so what a stopped export left is found."""


@contextmanager
def staged(target: Path) -> Iterator[Path]:
    """Yield a fresh folder beside ``target`` to write into; on success it replaces ``target`` (an export, if
    anything), on an error it is removed and ``target`` is left as it was.

    Raises:
        FileExistsError: If ``target`` holds anything but an export, or files besides those an export there lists
            (``check_export_replaceable``).
    """
    check_export_replaceable(target)
    with replacing(target, EXPORT_STAGING) as staging:
        yield staging


def check_export_replaceable(target: Path) -> None:
    """Refuse a ``target`` that writing an export must not remove: what ``faim.folders.check_replaceable`` refuses,
    and an earlier export holding files its manifest does not list (a scoring run's output or notes written into it),
    which replacing it would delete with it. An export whose manifest cannot be read is replaced as it is.

    Raises:
        FileExistsError: Naming ``target`` and the files its manifest does not list (the first three, then a count).
        NotADirectoryError: As ``check_replaceable``.
    """
    check_replaceable(target, EXPORT_MANIFEST)
    folder = named_folder(target)
    try:
        listed = {
            portable(name) for name in json.loads((folder / EXPORT_MANIFEST).read_text(encoding="utf-8"))["files"]
        }
    except (OSError, ValueError, KeyError, TypeError):  # no export there, or one too damaged to say what it wrote
        return
    found = (path.relative_to(folder).as_posix() for path in sorted(folder.rglob("*")) if path.is_file())
    if unlisted := [name for name in found if name not in listed and name != EXPORT_MANIFEST]:
        more = f", and {len(unlisted) - 3} more" if len(unlisted) > 3 else ""
        raise FileExistsError(
            f"{target}: holds files faim export did not write ({', '.join(unlisted[:3])}{more}); nothing was written "
            "or removed, move them out or name a new or empty directory"
        )


def write_manifest(staging: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest`` with the sha256 of every other file in ``staging`` under ``"files"``, sealed
    (``faim.file_digests.sealed``)."""
    (staging / EXPORT_MANIFEST).unlink(missing_ok=True)
    manifest = sealed(manifest | {"files": file_digests(staging)})
    (staging / EXPORT_MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")

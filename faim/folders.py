"""Folders faim writes into: refusing a path that is a file, and replacing a folder faim wrote (a model, an export)
with one freshly written beside it, and never a folder it did not write; a file written whole or not at all."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def check_folder_path(path: Path) -> None:
    """Refuse a folder to write into (``path``, made if absent) that is a file or lies inside one.

    Raises:
        NotADirectoryError: Naming the file, and ``path`` where that lies inside it.
    """
    for folder in (path, *path.parents):
        if folder.is_dir():
            return
        if folder.exists():
            inside = "" if folder == path else f" (it would hold {path})"
            raise NotADirectoryError(f"{folder}: is a file, not a folder{inside}; name a folder to write into")


def staging_folder(target: Path, prefix: str) -> Path:
    """A new empty folder beside ``target`` to write into before ``replace_folder`` puts it in its place, with the
    permissions a folder made by ``mkdir`` gets under the process's umask (``tempfile`` makes it readable by its
    owner alone, and a model or export is read by other users: a service, a scoring job), named at random."""
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        staging = target.parent / f"{prefix}{secrets.token_hex(8)}"
        try:
            staging.mkdir()  # the umask applies, as to any folder made
            return staging
        except FileExistsError:
            continue


@contextmanager
def replacing(target: Path, prefix: str) -> Iterator[Path]:
    """Yield a new folder beside ``target`` to write into (``staging_folder``); on success it replaces ``target``
    (``replace_folder``: check first that it may, ``check_replaceable``), on an error it is removed and ``target`` is
    left as it was."""
    staging = staging_folder(target, prefix)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    replace_folder(staging, target)


def write_text_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) through a file beside it that then takes its place, so that a write cut
    short (a full disk, a run stopped part way) leaves what ``path`` held before, never part of ``text``; the file
    gets the permissions ``open`` gives under the process's umask."""
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def umask_permissions(path: Path) -> None:
    """Give the file ``path`` the permissions a file made by ``open`` beside it gets under the process's umask, where
    its writer made it readable by its owner alone (safetensors writes through a temporary file, as ``tempfile`` makes
    them; a model or export is read by other users)."""
    probe = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    probe.touch(exist_ok=False)  # the umask applies, as to any file made
    try:
        shutil.copymode(probe, path)
    finally:
        probe.unlink()


def check_replaceable(target: Path, manifest: str) -> None:
    """Refuse a ``target`` that ``replace_folder`` must not remove: anything there but an empty folder or a folder
    holding ``manifest`` (the file faim writes last into what it writes), so that a mistyped output path never
    deletes a user's files.

    Raises:
        NotADirectoryError: When ``target`` is a file or lies inside one (``check_folder_path``).
        FileExistsError: Naming ``target`` and ``manifest``.
    """
    check_folder_path(target)
    if not target.exists() and not target.is_symlink():
        return
    if target.is_dir() and not target.is_symlink() and ((target / manifest).is_file() or not any(target.iterdir())):
        return
    raise FileExistsError(
        f"{target}: exists and is not one faim wrote (no {manifest} in it); nothing was written or removed, "
        "name a new or empty directory"
    )


def replace_folder(staging: Path, target: Path) -> None:
    """Put the written folder ``staging`` in the place of ``target`` (removed first if it exists; see
    ``check_replaceable``)."""
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)

"""The sha256 listing of a directory's files that saved models and exported models carry, and its check on load:
a modified or missing file fails with a message naming it. Needs nothing beyond the standard library."""

from __future__ import annotations

from pathlib import Path

from faim.weights import sha256_file


def file_digests(root: Path) -> dict[str, str]:
    """Relative path → sha256 of every file under ``root``, sorted by path."""
    return {str(path.relative_to(root)): sha256_file(path) for path in sorted(root.rglob("*")) if path.is_file()}


def check_digests(root: Path, files: dict[str, str], listing: str, error: type[Exception]) -> None:
    """Raise ``error`` naming the first file of ``files`` (relative path → sha256, as ``listing`` under ``root``
    lists them) that is missing or whose sha256 differs."""
    for relative, expected in files.items():
        path = root / relative
        if not path.is_file():
            raise error(f"{path}: listed in {listing} but missing")
        if sha256_file(path) != expected:
            raise error(f"{path}: sha256 does not match {listing}; the file was modified or corrupted")

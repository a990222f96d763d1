"""``faim cache list|prune`` on a cache the training cache code wrote: what it prints, removes and exits with."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from faim.cli.cache_cmd import entry_line, size_text
from faim.cli.main import main
from faim.training.cache_entries import read_cache


def files(folder: Path) -> dict[str, int]:
    """Each file's name and modification time in ns."""
    return {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}


def test_list_gives_a_line_per_encoder_and_a_total(embedding_cache: Path, capsys) -> None:
    assert main(["cache", "list", "--cache-dir", str(embedding_cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"embedding cache {embedding_cache}:"
    assert lines[1].split() == ["last", "used", "size", "embeddings", "files", "identity", "encoder"]
    size = size_text(read_cache(embedding_cache).size)
    assert sorted(line.split("text: ")[1].split(",")[0] for line in lines[2:4]) == [
        "tiny_text(dim=16",
        "tiny_text(dim=8",
    ]
    assert all(line.split()[4:6] == ["8", "2"] for line in lines[2:4])  # embeddings, files
    assert lines[4:] == [f"total: 2 encoders, 16 embeddings, {size}"]


def test_prune_without_older_than_or_all_is_refused_and_removes_nothing(embedding_cache: Path, capsys) -> None:
    before = files(embedding_cache)
    assert main(["cache", "prune", "--cache-dir", str(embedding_cache)]) == 2
    assert "faim cache: error: say what to remove: --older-than DAYS" in capsys.readouterr().err
    assert files(embedding_cache) == before


def test_a_dry_run_says_what_it_would_free_and_removes_nothing(embedding_cache: Path, capsys) -> None:
    before = files(embedding_cache)
    assert main(["cache", "prune", "--all", "--dry-run", "--cache-dir", str(embedding_cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[:2]] == [["would", "remove"]] * 2
    size = size_text(read_cache(embedding_cache).size)
    assert lines[2:] == [f"would free {size} of {embedding_cache} (dry run: nothing removed)"]
    assert files(embedding_cache) == before


def test_prune_older_than_removes_the_encoders_not_used_since_and_says_the_space_freed(
    embedding_cache: Path, capsys
) -> None:
    old, recent = read_cache(embedding_cache).entries
    long_ago = time.time() - 40 * 86400
    for file in old.files:
        os.utime(file.path, (long_ago, long_ago))
    assert main(["cache", "prune", "--older-than", "30", "--cache-dir", str(embedding_cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("removed ") and lines[0].endswith(old.name)
    assert lines[1] == f"freed {size_text(old.size)} of {embedding_cache}"
    assert [entry.identity for entry in read_cache(embedding_cache).entries] == [recent.identity]
    assert main(["cache", "prune", "--older-than", "30", "--cache-dir", str(embedding_cache)]) == 0
    assert capsys.readouterr().out == f"nothing to remove from {embedding_cache}\n"


@pytest.mark.parametrize("action", [["list"], ["prune", "--all"]])
def test_a_cache_folder_that_is_not_there_is_an_error_naming_it(action: list[str], tmp_path: Path, capsys) -> None:
    assert main(["cache", *action, "--cache-dir", str(tmp_path / "none")]) == 2
    assert f"faim cache: error: no embedding cache at {tmp_path / 'none'}: the folder does not exist" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_older_than_takes_a_number_of_days(value: str, tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["cache", "prune", "--older-than", value, "--cache-dir", str(tmp_path)])
    assert exit.value.code == 2
    assert "DAYS is a number of days, 0 or more" in capsys.readouterr().err


def test_listing_the_cache_loads_no_torch(embedding_cache: Path) -> None:
    listing = ["cache", "list", "--cache-dir", str(embedding_cache)]
    code = f"import sys\nfrom faim.cli.main import main\nmain({listing!r})\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "False"


def test_sizes_read_as_people_read_them() -> None:
    sizes = [size_text(n) for n in (512, 1536, 3 * 2**20, int(1.9 * 2**30), 5 * 2**40)]
    assert sizes == ["512 B", "1.5 KiB", "3.0 MiB", "1.9 GiB", "5.0 TiB"]


def test_prune_names_a_file_it_could_not_remove_removes_the_rest_and_exits_1(
    embedding_cache: Path, capsys, unlink_refused: Callable[[Path], None]
) -> None:
    contents = read_cache(embedding_cache)
    refused = contents.entries[0].files[0].path
    unlink_refused(refused)
    assert main(["cache", "prune", "--all", "--cache-dir", str(embedding_cache)]) == 1
    lines = capsys.readouterr().out.splitlines()
    entries = contents.entries
    assert lines[:2] == [f"removed {entry_line(entries[1])}", f"removed part of {entry_line(entries[0])}"]
    assert lines[2] == f"could not remove {refused.name}: Permission denied"
    assert lines[-1] == f"freed {size_text(contents.size - refused.stat().st_size)} of {embedding_cache}"
    assert list(embedding_cache.iterdir()) == [refused]

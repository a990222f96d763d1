"""Writing an export all or nothing, in the place of an earlier export only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from faim.artifact_manifest import EXPORT_MANIFEST
from faim.export.staging import staged, write_manifest
from faim.folders import check_replaceable, staging_stem
from faim.notices import FaimWarning


def test_an_export_replaces_an_earlier_one_and_refuses_other_files_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "export"
    for version in ("1", "2"):
        with staged(target) as staging:
            (staging / "graph.onnx").write_text(version, encoding="utf-8")
            write_manifest(staging, {"format": 1})
    assert (target / "graph.onnx").read_text(encoding="utf-8") == "2"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(FileExistsError, match="is not one faim wrote"), staged(mine):
        pass
    assert [path.name for path in mine.iterdir()] == ["notes.txt"]
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".faim-export-")]


def test_an_earlier_export_holding_files_it_does_not_list_is_not_replaced_and_keeps_them(tmp_path: Path) -> None:
    target = tmp_path / "export"
    with staged(target) as staging:
        (staging / "graph.onnx").write_text("1", encoding="utf-8")
        write_manifest(staging, {"format": 1})
    (target / "scores").mkdir()  # a scoring run's output written into the export, and a note beside it
    (target / "scores" / "part-0.parquet").write_text("scored", encoding="utf-8")
    (target / "NOTES.md").write_text("keep", encoding="utf-8")
    refusal = (
        f"{target}: holds files its faim-export.json does not list (NOTES.md, scores/part-0.parquet); nothing was "
        "written or removed, move them out or name a new or empty directory"
    )
    for check in (lambda: check_replaceable(target, EXPORT_MANIFEST), lambda: staged(target).__enter__()):
        with pytest.raises(FileExistsError) as refused:
            check()
        assert str(refused.value) == refusal
    assert (target / "scores" / "part-0.parquet").read_text(encoding="utf-8") == "scored"
    assert (target / "graph.onnx").read_text(encoding="utf-8") == "1"
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".faim-export-")]


def test_a_failed_export_leaves_the_earlier_one_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "export"
    with staged(target) as staging:
        write_manifest(staging, {"format": 1})
    before = (target / "faim-export.json").read_bytes()
    with pytest.raises(RuntimeError), staged(target) as staging:
        (staging / "half.onnx").write_text("x", encoding="utf-8")
        raise RuntimeError("tracing failed")
    assert [path.name for path in target.iterdir()] == ["faim-export.json"]
    assert (target / "faim-export.json").read_bytes() == before


KILLED = """
import os, signal, sys
from pathlib import Path
from faim.export.staging import staged
with staged(Path(sys.argv[1])) as staging:
    (staging / "encoder.onnx").write_bytes(b"half")
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(os.name == "nt", reason="no kill -9, and whether a process runs is not told there")
def test_the_next_export_removes_the_folder_an_export_killed_part_way_left_and_nothing_else(tmp_path: Path) -> None:
    target, other = tmp_path / "export", tmp_path / "other"
    for killed in (target, other):
        assert subprocess.run([sys.executable, "-c", KILLED, str(killed)]).returncode == -9
    left = {path.name for path in tmp_path.iterdir()}
    assert len(left) == 2 and all(name.startswith(".faim-export-") for name in left)
    earlier = tmp_path / ".faim-export-0123456789abcdef"  # named as earlier versions named them: whose, unknown
    earlier.mkdir()
    with pytest.warns(FaimWarning, match=rf"removed {tmp_path}/.faim-export-.*, left unfinished by process \d+, stop"):
        with staged(target) as staging:
            assert len([path for path in tmp_path.iterdir() if path.name.startswith(".faim-export-")]) == 3
            write_manifest(staging, {"format": 1})
    kept = [path.name for path in tmp_path.iterdir() if path not in (target, earlier)]
    assert len(kept) == 1 and kept[0].startswith(staging_stem(other, ".faim-export-"))
    assert [path.name for path in target.iterdir()] == ["faim-export.json"]

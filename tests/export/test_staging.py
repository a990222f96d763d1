"""Writing an export all or nothing, in the place of an earlier export only."""

from __future__ import annotations

from pathlib import Path

import pytest

from faim.export.staging import staged, write_manifest


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

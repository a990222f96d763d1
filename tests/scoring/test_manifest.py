"""A scoring run's output folder holds only what scoring writes there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faim.scoring.engine import score_dump


def test_a_folder_holding_other_files_is_refused_and_left_as_it_was(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text(json.dumps({"id": "1", "text": "a post"}) + "\n", encoding="utf-8")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"mine: holds files that are not a scoring run's \(notes.txt\)"):
        score_dump(tiny_model_dir, dump, out, workers=1, progress=False)
    assert sorted(path.name for path in out.iterdir()) == ["notes.txt"]
    (out / "notes.txt").unlink()
    assert score_dump(tiny_model_dir, dump, out, workers=1, progress=False).rows == 1  # an empty folder is fine

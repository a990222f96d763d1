"""Replacing a folder faim wrote, and never one it did not; the folder written first is made as mkdir would."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from faim.folders import check_replaceable, staging_folder

MANIFEST = "faim.json"


def test_a_folder_or_file_faim_did_not_write_is_refused_by_name(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(FileExistsError, match=rf"{mine}: exists and is not one faim wrote \(no faim.json"):
        check_replaceable(mine, MANIFEST)
    single = tmp_path / "scores.csv"
    single.write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError, match="scores.csv"):
        check_replaceable(single, MANIFEST)
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep"


def test_an_absent_or_empty_folder_or_one_holding_the_manifest_may_be_replaced(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / MANIFEST).write_text("{}", encoding="utf-8")
    for target in (tmp_path / "absent", tmp_path / "empty", ours):
        check_replaceable(target, MANIFEST)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_staging_folder_has_the_permissions_the_umask_gives_a_new_folder(umask: int, tmp_path: Path) -> None:
    before = os.umask(umask)
    try:
        staging = staging_folder(tmp_path / "model", ".faim-")
    finally:
        os.umask(before)
    assert staging.parent == tmp_path and staging.name.startswith(".faim-") and not any(staging.iterdir())
    assert stat.S_IMODE(staging.stat().st_mode) == 0o777 & ~umask

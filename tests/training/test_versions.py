"""Run numbering in an output directory, and which checkpoint ``--resume`` continues."""

from __future__ import annotations

from pathlib import Path

import pytest

from faim.training.versions import latest_checkpoint, next_version


def make(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def test_the_first_run_is_version_0(tmp_path: Path) -> None:
    assert next_version(tmp_path / "run") == 0


def test_the_next_run_follows_the_highest_number_of_any_kind(tmp_path: Path) -> None:
    make(tmp_path / "checkpoints" / "version_1")
    make(tmp_path / "logs" / "version_4")  # a resumed run logs under a new number
    make(tmp_path / "tensorboard" / "version_2")
    make(tmp_path / "logs" / "version_x")
    (tmp_path / "logs" / "version_9").write_text("a file, not a run")
    assert next_version(tmp_path) == 5


def test_resume_takes_the_latest_run_that_saved_a_last_checkpoint(tmp_path: Path) -> None:
    for n in (0, 2, 10):
        (make(tmp_path / "checkpoints" / f"version_{n}") / "last.ckpt").write_bytes(b"")
    make(tmp_path / "checkpoints" / "version_11")  # stopped before its first checkpoint
    assert latest_checkpoint(tmp_path, "--resume") == tmp_path / "checkpoints" / "version_10" / "last.ckpt"


def test_resume_without_any_saved_run_names_where_it_looked(tmp_path: Path) -> None:
    make(tmp_path / "checkpoints" / "version_0")
    with pytest.raises(
        FileNotFoundError, match=r"^--resume: no checkpoint to resume from: no run saved .*/checkpoints/"
    ):
        latest_checkpoint(tmp_path, "--resume")

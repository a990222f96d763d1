"""Numbered runs in one output directory: each run's checkpoints, CSV and TensorBoard logs go to ``version_N``.

Training again into the same ``train.output_dir`` starts a new number, so no run overwrites or renames the
checkpoints of another (Lightning would otherwise version clashing names as ``last-v1.ckpt``, ``last-v2.ckpt``,
and ``--resume`` could not tell which is the latest run's).
"""

from __future__ import annotations

from pathlib import Path

VERSIONED = ("checkpoints", "logs", "tensorboard")
PREFIX = "version_"


def run_numbers(folder: Path) -> list[int]:
    """The ``N`` of every ``version_N`` folder in ``folder`` (none when it does not exist)."""
    names = (path.name.removeprefix(PREFIX) for path in folder.glob(f"{PREFIX}*") if path.is_dir())
    return [int(name) for name in names if name.isdigit()]


def next_version(output_dir: Path) -> int:
    """One past the highest run number under any of ``checkpoints/``, ``logs/`` and ``tensorboard/``: a number
    no earlier run used for anything."""
    return 1 + max((n for sub in VERSIONED for n in run_numbers(output_dir / sub)), default=-1)


def latest_checkpoint(output_dir: Path, resumed_by: str) -> Path:
    """``checkpoints/version_N/last.ckpt`` of the latest run that saved one, which ``--resume`` continues.

    Raises:
        FileNotFoundError: When no run in ``output_dir`` saved a checkpoint, beginning with ``resumed_by``, what
            asked to resume (``resume=True`` of ``faim.train``, ``faim train``'s ``--resume``).
    """
    folder = output_dir / "checkpoints"
    saved = [n for n in run_numbers(folder) if (folder / f"{PREFIX}{n}" / "last.ckpt").is_file()]
    if not saved:
        raise FileNotFoundError(
            f"{resumed_by}: no checkpoint to resume from: no run saved {folder}/version_N/last.ckpt"
        )
    return folder / f"{PREFIX}{max(saved)}" / "last.ckpt"

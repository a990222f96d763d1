"""The recipe saved beside a run's checkpoints, and what ``--resume`` lets change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from conftest import tiny_recipe

from faim.notices import FaimWarning
from faim.recipe import as_recipe
from faim.training.run_recipe import check_resumable, epochs_to_train, save_run_recipe


@pytest.fixture
def saved(tmp_path: Path) -> tuple[dict, Path]:
    """A tiny recipe and the checkpoint folder it was saved to."""
    recipe = tiny_recipe({"train": tmp_path / "train.jsonl", "validation": tmp_path / "val.jsonl"}, tmp_path / "run")
    folder = tmp_path / "run" / "checkpoints" / "version_0"
    save_run_recipe(as_recipe(recipe), folder)
    return recipe, folder


def test_the_same_recipe_resumes(saved: tuple[dict, Path]) -> None:
    recipe, folder = saved
    check_resumable(as_recipe(recipe), folder, "--resume")


def test_a_resumed_run_may_train_longer_elsewhere_and_evaluate_differently(saved: tuple[dict, Path]) -> None:
    recipe, folder = saved
    overrides = ["train.max_epochs=9", "train.num_workers=2", "train.precision=bf16-mixed", "eval.split=train"]
    overrides.append(f"train.output_dir=./{os.path.relpath(recipe['train']['output_dir'])}")  # the same folder
    check_resumable(as_recipe(recipe, overrides), folder, "--resume")


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("train.lr=0.1", "train.lr: 0.003 -> 0.1"),  # the checkpoint's optimizer state would set it back
        ("train.patience=9", "train.patience: 3 -> 9"),  # so would the early-stopping state
        ("model.heads.harmful.hidden_dim=64", "model.heads.harmful.hidden_dim: 32 -> 64"),  # weights would not fit
        ("data.columns.meta=[]", "data.columns.meta: ['topic'] -> []"),
    ],
)
def test_a_resumed_run_may_not_change_what_the_checkpoint_restores(
    saved: tuple[dict, Path], override: str, named: str
) -> None:
    recipe, folder = saved
    with pytest.raises(ValueError, match="^--resume: the recipe differs") as error:
        check_resumable(as_recipe(recipe, [override]), folder, "--resume")
    assert named in str(error.value) and str(folder / "recipe.yaml") in str(error.value)


def test_a_run_saved_without_its_recipe_resumes_with_a_warning(saved: tuple[dict, Path]) -> None:
    recipe, folder = saved
    (folder / "recipe.yaml").unlink()
    with pytest.warns(FaimWarning, match="^resume=True: .*recipe.yaml is missing, so the recipe cannot be checked"):
        check_resumable(as_recipe(recipe, ["train.lr=0.1"]), folder, "resume=True")


def test_the_epochs_a_checkpoint_trained_are_checked_where_it_records_them(tmp_path: Path) -> None:
    torch.save({"epoch": 2, "global_step": 6}, tmp_path / "last.ckpt")
    assert epochs_to_train(tmp_path / "last.ckpt", 5) == 5
    with pytest.raises(ValueError, match=r"last.ckpt has trained 3 epochs, more than train.max_epochs 2"):
        epochs_to_train(tmp_path / "last.ckpt", 2)
    torch.save({"global_step": 6}, tmp_path / "other.ckpt")  # no epoch recorded: Lightning reads it whole
    assert epochs_to_train(tmp_path / "other.ckpt", 1) == 1
    torch.save({"epoch": 2, "state": Path("x")}, tmp_path / "objects.ckpt")  # more than tensors and numbers
    assert epochs_to_train(tmp_path / "objects.ckpt", 1) == 1


@pytest.mark.parametrize(
    ("stopping", "trained"),
    [
        ({"stopped_epoch": 2, "stopping_reason": 3, "stopping_reason_message": "val/loss did not improve"}, "3 epochs"),
        ({"stopped_epoch": 0, "stopping_reason": 4, "stopping_reason_message": "val/loss is nan"}, "1 epoch"),  # first
        ({"stopped_epoch": 2}, "3 epochs"),  # as Lightning before 2.5 records it
    ],
)
def test_a_run_early_stopping_ended_trains_no_more_when_resumed(
    tmp_path: Path, capsys, stopping: dict, trained: str
) -> None:
    callbacks = {"EarlyStopping{'monitor': 'val/loss', 'mode': 'min'}": {"wait_count": 1, "patience": 0} | stopping}
    torch.save({"epoch": stopping["stopped_epoch"], "callbacks": callbacks}, tmp_path / "last.ckpt")
    assert epochs_to_train(tmp_path / "last.ckpt", 10) == stopping["stopped_epoch"] + 1
    said = capsys.readouterr().out
    assert f"early stopping ended the run of {tmp_path / 'last.ckpt'} after {trained} (" in said
    assert stopping.get("stopping_reason_message", "stopped at epoch 2") in said
    running = {key: {"wait_count": 0, "patience": 3, "stopped_epoch": 0, "stopping_reason": 0} for key in callbacks}
    torch.save({"epoch": 2, "callbacks": running}, tmp_path / "last.ckpt")
    assert epochs_to_train(tmp_path / "last.ckpt", 10) == 10
